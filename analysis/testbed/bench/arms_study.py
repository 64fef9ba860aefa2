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
from testbed.bench.command import (
    Arm,
    ArmLib,
    arms_argv,
    arms_role_argvs,
    local_endpoints,
    placement_pins,
    run_arms,
)

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


def _arms(subset: tuple[str, ...] | None = None) -> tuple[list[ArmLib], list[Arm]]:
    from testbed.toolchain.libraries import find_built
    zlink, ref = find_built("zlink", bench=False), find_built("libzmq-4.3.5", bench=False)
    libs = [ArmLib("zlink", str(shared_object(zlink)), "zlink", zlink.info["build_id"]),
            ArmLib("ref1", str(shared_object(ref)), "libzmq-4.3.5", ref.info["build_id"]),
            ArmLib("ref2", str(shared_object(ref)), "libzmq-4.3.5", ref.info["build_id"])]
    arms = [Arm("zA", "zlink"), Arm("zB", "zlink")]
    arms += [Arm(label, "zlink", (("ZMQ_ASIO_IN_BATCH_SIZE", str(n)), ("ZMQ_ASIO_OUT_BATCH_SIZE", str(n))))
             for label, n in STATIC]
    arms += [Arm("lA", "ref1"), Arm("lB", "ref2")]
    if subset:
        arms = [a for a in arms if a.label in subset]
        libs = [lib for lib in libs if any(a.lib == lib.label for a in arms)]
    return libs, arms


def _loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return math.nan


def _one_run(setup: tuple, placement: str, size: int, slice_count: int, rounds: int, seed: int) -> dict:
    binary, libs, arms, model, counters = setup
    options = dict(io_threads=IO_THREADS, mode="thr", rounds=rounds, warmup_rounds=1, slice_count=slice_count,
                   seed=seed, counters=counters, timeout_ms=20000, **placement_pins(placement, [0, 1]))
    load_before, started = _loadavg(), time.time()
    if model == "two-process":
        receiver, sender = arms_role_argvs(binary, TRANSPORT, size, local_endpoints(TRANSPORT), libs, arms,
                                           **options)
        run = run_arms(receiver_argv=receiver, sender_argv=sender, timeout_s=300)
        procs = [run.receiver, run.sender]
    else:
        run = run_arms(arms_argv(binary, TRANSPORT, size, libs, arms, **options), timeout_s=300)
        procs = [run.one]
    row = {"placement": placement, "process_model": model, "arms": [a.label for a in arms],
           "counters": counters,
           "size": size, "slice_count": slice_count,
           "rounds": rounds, "seed": seed, "started": started, "wall_s": round(time.time() - started, 3),
           "load": [load_before, _loadavg()], "exit": [p.exit_code for p in procs]}
    if run.result is None:
        row["error"] = "".join(p.stderr for p in procs)[-2000:]
        return row
    labels = [a["label"] for a in run.result["arms"]]
    measured = [r for r in run.result["rounds"] if not r["warmup"]]
    # Per arm, in round order: the receiver's window (what the bench reports), the
    # span (from the sender's last warm-up send to the last arrival: it contains the
    # window, and does not start late when the receiver is scheduled late) and the
    # sender's own window.
    for key, field in (("seconds", "receiver_seconds"), ("span", "span_seconds"),
                       ("sender", "sender_seconds")):
        row[key] = {label: [next(s[field] for s in r["slices"] if labels[s["arm"]] == label)
                            for r in measured] for label in labels}
    row["orders"] = [r["order"] for r in measured]
    return row


