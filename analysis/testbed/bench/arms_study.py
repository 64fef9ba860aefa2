"""The slice-length study of the arms bench (bench/README.md "The arms bench"; issue 41:
"the data decide the slice length").

One run = one process pair (two processes, ROUTER_ROUTER over tcp, 2 IO threads)
holding six arms: zlink at its default twice (A/A, one library copy, two contexts),
zlink with static 16 KiB and 64 KiB batches (A/B), and libzmq 4.3.5 twice, from two
copies loaded into two namespaces (A/A). Each run measures throughput slices of one
target length for about the same total time (rounds = budget / (arms x slice)), so
the lengths compete at equal cost. Per (placement, size) the slice counts are
calibrated first from a short run (the mean time per message over the arms).

    python -m testbed.bench.arms_study run --placement one-core --runs 8 --out FILE.jsonl
    python -m testbed.bench.arms_study summarize FILE.jsonl [--markdown]

`run` appends one JSON row per calibration and per run (resumable: rows already in
FILE are not run again) and shows progress; `summarize` prints, per placement, size,
slice length and comparison: the slice-pair sd of the log ratio (pooled over runs),
the between-run sd of each run's log ratio, and the naive within-run standard error
of a run's ratio for contrast.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

from testbed.bench.arms_binaries import arms_binary, shared_object
from testbed.bench.command import Arm, ArmLib, arms_role_argvs, local_endpoints, placement_pins, run_arms

PATTERN, TRANSPORT, IO_THREADS = "ROUTER_ROUTER", "tcp", 2
SIZES = (1024, 65536, 262144)
SLICE_MS = (5, 10, 20, 40, 80)
BUDGET_S = 2.4          # measured slice time per run (all arms), whatever the slice length
STATIC = (("s16k", 16384), ("s64k", 65536))
COMPARISONS = {          # name -> (arm B, arm A): the ratio is rate(B) / rate(A)
    "A/A zlink": ("zB", "zA"),
    "A/A libzmq": ("lB", "lA"),
    "A/B zlink 16k/default": ("s16k", "zA"),
    "A/B zlink 64k/default": ("s64k", "zA"),
    "A/B zlink/libzmq": ("zA", "lA"),
}


def _arms() -> tuple[list[ArmLib], list[Arm]]:
    from testbed.toolchain.libraries import find_built
    zlink, ref = find_built("zlink", bench=False), find_built("libzmq-4.3.5", bench=False)
    libs = [ArmLib("zlink", str(shared_object(zlink)), "zlink", zlink.info["build_id"]),
            ArmLib("ref1", str(shared_object(ref)), "libzmq-4.3.5", ref.info["build_id"]),
            ArmLib("ref2", str(shared_object(ref)), "libzmq-4.3.5", ref.info["build_id"])]
    arms = [Arm("zA", "zlink"), Arm("zB", "zlink")]
    arms += [Arm(label, "zlink", (("ZMQ_ASIO_IN_BATCH_SIZE", str(n)), ("ZMQ_ASIO_OUT_BATCH_SIZE", str(n))))
             for label, n in STATIC]
    arms += [Arm("lA", "ref1"), Arm("lB", "ref2")]
    return libs, arms


def _loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return math.nan


def _one_run(placement: str, size: int, slice_count: int, rounds: int, seed: int) -> dict:
    libs, arms = _arms()
    pins = placement_pins(placement, [0, 1])
    receiver, sender = arms_role_argvs(arms_binary(PATTERN), TRANSPORT, size, local_endpoints(TRANSPORT),
                                       libs, arms, io_threads=IO_THREADS, mode="thr", rounds=rounds,
                                       warmup_rounds=1, slice_count=slice_count, seed=seed, counters="auto",
                                       timeout_ms=20000, **pins)
    load_before, started = _loadavg(), time.time()
    run = run_arms(receiver_argv=receiver, sender_argv=sender, timeout_s=300)
    row = {"placement": placement, "size": size, "slice_count": slice_count, "rounds": rounds, "seed": seed,
           "started": started, "wall_s": round(time.time() - started, 3), "load": [load_before, _loadavg()],
           "exit": [run.receiver.exit_code, run.sender.exit_code]}
    if run.result is None:
        row["error"] = (run.receiver.stderr + run.sender.stderr)[-2000:]
        return row
    labels = [a["label"] for a in run.result["arms"]]
    measured = [r for r in run.result["rounds"] if not r["warmup"]]
    # Per arm: its receiver seconds in each measured round, in round order.
    row["seconds"] = {label: [next(s["receiver_seconds"] for s in r["slices"] if labels[s["arm"]] == label)
                              for r in measured] for label in labels}
    row["orders"] = [r["order"] for r in measured]
    return row


def _done(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _calibrate(placement: str, size: int, out: Path, rows: list[dict]) -> float:
    """Seconds per message (mean over arms) for this placement and size; measured once."""
    for row in rows:
        if row.get("type") == "calibration" and row["placement"] == placement and row["size"] == size:
            return row["seconds_per_message"]
    guess = {1024: 2000, 65536: 100, 262144: 30}[size]
    row = _one_run(placement, size, guess, 3, 1)
    if "seconds" not in row:
        raise RuntimeError(f"calibration run failed: {row.get('error')}")
    per_msg = statistics.fmean(statistics.fmean(v) for v in row["seconds"].values()) / guess
    row.update(type="calibration", seconds_per_message=per_msg)
    _append(out, row)
    rows.append(row)
    return per_msg


def _append(out: Path, row: dict) -> None:
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")


def run_study(placement: str, runs: int, out: Path, sizes: tuple[int, ...], slice_ms: tuple[int, ...],
              seed: int) -> None:
    rows = _done(out)
    per_msg = {size: _calibrate(placement, size, out, rows) for size in sizes}
    n_arms = len(_arms()[1])
    plan = [(size, ms, i) for size in sizes for ms in slice_ms for i in range(runs)]
    random.Random(seed).shuffle(plan)  # lengths and sizes interleaved in time
    todo = [p for p in plan if not any(r.get("type") == "run" and r["placement"] == placement
                                       and (r["size"], r["slice_ms"], r["run"]) == p for r in rows)]
    print(f"arms_study: {placement}: {len(plan) - len(todo)} of {len(plan)} runs done, {len(todo)} to go",
          file=sys.stderr)
    for k, (size, ms, i) in enumerate(todo, 1):
        count = max(1, round(ms / 1000 / per_msg[size]))
        rounds = max(3, round(BUDGET_S / (n_arms * ms / 1000)))
        row = _one_run(placement, size, count, rounds, seed * 1000 + i)
        row.update(type="run", slice_ms=ms, run=i)
        _append(out, row)
        status = "ok" if "seconds" in row else f"FAILED exit {row['exit']}"
        print(f"  [{k}/{len(todo)}] {placement} {size} B {ms} ms x {rounds} rounds ({count} msgs): "
              f"{status}, {row['wall_s']} s", file=sys.stderr)


def _pair_logs(row: dict, b: str, a: str) -> list[float]:
    """Per measured round: log(rate_B / rate_A) = log(seconds_A / seconds_B) (same count)."""
    return [math.log(sa / sb) for sa, sb in zip(row["seconds"][a], row["seconds"][b])]


def summarize(rows: list[dict]) -> list[dict]:
    runs = [r for r in rows if r.get("type") == "run" and "seconds" in r]
    cells: dict[tuple, list[dict]] = {}
    for r in runs:
        cells.setdefault((r["placement"], r["size"], r["slice_ms"]), []).append(r)
    table = []
    for (placement, size, ms), group in sorted(cells.items()):
        for name, (b, a) in COMPARISONS.items():
            logs = [_pair_logs(r, b, a) for r in group]
            within = [statistics.variance(x) for x in logs if len(x) > 1]
            run_means = [statistics.fmean(x) for x in logs]
            pair_sd = math.sqrt(statistics.fmean(within)) if within else math.nan
            n_pairs = statistics.fmean(len(x) for x in logs)
            table.append({
                "placement": placement, "size": size, "slice_ms": ms, "comparison": name,
                "runs": len(group), "pairs_per_run": n_pairs,
                "slice_pair_sd": pair_sd,
                "between_run_sd": statistics.stdev(run_means) if len(run_means) > 1 else math.nan,
                "within_run_se": pair_sd / math.sqrt(n_pairs),
                "ratio": math.exp(statistics.fmean(run_means)),
                "slice_count": group[0]["slice_count"],
            })
    return table


def markdown(table: list[dict]) -> str:
    out = ["| placement | size | slice ms | comparison | runs | pairs/run | slice-pair sd(log) "
           "| between-run sd | within-run SE | ratio |",
           "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for t in table:
        out.append(f"| {t['placement']} | {t['size']} | {t['slice_ms']} | {t['comparison']} | {t['runs']} "
                   f"| {t['pairs_per_run']:.0f} | {100 * t['slice_pair_sd']:.1f}% "
                   f"| {100 * t['between_run_sd']:.1f}% | {100 * t['within_run_se']:.1f}% "
                   f"| {t['ratio']:.3f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.bench.arms_study", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    run = sub.add_parser("run", help="measure (append rows to --out)")
    run.add_argument("--placement", required=True, choices=("one-core", "split"))
    run.add_argument("--runs", type=int, default=8, help="process-pair runs per size and slice length")
    run.add_argument("--sizes", default=",".join(map(str, SIZES)))
    run.add_argument("--slice-ms", default=",".join(map(str, SLICE_MS)))
    run.add_argument("--seed", type=int, default=41)
    run.add_argument("--out", type=Path, required=True)
    summ = sub.add_parser("summarize", help="the study's table from its rows")
    summ.add_argument("rows", type=Path)
    summ.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.what == "run":
        run_study(args.placement, args.runs, args.out, tuple(int(x) for x in args.sizes.split(",")),
                  tuple(int(x) for x in args.slice_ms.split(",")), args.seed)
        return 0
    table = summarize(_done(args.rows))
    print(json.dumps(table, indent=1) if args.json else markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
