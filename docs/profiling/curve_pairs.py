#!/usr/bin/env python3
"""Paired ratios of curve_counts.py's arms: each arm against a reference arm.

Repetition i of every arm ran in the same rotation of one run, so arms pair by
index. Per figure: the arm's median per message (min-max), the paired ratio
ARM / REFERENCE, median (min-max) over the repetitions, and the testbed's paired
verdict (lower is better, 95%) when every value is above zero.

  python3 curve_pairs.py ROWS.jsonl --ref main --ref libzmq [--figure context_switches ...]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))

DEFAULT_FIGURES = ["context_switches", "voluntary_switches", "involuntary_switches", "wakeups",
                   "syscalls", "write", "poll", "epoll_wait", "sendmsg", "recvfrom", "task_clock_ms"]


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def verdict(ref: list[float], cand: list[float]) -> str:
    if min(ref + cand) <= 0:
        return "not judged (a value <= 0)"
    from testbed.stats.decide import TooFewSamples, decide_paired
    try:
        d = decide_paired(ref, cand, higher_is_better=False, seed=len(ref))
    except TooFewSamples as e:
        return str(e)
    return f"{d.verdict} {d.ratio:.2f} [{d.low:.2f}, {d.high:.2f}]"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rows", type=Path)
    p.add_argument("--ref", action="append", required=True, help="reference arm (repeatable)")
    p.add_argument("--figure", action="append", help="figures (default: switches, wake-ups, syscalls)")
    args = p.parse_args()
    rows = [json.loads(line) for line in args.rows.read_text().splitlines() if line.strip()]
    by_arm = {r["arm"]: r for r in rows}
    for figure in args.figure or DEFAULT_FIGURES:
        print(f"## {figure}")
        for arm, row in by_arm.items():
            cells = [f"{arm}: {spread(row[figure + '_runs'])}"]
            for ref in args.ref:
                if ref == arm or ref not in by_arm:
                    continue
                a, b = row[figure + "_runs"], by_arm[ref][figure + "_runs"]
                ratios = [x / y for x, y in zip(a, b) if y > 0]
                if ratios:
                    cells.append(f"/{ref} {spread(ratios)} {verdict(b, a)}")
            print("  " + "; ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
