"""The library verdicts (throughput, p50) of two runs of the same cells side by side,
and how often both decided the same way (verdicts.md was written by it).

    python docs/design/2026-12-03-redeal/compare.py RUN_ON RUN_OFF
"""
from __future__ import annotations

import json
import statistics
import sys

METRICS = ("throughput", "p50_latency")


def decisions(run_dir: str) -> dict:
    manifest = json.load(open(f"{run_dir}/manifest.json"))
    return {(g["pattern"], g["transport"], g["msg_size"], d["metric"]): d
            for g in manifest["summary"]["groups"] for d in g["decisions"]
            if d["kind"] == "library" and d["metric"] in METRICS}


def shown(d: dict) -> str:
    return f"{d['ratio']:.2f} [{d['low']:.2f}, {d['high']:.2f}] {d['verdict']}"


def main(on: str, off: str) -> None:
    a, b = decisions(on), decisions(off)
    print("| cell | metric | redeal on: ratio [95%] verdict | redeal off: ratio [95%] verdict |")
    print("|---|---|---|---|")
    agree = disagree = 0
    for k in sorted(a.keys() & b.keys()):
        print(f"| {k[0]} {k[1]} {k[2]} B | {k[3]} | {shown(a[k])} | {shown(b[k])} |")
        va, vb = a[k]["verdict"], b[k]["verdict"]
        if va in ("FAST", "SLOW") and vb in ("FAST", "SLOW"):
            agree += va == vb
            disagree += va != vb
    print(f"\nboth decided: agree {agree}, disagree {disagree}")
    for m in METRICS:
        width = {n: statistics.median(d["high"] / d["low"] for k, d in run.items() if k[3] == m)
                 for n, run in (("on", a), ("off", b))}
        print(f"{m} median interval width (high/low): on {width['on']:.3f} off {width['off']:.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
