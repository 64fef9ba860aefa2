"""Which runs there are and which of them answers: the one "published runs" rule.

A published run is a run directory under reports/<experiment>/<run-id>/ (reports/
published/ holds imported seed reports, not runs). Run ids start with their UTC start
time (YYYYMMDDTHHMMSSZ-xxxx), so an experiment's newest published run is its current
answer and the others are superseded: the log behind it. The current run is also
stale when it predates its experiment toml (records/freshness.py names what changed).

The fault runner's published runs (faults, faults-soak) are directories of their own
kind (records/fault_run_dir.py: no manifest.json, a faults-run.json beside their
report.md); the same newest-wins rule picks the current one (fault_runs).
"""
from __future__ import annotations

from pathlib import Path

from testbed.records import fault_run_dir, run_dir

SEEDS = "published"        # reports/published/: imported seed reports, not runs
CURRENT, SUPERSEDED = "current", "superseded"


def published(reports_dir: Path) -> list[Path]:
    """Every published run directory with records under reports_dir, in name order."""
    return [p for p in run_dir.runs_under(reports_dir, depth=2) if p.parent.name != SEEDS]


def of_experiment(root: Path, experiment: str) -> list[Path]:
    """The runs of one experiment under root (results/ or reports/), oldest first."""
    return run_dir.runs_under(Path(root) / experiment, depth=1)


def by_experiment(runs: list[Path]) -> dict[str, list[Path]]:
    """Runs per experiment (the folder above each run), newest first: the first is the
    current run, the rest are superseded."""
    out: dict[str, list[Path]] = {}
    for run in runs:
        out.setdefault(run.parent.name, []).append(run)
    return {name: sorted(found, key=lambda p: p.name, reverse=True) for name, found in sorted(out.items())}


def current(runs: list[Path]) -> list[Path]:
    """Each experiment's current run."""
    return [found[0] for found in by_experiment(runs).values()]


def status(run: Path, runs: list[Path]) -> str:
    """CURRENT or SUPERSEDED among `runs` (which must hold `run`)."""
    found = by_experiment(runs).get(run.parent.name, [])
    if run not in found:
        raise ValueError(f"{run}: not among the runs given")
    return CURRENT if found[0] == run else SUPERSEDED


def stale(run: Path, experiments_dir: Path, settings: dict | None = None):
    """freshness.judge of a run (a Freshness: stale or not, and why)."""
    from testbed.records import freshness
    return freshness.judge(run, None, experiments_dir, settings)


def fault_runs(reports_dir: Path, experiment: str) -> list[Path]:
    """The fault runner's published runs of `experiment` (a faults-run.json and a
    report.md), oldest first: the last is current."""
    return [run.path for run in fault_run_dir.published_under(reports_dir, experiment)]


def fault_report(run: Path) -> Path:
    """The report.md of a fault runner's published run."""
    return fault_run_dir.FaultRunDir.at(run).report_path()