def _done(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _model(row: dict) -> str:
    """The process model and, for a run of a subset of the arms, which (older rows: all
    six), and the counters when they were not the default (auto)."""
    model = row.get("process_model", "two-process")
    arms = row.get("arms")
    label = model if not arms or len(arms) == 6 else f"{model} [{','.join(arms)}]"
    # Rows without the field ran with auto (the slice-length study of 2026-12-02).
    return label if row.get("counters", "auto") == "auto" else f"{label} counters={row['counters']}"


def _calibrate(setup: tuple, placement: str, size: int, out: Path, rows: list[dict]) -> float:
    """Seconds per message (mean over arms) for this placement and size; measured once."""
    for row in rows:
        if (row.get("type") == "calibration" and row["placement"] == placement and row["size"] == size
                and row.get("process_model", "two-process") == setup[3]):
            return row["seconds_per_message"]
    guess = {1024: 5000, 65536: 200, 262144: 60}[size]
    row = _one_run(setup, placement, size, guess, 3, 1)
    if "seconds" not in row:
        raise RuntimeError(f"calibration run failed: {row.get('error')}")
    # From the span: a receiver scheduled late starts its window late, so short
    # windows understate the time a slice takes.
    per_msg = statistics.fmean(statistics.fmean(v) for v in row["span"].values()) / guess
    row.update(type="calibration", seconds_per_message=per_msg)
    _append(out, row)
    rows.append(row)
    return per_msg


def _append(out: Path, row: dict) -> None:
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")


def run_study(placement: str, runs: int, out: Path, sizes: tuple[int, ...], slice_ms: tuple[int, ...],
              seed: int, model: str = "two-process", subset: tuple[str, ...] | None = None,
              counters: str = "auto") -> None:
    rows = _done(out)
    # Resolved once, whatever is written under bench/ meanwhile.
    libs, arms = _arms(subset)
    setup = (arms_binary(PATTERN), libs, arms, model, counters)
    label = model if subset is None else f"{model} [{','.join(a.label for a in arms)}]"
    label = label if counters == "auto" else f"{label} counters={counters}"
    per_msg = {size: _calibrate(setup, placement, size, out, rows) for size in sizes}
    n_arms = len(setup[2])
    plan = [(size, ms, i) for size in sizes for ms in slice_ms for i in range(runs)]
    random.Random(seed).shuffle(plan)  # lengths and sizes interleaved in time
    todo = [p for p in plan if not any(r.get("type") == "run" and r["placement"] == placement
                                       and _model(r) == label
                                       and (r["size"], r["slice_ms"], r["run"]) == p for r in rows)]
    print(f"arms_study: {label} {placement}: {len(plan) - len(todo)} of {len(plan)} runs done, "
          f"{len(todo)} to go", file=sys.stderr)
    for k, (size, ms, i) in enumerate(todo, 1):
        count = max(1, round(ms / 1000 / per_msg[size]))
        rounds = max(3, round(BUDGET_S / (n_arms * ms / 1000)))
        row = _one_run(setup, placement, size, count, rounds, seed * 1000 + i)
        row.update(type="run", slice_ms=ms, run=i)
        _append(out, row)
        status = "ok" if "seconds" in row else f"FAILED exit {row['exit']}"
        print(f"  [{k}/{len(todo)}] {label} {placement} {size} B {ms} ms x {rounds} rounds ({count} msgs): "
              f"{status}, {row['wall_s']} s", file=sys.stderr)


def _pair_logs(row: dict, b: str, a: str, timing: str = "seconds") -> list[float]:
    """Per measured round: log(rate_B / rate_A) = log(seconds_A / seconds_B) (same count)."""
    return [math.log(sa / sb) for sa, sb in zip(row[timing][a], row[timing][b])]


def _mad_sd(values: list[float]) -> float:
    """The median absolute deviation scaled to a normal sd: one stall does not move it."""
    mid = statistics.median(values)
    return 1.4826 * statistics.median(abs(v - mid) for v in values)


def summarize(rows: list[dict], timing: str = "seconds") -> list[dict]:
    """Per (process model, placement, size, slice length, comparison): the slice-pair
    spread within runs (sd, and the MAD's robust sd), the between-run sd of each run's
    log ratio estimated as the mean and as the median of its slice pairs, and the naive
    within-run standard error of the mean for contrast."""
    runs = [r for r in rows if r.get("type") == "run" and "seconds" in r]
    cells: dict[tuple, list[dict]] = {}
    for r in runs:
        cells.setdefault((_model(r), r["placement"], r["size"], r["slice_ms"]), []).append(r)
    table = []
    for (model, placement, size, ms), group in sorted(cells.items()):
        for name, (b, a) in COMPARISONS.items():
            if not all(b in r["seconds"] and a in r["seconds"] for r in group):
                continue
            logs = [_pair_logs(r, b, a, timing) for r in group]
            pair_sd = math.sqrt(statistics.fmean(statistics.variance(x) for x in logs))
            means, medians = [statistics.fmean(x) for x in logs], [statistics.median(x) for x in logs]
            n_pairs = statistics.fmean(len(x) for x in logs)
            table.append({
                "process_model": model, "placement": placement, "size": size, "slice_ms": ms,
                "comparison": name, "runs": len(group), "pairs_per_run": n_pairs,
                "slice_count": group[0]["slice_count"], "timing": timing,
                "slice_pair_sd": pair_sd,
                "slice_pair_mad_sd": math.sqrt(statistics.fmean(_mad_sd(x) ** 2 for x in logs)),
                "between_run_sd": statistics.stdev(means) if len(means) > 1 else math.nan,
                "between_run_sd_median": statistics.stdev(medians) if len(medians) > 1 else math.nan,
                "within_run_se": pair_sd / math.sqrt(n_pairs),
                "ratio": math.exp(statistics.fmean(means)),
                "ratio_median": math.exp(statistics.fmean(medians)),
            })
    return table


def markdown(table: list[dict]) -> str:
    out = ["| process | placement | size | slice ms | comparison | runs | pairs/run | slice-pair sd "
           "| slice-pair sd (MAD) | between-run sd (mean) | between-run sd (median) | within-run SE "
           "| ratio (mean) | ratio (median) |",
           "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in table:
        out.append(f"| {t['process_model']} | {t['placement']} | {t['size']} | {t['slice_ms']} "
                   f"| {t['comparison']} | {t['runs']} | {t['pairs_per_run']:.0f} "
                   f"| {100 * t['slice_pair_sd']:.1f}% | {100 * t['slice_pair_mad_sd']:.1f}% "
                   f"| {100 * t['between_run_sd']:.1f}% | {100 * t['between_run_sd_median']:.1f}% "
                   f"| {100 * t['within_run_se']:.1f}% | {t['ratio']:.3f} | {t['ratio_median']:.3f} |")
    return "\n".join(out)


CONDENSED = ("A/A zlink", "A/A libzmq", "A/B zlink 16k/default", "A/B zlink/libzmq")


def condensed(table: list[dict]) -> str:
    """One line per (process model, placement, size, slice length): per comparison the
    slice-pair sd / the between-run sd (mean estimator) / the mean ratio."""
    head = " | ".join(CONDENSED)
    out = [f"| process | placement | size | slice ms | rounds | {head} |",
           "|---|---|---:|---:|---:|" + "---:|" * len(CONDENSED)]
    cells: dict[tuple, dict[str, dict]] = {}
    for t in table:
        key = (t["process_model"], t["placement"], t["size"], t["slice_ms"])
        cells.setdefault(key, {})[t["comparison"]] = t
    for (model, placement, size, ms), by in cells.items():
        parts = [f"{100 * by[c]['slice_pair_sd']:.0f}% / {100 * by[c]['between_run_sd']:.1f}% / "
                 f"{by[c]['ratio']:.2f}" if c in by else "-" for c in CONDENSED]
        rounds = round(next(iter(by.values()))["pairs_per_run"])
        out.append(f"| {model} | {placement} | {size} | {ms} | {rounds} | " + " | ".join(parts) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.bench.arms_study", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    run = sub.add_parser("run", help="measure (append rows to --out)")
    run.add_argument("--placement", required=True, choices=("one-core", "split"))
    run.add_argument("--process-model", choices=("two-process", "one-process"), default="two-process")
    run.add_argument("--arms", help="a subset of the arms, e.g. zA,lA (default: all six)")
    run.add_argument("--counters", choices=("auto", "software", "rusage", "off"), default="software",
                     help="(the slice-length rows of 2026-12-02 ran with auto, before its cost was known)")
    run.add_argument("--runs", type=int, default=8, help="process-pair runs per size and slice length")
    run.add_argument("--sizes", default=",".join(map(str, SIZES)))
    run.add_argument("--slice-ms", default=",".join(map(str, SLICE_MS)))
    run.add_argument("--seed", type=int, default=41)
    run.add_argument("--out", type=Path, required=True)
    summ = sub.add_parser("summarize", help="the study's table from its rows")
    summ.add_argument("rows", type=Path)
    summ.add_argument("--json", action="store_true")
    summ.add_argument("--condensed", action="store_true", help="one line per cell, four comparisons")
    summ.add_argument("--timing", choices=("seconds", "span", "sender"), default="seconds",
                      help="seconds: the receiver's window (default); span: sender's last warm-up "
                           "send to the last arrival; sender: the sender's window")
    args = parser.parse_args(argv)
    if args.what == "run":
        run_study(args.placement, args.runs, args.out, tuple(int(x) for x in args.sizes.split(",")),
                  tuple(int(x) for x in args.slice_ms.split(",")), args.seed, args.process_model,
                  tuple(args.arms.split(",")) if args.arms else None, args.counters)
        return 0
    table = summarize(_done(args.rows), args.timing)
    if args.json:
        print(json.dumps(table, indent=1))
    else:
        print(condensed(table) if args.condensed else markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
