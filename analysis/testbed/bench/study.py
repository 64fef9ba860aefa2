"""Hand-run measurement checks of the instrument itself (not part of CI: they take
minutes and their numbers depend on the host's load). Two of them:

    python -m testbed.bench.study placement [--lib L] [--sizes 64,262144] [--runs 10]
        CV of throughput per process model x placement (split / one-core / free),
        runs interleaved; picks the default placement (bench/README.md).
    python -m testbed.bench.study ceiling [--libs A,B] [--sizes 64,262144] [--runs 5]
        the ceiling probe beside PAIR cells of each library, same process model and
        placement, interleaved: every library must stay below the probe.

Counts are calibrated so that the reference library's timed window lasts at least
--window seconds; every library runs the same count. Timing runs are not niced;
the caller pins nothing else (the pins are the experiment)."""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from dataclasses import dataclass, field

from testbed.bench.ceiling_cmd import measure_ceiling
from testbed.bench.command import (
    bench_argv,
    local_endpoints,
    placement_pins,
    role_argvs,
    run_bench,
    run_two_process,
)

MODELS = ("one-process", "two-process")
PLACEMENTS = ("split", "one-core", "free")


@dataclass
class Series:
    """Throughputs (msgs/s) of repeated runs of one configuration."""
    values: list[float] = field(default_factory=list)

    def summary(self) -> dict:
        v = self.values
        mean = statistics.fmean(v) if v else float("nan")
        cv = statistics.stdev(v) / mean if len(v) > 1 else float("nan")
        nan = float("nan")
        return {"n": len(v), "median": statistics.median(v) if v else nan, "min": min(v, default=nan),
                "max": max(v, default=nan), "cv": cv}


def run_cell(lib, pattern: str, transport: str, size: int, count: int, model: str, pins: dict) -> dict:
    """One throughput-only run; returns the (joined) result or raises RuntimeError."""
    binary = lib.bench_binary(pattern)
    options = dict(count=count, mode="thr", timeout_ms=20000, **pins)
    if model == "one-process":
        run = run_bench(bench_argv(binary, transport, size, **options), timeout_s=300)
        if run.exit_code != 0 or run.result is None:
            raise RuntimeError(f"{binary.name} exited {run.exit_code}: {run.stderr.strip()[-300:]}")
        return run.result
    argvs = role_argvs(binary, transport, size, local_endpoints(transport), **options)
    pair = run_two_process(*argvs, timeout_s=300)
    if pair.result is None:
        raise RuntimeError(f"{binary.name} two-process run failed: receiver {pair.receiver.exit_code} "
                           f"{pair.receiver.stderr.strip()[-200:]} / sender {pair.sender.exit_code} "
                           f"{pair.sender.stderr.strip()[-200:]}")
    return pair.result


def calibrate(lib, pattern: str, transport: str, size: int, window_s: float, pins: dict) -> int:
    """A count whose timed window lasts >= window_s for `lib` (one-process, these pins),
    from a short probe run, with 50% headroom for slower runs."""
    count = 20000 if size <= 4096 else 2000
    for _ in range(4):
        res = run_cell(lib, pattern, transport, size, count, "one-process", pins)
        seconds = res["throughput"]["receiver_seconds"]
        if seconds >= window_s / 4:
            break
        count *= 4
    rate = res["throughput"]["msgs_per_sec"]
    return max(count, int(rate * window_s * 1.5))


def cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def placement_study(args) -> dict:
    from testbed.toolchain.libraries import ensure_built
    lib = ensure_built(args.lib)
    out = {"lib": args.lib, "runs": args.runs, "window_s": args.window, "cells": []}
    for size in args.sizes:
        count = calibrate(lib, "PAIR", "tcp", size, args.window, placement_pins("split", cpus()))
        configs = [(m, p) for m in MODELS for p in PLACEMENTS]
        series = {c: Series() for c in configs}
        rng = random.Random(args.seed + size)
        for i in range(args.runs):
            rng.shuffle(configs)  # interleaved, in a fresh order each round
            for model, placement in configs:
                res = run_cell(lib, "PAIR", "tcp", size, count, model, placement_pins(placement, cpus()))
                series[(model, placement)].values.append(res["throughput"]["msgs_per_sec"])
            print(f"placement: {size} B round {i + 1}/{args.runs} done", file=sys.stderr)
        for (model, placement), s in series.items():
            out["cells"].append({"size": size, "count": count, "process_model": model, "placement": placement,
                                 **s.summary(), "values": s.values})
    return out


