"""The writing side of a run directory (docs/data-formats.md §4): what the sweep does
to one while it runs, resumes, finishes or is merged. records/run_dir.py is the reading
side (RunDir); between them they are the only code that knows a run directory's file
names (tests/test_run_dir_owner.py).

A side file is named by its kind (SIDE_FILES); its lines are appended fsynced and read
back by store.parse_lines' one rule for a torn last line.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from testbed.records import store
from testbed.records.store import ResultStore, done_keys  # noqa: F401  (the sweep's names for them)

# kind -> file: the run's side journals, one JSON line per event.
SIDE_FILES = {
    "speed": store.SPEED_NAME,              # sweep/speedref.py: the host speed reference per pair
    "calibration": store.CALIBRATION_NAME,  # sweep/calibrate.py: message counts per block
    "work": store.WORK_NAME,                # sweep/work.py: work per message per cell
    "ceiling": store.CEILING_RUN_NAME,      # sweep/ceiling.py: the probe inside the run
    "slices": store.SLICES_NAME,            # records/slices.py: the slices of every arms run
    "counting": store.COUNTING_NAME,        # sweep/counting.py: counting runs' records, never timed
}


def side_file_name(kind: str) -> str:
    """The file a kind of side journal is kept in (what a manifest names)."""
    return SIDE_FILES[kind]


def append(run_dir: Path, kind: str, obj: dict) -> None:
    """One line onto a side journal, fsynced (store.append_line)."""
    store.append_line(Path(run_dir) / SIDE_FILES[kind], obj)


def lines(run_dir: Path, kind: str) -> list[dict]:
    """Every complete line of a side journal ([] when the run has none yet)."""
    return store.read_lines(Path(run_dir) / SIDE_FILES[kind])


def is_run(path: Path) -> bool:
    """A run directory (it has a manifest), records or not yet."""
    return (Path(path) / store.MANIFEST_NAME).is_file()


def manifests_under(root: Path, depth: int) -> list[Path]:
    """The run directories `depth` levels under root that have a manifest."""
    pattern = "/".join(["*"] * depth) + "/" + store.MANIFEST_NAME
    return sorted(p.parent for p in Path(root).glob(pattern))


# --- the results journal -------------------------------------------------------------

def records(run_dir: Path) -> tuple[list[dict], str]:
    """The journal's records so far and its torn last line ("" if none)."""
    return store.read_records(Path(run_dir) / store.RESULTS_NAME)


def any_records(run_dir: Path) -> tuple[list[dict], str]:
    """The records whether the run is live (journal) or finished (compacted)."""
    return store.read_run(Path(run_dir))


def results(run_dir: Path) -> store.ResultStore:
    """The journal to append finished cells to (a context manager)."""
    return store.ResultStore(Path(run_dir))


def prepare_resume(run_dir: Path) -> list[str]:
    """Make a run directory ready to append to again: a compacted run back to its
    journal, a torn last line cut off (kept in torn-lines.txt). Returns what was done,
    one sentence each, for the caller to warn about."""
    run_dir = Path(run_dir)
    done = []
    if store.reopen(run_dir):
        done.append(f"{run_dir}: reopened ({store.PARQUET_NAME} back to {store.RESULTS_NAME})")
    if store.repair(run_dir / store.RESULTS_NAME):
        done.append(f"dropped a torn last line (kept in {run_dir / store.TORN_NAME})")
    return done


def finish(run_dir: Path) -> bool:
    """A run that finished: its journal compacted when worth it (store.compact_finished)."""
    return store.compact_finished(Path(run_dir))


# --- other files ---------------------------------------------------------------------

def toml_copy(run_dir: Path) -> Path:
    """Where a run keeps the experiment toml it ran (what a resume and freshness read)."""
    return Path(run_dir) / store.TOML_COPY_NAME


def keep_toml(run_dir: Path, source: Path) -> None:
    shutil.copyfile(source, toml_copy(run_dir))


def flamegraphs_dir(run_dir: Path) -> Path:
    return Path(run_dir) / store.FLAMEGRAPHS_DIR


SLURM_RECORD = "slurm.json"   # a Slurm sweep's directory (<run-id>-slurm/): job id, tasks, options


def slurm_record(slurm_dir: Path) -> Path:
    """The record `./testbed run --slurm` keeps in its directory (data-formats §4)."""
    return Path(slurm_dir) / SLURM_RECORD
