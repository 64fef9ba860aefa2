"""`./testbed report RUN_DIR [--out DIR] [--calibration RUN_DIR] [--publish]`: render a
run's markdown report (report.md + figures/). --calibration names an A/A run whose
false-call rate the report quotes. --publish also stores the run's data,
compacted, under reports/<experiment>/<run-id>/ and renders it there, where
`./testbed regenerate` keeps it current."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from testbed import paths
from testbed.records import store


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
    from testbed.records import columnar
    dest.mkdir(parents=True, exist_ok=True)
    cells = []
    for cell in store.read_run(run_dir)[0]:
        if cell.get("status") == "ok":
            cell = {k: v for k, v in cell.items() if k not in DROP}
        cells.append(json.loads(json.dumps(cell, sort_keys=True)))  # one key order in every copy
    columnar.write(cells, dest / store.PARQUET_NAME)
    (dest / store.RESULTS_NAME).unlink(missing_ok=True)  # an earlier publication's journal
    manifest = json.loads((run_dir / store.MANIFEST_NAME).read_text())
    if calibration is not None:
        # Stored relative to the published run, so regenerate finds it in any clone.
        manifest["noise_floor_run"] = os.path.relpath(calibration.resolve(), dest.resolve())
    (dest / store.MANIFEST_NAME).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    # The host speed reference and its exclusions, the work per message (the report's
    # Work column), the ceiling probe (one file, or one line per batch measured inside
    # the run) and the experiment toml the run ran (what tells a stale run: freshness.py):
    # the report reads each when it is there.
    for name in (store.SPEED_NAME, store.WORK_NAME, store.CEILING_HOST_NAME, store.CEILING_RUN_NAME,
                 store.TOML_COPY_NAME):
        if (run_dir / name).is_file():
            shutil.copyfile(run_dir / name, dest / name)


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
    if (copy / store.MANIFEST_NAME).is_file():
        return copy
    raise CalibrationNotPublished(
        f"--calibration {calibration}: a published report can name only a published A/A run, "
        f"and {copy} does not exist; publish it first (./testbed report {calibration} --publish)")


def main(args) -> int:
    from testbed.records.manifest import ManifestError, RunManifest
    from testbed.results import load, report
    run_dir = args.run_dir
    try:
        manifest = RunManifest.read(load.read_manifest(run_dir), run_dir)
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
