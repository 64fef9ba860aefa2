"""`./testbed report RUN_DIR [--out DIR] [--calibration RUN_DIR] [--publish]`: render a
run's markdown report (report.md + figures/). --calibration names an A/A run whose
false-call rate the report quotes. --publish also stores the run's data,
compacted, under reports/<experiment>/<run-id>/ and renders it there, where
`./testbed regenerate` keeps it current."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from testbed import paths
from testbed.records.run_dir import RunDir, RunDirError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, help="results/<experiment>/<run-id>")
    parser.add_argument("--out", type=Path, help="output directory (default: the run directory)")
    parser.add_argument("--calibration", "--noise-floor", dest="calibration", type=Path,
                        help="an A/A (noise-floor) run whose false-call rate the report quotes")
    parser.add_argument(
        "--publish",
        action="store_true",
        help="store compact data in reports/<exp>/<run-id>/ and render there",
    )


# Fields that describe one machine's paths or repeat what other fields say; a published
# run keeps everything a report needs and stays small enough to commit.
DROP = ("command", "stderr_tail")


def compact(run_dir: Path, dest: Path, calibration: Path | None = None) -> None:
    """Publish run_dir into dest (RunDir.publish): its records without DROP's fields,
    its manifest naming the A/A run it was published with, and the side files the
    report reads (host speed, work per message, ceilings, the experiment toml it ran:
    what tells a stale run, freshness.py)."""
    run = RunDir.open(run_dir)
    cells = []
    for cell in run.raw_records()[0]:
        if cell.get("status") == "ok":
            cell = {k: v for k, v in cell.items() if k not in DROP}
        cells.append(json.loads(json.dumps(cell, sort_keys=True)))  # one key order in every copy
    manifest = json.loads(json.dumps(run.manifest_json()))
    if calibration is not None:
        # Stored relative to the published run, so regenerate finds it in any clone.
        manifest["noise_floor_run"] = os.path.relpath(calibration.resolve(), Path(dest).resolve())
    run.publish(dest, cells, manifest)


class CalibrationNotPublished(ValueError):
    pass


def published_calibration(calibration: Path, reports: Path) -> Path:
    """The A/A run a published report may name: one under `reports`, since that tree is
    all a clone has (results/ is never committed). A run given from results/ is mapped to
    its published copy (same experiment and run id); without one, publishing stops and
    says how to publish the A/A run first."""
    cal, reports = calibration.resolve(), reports.resolve()
    if cal.is_relative_to(reports):
        return cal
    copy = reports / cal.parent.name / cal.name
    try:
        return RunDir.open(copy).path
    except RunDirError:
        pass
    raise CalibrationNotPublished(
        f"--calibration {calibration}: a published report can name only a published A/A run, "
        f"and {copy} does not exist; publish it first (./testbed report {calibration} --publish)")


def main(args) -> int:
    from testbed.records.manifest import ManifestError
    from testbed.results import load, report
    run_dir = args.run_dir
    try:
        manifest = RunDir.open(run_dir).manifest
        out = args.out
        calibration = args.calibration.resolve() if args.calibration else None
        if args.publish:
            out = paths.REPORTS_DIR / manifest.experiment_name / manifest.run_id
            if calibration is not None:
                calibration = published_calibration(calibration, paths.REPORTS_DIR)
            compact(run_dir, out, calibration)
            run_dir, calibration = out, None  # the published manifest names it now
        path = report.render_run(run_dir, out, calibration)
    except (load.RunDirError, ManifestError, FileNotFoundError, CalibrationNotPublished) as exc:
        print(f"testbed report: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0
