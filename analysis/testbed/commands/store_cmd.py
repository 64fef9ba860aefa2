"""`./testbed store status|compact`: the results store of run directories.

A live run appends to results.jsonl (fsynced per cell); a finished run is compacted
into results.parquet (records/columnar.py), the same records about 15x smaller. Runs
published before the Parquet store still hold JSONL: `compact --budget-mb N` converts
the oldest superseded ones first, as many as fit N MB of deleted JSONL, so a commit's
diff stays small; the next session runs the same command again. Compacting also gzips
the run's speed, work and in-run ceiling lines (store.pack_side_files; a publish does
the same), which readers take packed or plain.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testbed import paths
from testbed.records import run_status
from testbed.records.run_dir import RunDir, RunDirError

MB = 1_000_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    status = sub.add_parser("status", help="each run's results file and size; totals and projection")
    status.add_argument("root", nargs="?", type=Path, default=paths.REPORTS_DIR,
                        help="a tree of <experiment>/<run-id>/ run directories (default reports/)")
    compact = sub.add_parser("compact", help="results.jsonl -> results.parquet and the side JSONL "
                             "gzipped, checked, originals removed")
    compact.add_argument("runs", nargs="*", type=Path,
                         help="run directories; with --budget-mb, roots to pick runs from (default reports/)")
    compact.add_argument("--budget-mb", type=float, default=None,
                         help="pick runs yourself: superseded runs oldest first, then current ones, "
                              "while the JSONL removed stays within this many MB (10^6 bytes)")


def _runs(root: Path) -> list[Path]:
    return run_status.published(root)


def pick(roots: list[Path], budget_bytes: float) -> list[Path]:
    """Runs still on JSONL, superseded ones oldest first and then each experiment's
    current run, taken in that order while their journals fit the budget: the first
    that does not fit ends the pick, so what is left is always the newest."""
    superseded, current = [], []
    for root in roots:
        for found in run_status.by_experiment(_runs(root)).values():
            current.append(found[0])
            superseded += found[1:]
    order = sorted(superseded, key=lambda p: p.name) + sorted(current, key=lambda p: p.name)
    picked, total = [], 0
    for run in order:
        size = RunDir.open(run).journal_size()
        if size is None:
            continue
        if total + size > budget_bytes:
            break
        picked.append(run)
        total += size
    return picked


def _compact(runs: list[Path]) -> int:
    before = after = 0
    for run in runs:
        try:
            run_dir = RunDir.open(run)
            was, now = run_dir.compact()
            side_was, side_now = run_dir.pack_side_files()
        except (OSError, ValueError) as exc:
            print(f"testbed store: {exc}", file=sys.stderr)
            return 2
        before, after = before + was + side_was, after + now + side_now
        print(f"{run}: {was / MB:.2f} MB JSONL -> {now / MB:.2f} MB Parquet" if was
              else f"{run}: already compacted ({now / MB:.2f} MB)")
        if side_was:
            print(f"{run}: side files {side_was / MB:.2f} MB JSONL -> {side_now / MB:.2f} MB gzipped")
    if before:
        print(f"compacted {len(runs)} runs: {before / MB:.1f} MB -> {after / MB:.1f} MB "
              f"(size ratio {before / max(after, 1):.1f}:1)")
    return 0


def status(root: Path) -> int:
    runs = _runs(root)
    if not runs:
        print(f"testbed store: no run directories under {root}", file=sys.stderr)
        return 2
    from testbed.records import columnar
    journal = parquet = replaced = replaced_by = 0
    for run in runs:
        run_dir = RunDir.open(run)
        path = run_dir.records_file()
        size = path.stat().st_size if path.is_file() else 0
        note = ""
        if run_dir.is_compacted():
            parquet += size
            source = columnar.journal_bytes(path)
            if source:
                replaced, replaced_by = replaced + source, replaced_by + size
                note = f"  (was {source / MB:.2f} MB JSONL)"
        else:
            journal += size
        print(f"{run.relative_to(root)}  {path.name}  {size / MB:.2f} MB{note}")
    print(f"\nresults files in {len(runs)} runs: JSONL {journal / MB:.1f} MB, Parquet {parquet / MB:.1f} MB")
    if replaced:
        ratio = replaced / replaced_by
        print(f"compacted so far: {replaced / MB:.1f} MB JSONL -> {replaced_by / MB:.1f} MB ({ratio:.1f}x); "
              f"all compacted at that ratio: {(parquet + journal / ratio) / MB:.1f} MB")
    return 0


def main(args) -> int:
    if args.action == "status":
        return status(args.root)
    if args.budget_mb is not None:
        runs = pick(args.runs or [paths.REPORTS_DIR], args.budget_mb * MB)
        if not runs:
            print("testbed store: nothing on JSONL fits the budget", file=sys.stderr)
        return _compact(runs)
    if not args.runs:
        print("testbed store compact: name run directories, or give --budget-mb", file=sys.stderr)
        return 2
    for run in args.runs:
        try:
            RunDir.open(run)
        except RunDirError as exc:
            print(f"testbed store compact: {exc}", file=sys.stderr)
            return 2
    return _compact(args.runs)
