"""Work per message: the N/2N difference, the callgrind reader, the method detection,
every cell measured on its own runs (a counter whose figures depend on the configuration
catches a copy), and the real thing (libzmq's bench under callgrind, through the runner)."""
from __future__ import annotations

import json
import shutil

import pytest

from test_sweep_support import env_for, make_prebuilt, only_run_dir, run_testbed, write_experiment
from testbed.sweep import work


def run_record(count: int, instructions: float | None, cycles: float | None, status="ok") -> dict:
    events = {"instructions": {"value": instructions}, "cycles": {"value": cycles}}
    return {"count": count, "status": status, "failure": "" if status == "ok" else "boom",
            "wall_seconds": 0.5, "perf": {"available": True, "events": events}}


class FakeCell:
    group, cell_id, library = "g", "c", "libzmq-4.3.5"


def test_per_message_is_the_difference_of_the_pair_over_n():
    rec = work.record(FakeCell(), "perf", 1000, run_record(1000, 5_000_000, 9_000_000),
                      run_record(2000, 7_500_000, 13_000_000))
    assert rec["instructions_per_msg"] == 2500.0 and rec["cycles_per_msg"] == 4000.0
    assert rec["status"] == "ok" and [r["count"] for r in rec["runs"]] == [1000, 2000]
    under_callgrind = work.record(FakeCell(), "callgrind", 1000, run_record(1000, 5e6, None),
                                  run_record(2000, 6e6, None))
    assert under_callgrind["instructions_per_msg"] == 1000.0 and under_callgrind["cycles_per_msg"] is None
    failed = work.record(FakeCell(), "perf", 1000, run_record(1000, 5e6, 9e6),
                         run_record(2000, None, None, "failed"))
    assert failed["status"] == "failed" and failed["instructions_per_msg"] is None
    assert "2000 messages" in failed["failure"]


def test_callgrind_totals_are_read_and_a_missing_file_is_said(tmp_path):
    out = tmp_path / "cg.out"
    out.write_text("version: 1\ncmd: bench\nevents: Ir\nsummary: 9333498\ntotals: 9333498\n")
    setup = work.CallgrindSetup()
    expected = {"available": True, "events": {"instructions": {"value": 9333498.0, "unit": ""}}}
    assert setup.read(out) == expected
    assert "missing" in setup.read(tmp_path / "nope")["reason"]
    assert setup.prefix(out)[:2] == ["valgrind", "--tool=callgrind"]


def test_detection_falls_back_to_callgrind_and_says_why():
    off = work.detect(enabled=False)
    assert off.method is None and "work_per_message = false" in off.reason
    setup = work.detect(perf="no-such-perf")
    if shutil.which("valgrind") and work.valgrind_works():
        assert setup.method == "callgrind" and "perf not found" in setup.reason
        assert "no cycles" in setup.reason
    else:
        assert setup.method is None and "valgrind" in setup.reason


WORK_ON = 'work_per_message = true\n[[perf.work]]\nconfig = "baseline"'
needs_valgrind = pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind not installed")


@pytest.mark.slow
@needs_valgrind
def test_libzmq_bench_under_callgrind_gives_a_plausible_instruction_count(tmp_path):
    from testbed.sweep import execute, perf
    from testbed.sweep.config import load
    from testbed.sweep.plan import expand
    from testbed.toolchain.libraries import ensure_built
    lib = ensure_built("libzmq-4.3.5")
    exp = load(write_experiment(tmp_path), "default", None)
    cell = next(c for c in expand(exp) if c.library == "libzmq-4.3.5" and c.pattern == "PAIR"
                and c.msg_size == 64 and c.config == "baseline")
    rt = execute.Runtime(exp, work.CallgrindSetup(), tmp_path, [0], local=execute.LocalHost())
    att = execute.Attempt(cell, -2, lib.bench_binary("PAIR"), "", "work")
    small, large = (execute.run_cell(att, rt, execute.Counts(n, 1, mode="thr")) for n in (2000, 4000))
    assert small["status"] == large["status"] == "ok", (small["failure"], large["failure"])
    rec = work.record(cell, "callgrind", 2000, small, large)
    # a 64 B PAIR message costs libzmq a few thousand instructions end to end (send + receive)
    assert 300 < rec["instructions_per_msg"] < 100_000, rec
    instructions = [r["perf"]["events"]["instructions"]["value"] for r in (small, large)]
    assert instructions[1] > instructions[0]
    assert perf  # imported for the Runtime's type only


