"""`./testbed agree TOOLS_RUN BENCH_RUN`: do libzmq's perf programs (a perf-tools run)
and the testbed's bench (a scorecard, split-cores, ... run) call each cell the same
way? Prints a markdown table (testbed.results.agreement); --out writes it to a file."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tools_run", type=Path, help="a perf-tools run directory (manifest + results)")
    parser.add_argument("bench_run", type=Path, help="a bench run directory (PUSH_PULL and/or REQ_REP cells)")
    parser.add_argument("--out", type=Path, help="write the markdown table here instead of printing it")


def main(args) -> int:
    from testbed.records.run_dir import RunDir
    from testbed.results import agreement, load
    try:
        tools = agreement.library_comparisons(args.tools_run)
        bench = agreement.library_comparisons(args.bench_run)
    except (load.RunDirError, OSError, ValueError) as exc:
        print(f"testbed agree: {exc}", file=sys.stderr)
        return 2
    kinds = sorted({str(c.get("kind")) for c in RunDir.at(args.tools_run).cells()})
    if kinds != ["perf-tools"]:
        print(f"testbed agree: {args.tools_run}: not a perf-tools run (cell kinds: {kinds})", file=sys.stderr)
        return 2
    hwm = agreement.bench_hwm(RunDir.at(args.bench_run).cells())
    table = agreement.agreement(tools, bench)
    text = agreement.markdown(table, args.tools_run.name, args.bench_run.name, hwm)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0
