#!/usr/bin/env python3
"""The table of docs/profiling/2026-12-02-deferral-decision.md from deferral_counts.py's rows.

Per cell and figure: each library's median per message (min-max over the
repetitions) and the paired ratio WITH / WITHOUT (repetition i of both ran back to
back), median (min-max). A ratio is left out ("-") when a value of the pair is below
--floor (a per-message count that small is a handful of events in the N/2N
difference, so its ratio is noise).

  python3 deferral_table.py ROWS.jsonl --with zlink --without zlink@390eb2d
"""
from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

FIGURES = {
    "perf": ["vol_cs", "invol_cs", "context-switches", "write", "read", "futex", "epoll_wait", "poll",
             "sendmsg", "recvfrom"],
    "strace": ["write:eventfd", "read:eventfd", "sendmsg:socket", "recvfrom:socket"],
    "callgrind": ["instructions"],
}


def spread(values: list[float], fmt: str) -> str:
    med = statistics.median(values)
    return f"{med:{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows", type=Path, nargs="+")
    parser.add_argument("--with", dest="with_", required=True,
                        help="library name: the build with the change")
    parser.add_argument("--without", required=True)
    parser.add_argument("--floor", type=float, default=0.02)
    args = parser.parse_args()
    runs: dict[tuple, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for path in args.rows:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            cell = (row["pattern"], row["transport"], row["size"], row["instrument"])
            for figure, value in row["per_msg"].items():
                runs[cell + (figure,)][row["library"]][row["rep"]] = value
    print("| pattern | transport | size | figure | with | without | with/without |")
    print("|---|---|---|---|---|---|---|")
    for (pattern, transport, size, instrument, figure), libs in sorted(runs.items()):
        if figure not in FIGURES[instrument]:
            continue
        a, b = libs.get(args.with_, {}), libs.get(args.without, {})
        reps = sorted(set(a) & set(b))
        if not reps:
            continue
        wa, wb = [a[r] for r in reps], [b[r] for r in reps]
        if max(abs(v) for v in wa + wb) < 0.001:
            continue
        fmt = ".0f" if instrument == "callgrind" else ".3f"
        ratios = [x / y for x, y in zip(wa, wb) if min(x, y) >= args.floor]
        ratio = spread(ratios, ".2f") if len(ratios) == len(reps) else "-"
        print(f"| {pattern} | {transport} | {size} | {instrument}:{figure} | {spread(wa, fmt)} | "
              f"{spread(wb, fmt)} | {ratio} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