@pytest.mark.slow
@needs_valgrind
def test_the_runner_measures_each_alias_on_its_own_runs(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}})
    text = (write_experiment(tmp_path).read_text()
            .replace('use = ["libzmq-4.3.5", "zlink"]\nreference = "libzmq-4.3.5"',
                     'use = ["A", "B"]\nreference = "A"\n[libraries.aliases]\nA = "libzmq-4.3.5"\n'
                     'B = "libzmq-4.3.5"')
            .replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]')
            .replace("sizes = [64, 1024]", "sizes = [64]")
            .replace("work_per_message = false", WORK_ON))
    env = env_for(listing)
    proc = run_testbed(["run", str(write_experiment(tmp_path, text)), "--out", str(tmp_path / "out")], env,
                       timeout=600)
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    recs = {r["library"]: r for r in map(json.loads, (run_dir / "work.jsonl").read_text().splitlines())}
    assert set(recs) == {"A", "B"}  # only the baseline configuration was selected
    assert recs["A"]["method"] in ("perf", "callgrind") and recs["A"]["status"] == "ok"
    assert recs["A"]["instructions_per_msg"] is not None and recs["B"]["instructions_per_msg"] is not None
    assert "same_build_as" not in recs["B"]  # measured, not copied
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["work_per_message"]["method"] == recs["A"]["method"]  # and the manifest says why
    assert ("no cycles" in m["work_per_message"]["reason"]) == (recs["A"]["method"] == "callgrind")


# A stand-in for `perf stat`: runs the bench and "counts" instructions that depend on the
# configuration (ZMQ_ASIO_IN_BATCH_SIZE) and the library (its lib.json name), so a work
# record copied from another cell shows the other cell's figure.
COUNTER = r"""
import json, os, subprocess, sys
out, argv = sys.argv[1], sys.argv[3:]
proc = subprocess.run(argv)
count = int(argv[argv.index("--count") + 1])
per_msg = 100 if os.environ.get("ZMQ_ASIO_IN_BATCH_SIZE") is None else 40
lib = json.load(open(os.path.join(os.path.dirname(argv[0]), "lib.json")))["name"]
per_msg += 7 if lib == "zlink" else 0
figures = {"instructions": {"value": 5000 + count * per_msg}, "cycles": {"value": 9000 + 2 * count * per_msg}}
json.dump(figures, open(out, "w"))
sys.exit(proc.returncode)
"""


class ConfigurationCounter:
    available, reason, events = True, "", ["instructions", "cycles"]
    signals_in_stderr, follows_exec, unsupported = False, True, []

    def prefix(self, out_file):
        import sys
        return [sys.executable, "-c", COUNTER, str(out_file), "--"]

    def read(self, out_file):
        return {"available": True, "events": json.loads(out_file.read_text())}

    def as_manifest(self):
        return {"available": True, "events": self.events}


def test_every_configuration_and_library_gets_its_own_work_measurement(tmp_path, monkeypatch):
    """Two libraries x two configurations, a counter whose figure depends on both: every
    work record holds its own cell's figure. Sharing one measurement per library (as the
    runner did until 2026-12-02, so security-cost's CURVE rows showed NULL's counts)
    gives the 16 KiB cells the baseline's 100 instructions per message: this fails."""
    import argparse

    from testbed.sweep import run_cmd
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    text = (write_experiment(tmp_path).read_text()
            .replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]')
            .replace("sizes = [64, 1024]", "sizes = [64]")
            .replace("repetitions = 2", "repetitions = 1")
            .replace("work_per_message = false", "work_per_message = true"))
    exp = write_experiment(tmp_path, text)
    monkeypatch.setenv("TESTBED_PREBUILT", str(listing))
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(work, "detect", lambda *a, **k: work.WorkSetup("perf", "fake counter",
                                                                       ConfigurationCounter()))
    parser = argparse.ArgumentParser()
    run_cmd.add_arguments(parser)
    assert run_cmd.main(parser.parse_args([str(exp), "--out", str(tmp_path / "out"), "--no-report"])) == 0
    run_dir = only_run_dir(tmp_path / "out")
    recs = [json.loads(ln) for ln in (run_dir / "work.jsonl").read_text().splitlines()]
    results = {r["cell_id"]: r for r in map(json.loads, (run_dir / "results.jsonl").read_text().splitlines())}
    got = {(r["library"], results[r["cell_id"]]["config"]): r["instructions_per_msg"] for r in recs}
    assert got == {("libzmq-4.3.5", "baseline"): 100.0, ("libzmq-4.3.5", "16 KiB"): 40.0,
                   ("zlink", "baseline"): 107.0, ("zlink", "16 KiB"): 47.0}
