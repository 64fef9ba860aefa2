"""`./testbed rejudge RUN_DIR`: re-judge a run from results.jsonl and manifest.json and
report whether every verdict the sweep stopped on comes out the same (exit 1 if not)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, help="a run directory (manifest.json + results.jsonl)")


def main(args) -> int:
    from testbed.records.run_dir import RunDir
    from testbed.results import load, rejudge
    try:
        agreement, cmp = rejudge.rejudge(args.run_dir)
    except (OSError, ValueError, load.RunDirError) as exc:
        print(f"testbed rejudge: {exc}", file=sys.stderr)
        return 2
    manifest = RunDir.open(args.run_dir).manifest_json()
    design = manifest.get("design") or {}
    print(f"{args.run_dir}: per-look confidence {design.get('look_confidence')!r}, "
          f"margin {design.get('margin')!r}"
          + (f", configuration margin {design['config_margin']!r}" if "config_margin" in design else ""))
    planned = int((cmp["verdict"] != "NOT PLANNED").sum())
    print(f"re-judged {len(cmp)} comparisons ({planned} planned); the sweep recorded {agreement.checked} "
          f"verdicts: {agreement.agree} agree, {len(agreement.disagreements)} disagree, "
          f"{len(agreement.missing)} not found")
    for line in agreement.disagreements + agreement.missing:
        print("  " + line)
    if agreement.checked == 0:
        print("the manifest records no verdicts of the sweep (a run without looks): nothing to check against")
        return 1
    return 0 if agreement.ok else 1
