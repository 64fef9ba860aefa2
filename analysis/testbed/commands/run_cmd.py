"""`./testbed run EXPERIMENT`: run an experiment's sweep (testbed.sweep.run_cmd), then
render its report (testbed.results.report). The one place that joins the two: the sweep
writes run directories and the analysis reads them, and neither imports the other
(tests/test_layers.py), so the step that needs both lives in the command layer."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testbed.sweep import run_cmd as sweep_run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sweep_run.add_arguments(parser)


def main(args: argparse.Namespace) -> int:
    if _is_faults(args.experiment):  # kinds "faults" / "faults-soak": their own runner
        from testbed.faults import run_cmd as faults_run
        return faults_run.main(args)
    return sweep_run.main(args, on_finished=render_report)


def _is_faults(experiment: str) -> bool:
    from testbed.faults.config import KINDS, kind_of
    from testbed.sweep.config import ExperimentError, experiment_path
    try:
        return kind_of(experiment_path(experiment)) in KINDS
    except ExperimentError:
        return False  # the sweep names the problem


def render_report(run_dir: Path) -> None:
    # Imported here, once the sweep is over: the analysis pulls in pandas and matplotlib,
    # which the sweep itself never needs.
    from testbed.results.report import render_run
    try:
        out = render_run(run_dir)
        print(f"testbed run: report written to {out}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - the run's data is safe even if rendering breaks
        print(f"testbed run: report rendering failed ({type(exc).__name__}: {exc}); "
              f"raw results are in {run_dir}", file=sys.stderr)