def ceiling_study(args) -> dict:
    from testbed.toolchain.libraries import ensure_built
    libs = {name: ensure_built(name) for name in args.libs}
    pins = placement_pins(args.placement, cpus())
    reference = libs[args.libs[0]]
    counts = {size: calibrate(reference, "PAIR", "tcp", size, args.window, pins) for size in args.sizes}
    series = {(who, size): Series() for who in ["probe", *args.libs] for size in args.sizes}
    winners: dict[int, list] = {}
    for i in range(args.runs):
        ceiling = measure_ceiling(",".join(map(str, args.sizes)), args.probe_bytes, None, args.libs[0],
                                  transports="tcp", process_model=args.process_model, mode="thr", **pins)
        for row in ceiling["rows"]:
            series[("probe", row["msg_size"])].values.append(row["throughput"]["msgs_per_sec"])
            # Which write size and way of waiting won this round (none wins everywhere).
            best = row["throughput"]
            winners.setdefault(row["msg_size"], []).append([best["write_size"], best["io"]])
        for name, size in [(n, s) for n in args.libs for s in args.sizes]:
            res = run_cell(libs[name], "PAIR", "tcp", size, counts[size], args.process_model, pins)
            series[(name, size)].values.append(res["throughput"]["msgs_per_sec"])
        print(f"ceiling: round {i + 1}/{args.runs} done", file=sys.stderr)
    rows = []
    for size in args.sizes:
        probe = series[("probe", size)]
        for name in args.libs:
            s = series[(name, size)]
            bound = against_probe(s.values, probe.values)
            if bound["rounds_above_probe"]:
                print(f"ceiling: EXCEEDED: {name} at {size} B moved more than the probe in "
                      f"{bound['rounds_above_probe']} of {len(s.values)} rounds", file=sys.stderr)
            rows.append({"size": size, "lib": name, "count": counts[size], "lib_summary": s.summary(),
                         "probe_summary": probe.summary(), **bound, "lib_values": s.values,
                         "probe_values": probe.values, "probe_winners": winners.get(size, [])})
    return {"process_model": args.process_model, "placement": args.placement, "pins": pins, "rows": rows}


def against_probe(lib_values: list[float], probe_values: list[float]) -> dict:
    """A library's rates beside the probe's, round by round (the two ran back to back in
    each round, so the round's ratio shares its load). The probe is meant to bound the
    library: `rounds_above_probe` > 0 means it did not, and the study says so."""
    if len(lib_values) != len(probe_values) or not lib_values:
        raise ValueError(f"need one library and one probe value per round, got {len(lib_values)} "
                         f"and {len(probe_values)}")
    ratios = [lib / probe for lib, probe in zip(lib_values, probe_values)]
    return {"ratio_median": statistics.median(lib_values) / statistics.median(probe_values),
            "ratios_per_round": ratios, "ratio_per_round_summary": Series(ratios).summary(),
            "rounds_above_probe": sum(r > 1 for r in ratios),
            "below_every_probe_run": max(lib_values) < min(probe_values)}


def _sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.bench.study",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="study", required=True)
    p = sub.add_parser("placement", help="CV of throughput per process model x placement")
    p.add_argument("--lib", default="libzmq-4.3.5")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("ceiling", help="probe vs libraries, same process model and placement")
    c.add_argument("--libs", type=lambda t: t.split(","), default=["libzmq-4.3.5", "zlink"])
    c.add_argument("--runs", type=int, default=5)
    c.add_argument("--process-model", choices=MODELS, default="two-process")
    c.add_argument("--placement", choices=PLACEMENTS, default="split")
    c.add_argument("--probe-bytes", type=int, default=1 << 30)
    for q in (p, c):
        q.add_argument("--sizes", type=_sizes, default=[64, 262144])
        q.add_argument("--window", type=float, default=0.5, help="minimum timed window in seconds")
        q.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    result = placement_study(args) if args.study == "placement" else ceiling_study(args)
    # Other work on the host inflates every spread: say how busy it was.
    result["loadavg_before_after"] = [load_before, os.getloadavg()]
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
