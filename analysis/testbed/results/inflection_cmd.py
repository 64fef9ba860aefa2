"""`./testbed inflection PATH`: where each configuration's gain over its reference
changes sign, for a run directory or a published markdown report."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testbed.records.run_dir import RunDir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        type=Path,
        help="a run directory (manifest.json + results.jsonl) or a published .md/.txt report",
    )
    parser.add_argument(
        "--metric", default="throughput_msgs", help="metric to follow (default throughput_msgs)"
    )


def analyse(path: Path, metric: str):
    from testbed.results import compare, inflection, load, published
    if path.is_dir():
        run = RunDir.open(path)
        cmp = compare.compare_run(load.load_run(run), run.manifest)
    else:
        res = published.import_report(path)
        primary = [t for t in ("diff-table", "mean-std", "results-block") if t in set(res.frame["table"])]
        cmp = compare.compare(res.frame[res.frame["table"].isin(primary[:1] or list(res.frame["table"]))])
    return inflection.inflections(cmp, metrics=(metric,)), inflection.best_config(cmp, metric)


def main(args) -> int:
    from testbed.records import schema
    from testbed.results import inflection, load, published
    if not args.path.exists():
        print(
            f"testbed inflection: {args.path}: no such file or directory (give a run directory or a report)",
            file=sys.stderr,
        )
        return 2
    try:
        schema.metric(args.metric)
        infl, best = analyse(args.path, args.metric)
    except (KeyError, ValueError, load.RunDirError, published.ImportError_) as exc:
        print(f"testbed inflection: {exc}", file=sys.stderr)
        return 2
    if infl.empty:
        print("no pairs to compare (needs a reference library or a no-override configuration)")
        return 0
    cols = ["kind", "pattern", "transport", "config", "library", "reference", "status", "flip_from", "edge",
            "flip_to", "crossover"]
    print(infl[cols].to_string(index=False))
    print()
    for s in infl["sentence"]:
        print("-", s)
    if not best.empty:
        print("\nsize-adaptive policy:")
        for s in inflection.policy_sentence(best):
            print("-", s)
    return 0
