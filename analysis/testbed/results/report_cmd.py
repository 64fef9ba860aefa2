"""`./testbed report RUN_DIR [--out DIR] [--noise-floor RUN_DIR] [--publish]`: render a
run's markdown report (report.md + figures/). --publish also stores the run's data,
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, help="results/<experiment>/<run-id>")
    parser.add_argument("--out", type=Path, help="output directory (default: the run directory)")
    parser.add_argument("--noise-floor", type=Path, help="an A/A (noise-floor) run whose spread sets the threshold")
    parser.add_argument("--publish", action="store_true", help="store compact data in reports/<exp>/<run-id>/ and render there")


# Fields that describe one machine's paths or repeat what other fields say; a published
# run keeps everything a report needs and stays small enough to commit.
DROP = ("command", "stderr_tail")


def compact(run_dir: Path, dest: Path, noise_floor: Path | None = None) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        cell = json.loads(line)
        if cell.get("status") == "ok":
            cell = {k: v for k, v in cell.items() if k not in DROP}
        lines.append(json.dumps(cell, sort_keys=True, separators=(",", ":")))
    (dest / "results.jsonl").write_text("\n".join(lines) + "\n")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    if noise_floor is not None:
        # Stored relative to the published run, so regenerate finds it in any clone.
        manifest["noise_floor_run"] = os.path.relpath(noise_floor.resolve(), dest.resolve())
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    if (run_dir / "ceiling.json").is_file():
        shutil.copyfile(run_dir / "ceiling.json", dest / "ceiling.json")


def main(args) -> int:
    from testbed.results import load, report
    run_dir = args.run_dir
    try:
        manifest = load.read_manifest(run_dir)
        out = args.out
        noise_floor = args.noise_floor.resolve() if args.noise_floor else None
        if args.publish:
            exp = manifest.get("experiment")
            exp = exp.get("name") if isinstance(exp, dict) else exp
            out = paths.REPORTS_DIR / (exp or run_dir.parent.name) / (manifest.get("run_id") or run_dir.name)
            compact(run_dir, out, noise_floor)
            run_dir, noise_floor = out, None  # the published manifest names it now
        path = report.render_run(run_dir, out, noise_floor)
    except (load.RunDirError, FileNotFoundError) as exc:
        print(f"testbed report: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0
