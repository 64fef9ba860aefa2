"""records/ is the only owner of run-directory I/O (issue 43, item 4): no module
outside analysis/testbed/records/ builds a path inside a run directory or names one of
its files (tests/run_dir_scan.py says how that is recognised), and the scan is shown
to fail on modules that do."""
from __future__ import annotations

from pathlib import Path

import run_dir_scan

TESTBED = Path(__file__).resolve().parents[1] / "testbed"

# Modules outside records/ still allowed to reach into a directory of runs, module ->
# why. Empty since the fault runner's directories moved behind records/fault_run_dir.py;
# an entry that is no longer needed fails the test too (remove it).
ALLOWED: dict[str, str] = {}


def test_no_module_outside_records_reaches_into_a_run_directory():
    offending, stale = run_dir_scan.unexpected(run_dir_scan.scan(TESTBED, skip_owner=True), ALLOWED)
    assert not offending, ("these modules build run-directory paths themselves; open the run with "
                           "testbed.records.run_dir.RunDir (or write through records.run_writer; a "
                           f"fault run through records.fault_run_dir): {offending}")
    assert not stale, f"allowed but no longer reaching into run directories (drop them from ALLOWED): {stale}"


def test_an_allow_list_entry_that_outlived_its_reason_fails():
    found = {"results/still.py": ["literal 'results.jsonl'"]}
    allowed = {"results/still.py": "why", "faults/moved.py": "reached in once, no longer does"}
    assert run_dir_scan.unexpected(found, allowed) == ({}, ["faults/moved.py"])
    assert run_dir_scan.unexpected(found, {}) == ({"results/still.py": ["literal 'results.jsonl'"]}, [])


# --- the scan can fail ------------------------------------------------------------------

OFFENDERS = {
    "a literal joined onto a run directory": (
        "from pathlib import Path\n"
        "def read(run_dir):\n"
        "    return (Path(run_dir) / 'results.jsonl').read_text()\n"),
    "a literal opened by string": (
        "def read(run_dir):\n"
        "    return open(run_dir + '/' + 'manifest.json').read()\n"),
    "a literal inside an f-string": (
        "def read(run_dir):\n"
        "    return open(f'{run_dir}/speed.jsonl').read()\n"),
    "records.store imported": (
        "from testbed.records import store\n"
        "def read(run_dir):\n"
        "    return store.read_run(run_dir)\n"),
    "a store constant through a relative import": (
        "from ..records.store import SPEED_NAME\n"),
    "a records constant under another name": (
        "from testbed.records import manifest as m\n"
        "def path(run_dir):\n"
        "    return run_dir / m.FILE_NAME\n"),
    "a sweep alias of a run-dir file": (
        "from testbed.sweep import speedref\n"
        "def path(run_dir):\n"
        "    return run_dir / speedref.FILE_NAME\n"),
    "a run-dir constant imported by name": (
        "from testbed.records.fault_run_dir import MANIFEST_NAME\n"
        "def path(run_dir):\n"
        "    return run_dir / MANIFEST_NAME\n"),
    "a fault run's journal by name": (
        "def read(run_dir):\n"
        "    return (run_dir / 'cells.jsonl').read_text()\n"),
}


def test_the_scan_flags_each_way_of_reaching_into_a_run_directory():
    for what, source in OFFENDERS.items():
        assert run_dir_scan.module_hits(source, "testbed.results"), f"not flagged: {what}"


def test_the_scan_passes_a_module_that_opens_runs_through_records():
    clean = ("from testbed.records.run_dir import RunDir\n"
             "from testbed.records import run_writer\n"
             "from testbed.records.fault_run_dir import FaultRunDir\n"
             "def read(path):\n"
             "    run = RunDir.open(path)\n"
             "    faults = FaultRunDir.open(path)\n"
             "    return (run.cells(), run.manifest, run_writer.lines(path, 'speed'),\n"
             "            faults.manifest(), faults.records())\n")
    assert run_dir_scan.module_hits(clean, "testbed.results") == []


def test_a_synthetic_module_that_opens_a_run_file_fails_the_rule(tmp_path):
    """The rule as the test above applies it, on a package holding one offender: the
    offender is reported, a module in records/ doing the same is not."""
    package = tmp_path / "testbed"
    (package / "results").mkdir(parents=True)
    (package / "records").mkdir()
    (package / "results" / "sneaky.py").write_text(OFFENDERS["a literal joined onto a run directory"])
    (package / "results" / "fine.py").write_text("X = 1\n")
    (package / "records" / "owner.py").write_text(OFFENDERS["a literal joined onto a run directory"])
    found = run_dir_scan.scan(package, skip_owner=True)
    assert list(found) == ["results/sneaky.py"]
    assert found["results/sneaky.py"] == ["literal 'results.jsonl'"]
