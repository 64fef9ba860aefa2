#!/usr/bin/env python3
"""Per-message counts of CURVE against NULL for several library builds, paired.

Written for docs/profiling/2026-12-03-curve-large.md (issue 42). engine_measure.py
gives every library the same environment; here each arm is a library AND a
mechanism (BENCH_SECURITY), so NULL and CURVE of every build interleave in one run.

Per arm and repetition: perf stat over a run of N and one of 2N messages, per message
= (2N - N) / N (start-up, handshake and shutdown cancel), with the bench's processes
pinned to one CPU (taskset, as engine_measure.py's counts and the testbed's one-core
placement). Counted: context switches, CPU migrations, page faults, task-clock, all
syscalls and the ones that move data or sleep, scheduler wake-ups, wall time, and (getrusage of
the bench processes, via /usr/bin/time) voluntary and involuntary context switches.
Arms run in a rotated order each repetition; rows keep every repetition (`*_runs`) so
arms pair by index.

  python3 curve_counts.py --arm before-curve=BENCH:LIBDIR:curve --arm after-curve=... \\
      --size 262144 --count 1000 --reps 5 --out rows.jsonl
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_measure import bench_argv, env_for, perf_counts

EVENTS = {
    "context-switches": "context_switches", "cpu-migrations": "cpu_migrations",
    "page-faults": "page_faults", "task-clock": "task_clock_ms",
    "raw_syscalls:sys_enter": "syscalls", "sched:sched_wakeup": "wakeups",
    "syscalls:sys_enter_sendmsg": "sendmsg", "syscalls:sys_enter_recvfrom": "recvfrom",
    "syscalls:sys_enter_read": "read", "syscalls:sys_enter_write": "write",
    "syscalls:sys_enter_epoll_wait": "epoll_wait", "syscalls:sys_enter_poll": "poll",
    "syscalls:sys_enter_futex": "futex",
    # Wall-clock time of the run; its N/2N difference is the steady-state time per
    # message (indicative: perf's tracepoints slow the syscalls it counts).
    "duration_time": "wall_ns",
}


def parse_arm(text: str) -> tuple[str, Path, str | None, str, dict[str, str]]:
    """NAME=BENCH_DIR:LIBDIR:null|curve[:VAR=VALUE,...]; the optional tail sets
    environment variables for this arm only (an experiment's switch in one build)."""
    name, _, rest = text.partition("=")
    parts = rest.split(":", 3)
    if not name or len(parts) < 3 or parts[2] not in ("null", "curve"):
        raise SystemExit(f"--arm {text!r}: expected NAME=BENCH_DIR:LIBDIR:null|curve[:VAR=VALUE,...] "
                         "(LIBDIR may be empty)")
    extra = dict(item.split("=", 1) for item in parts[3].split(",") if item) if len(parts) == 4 else {}
    return name, Path(parts[0]), parts[1] or None, parts[2], extra


def one_run(bench: Path, libdir: str | None, security: str, args, count: int,
            extra: dict[str, str] | None = None) -> dict[str, float]:
    env = env_for(libdir)
    env["BENCH_SECURITY"] = security
    env.update(extra or {})
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        argv = ["/usr/bin/time", "-f", "%w %c", "-o", t.name,
                *bench_argv(bench, args, "tcp", args.size, count)]
        counts = perf_counts(argv, env, args.cpu, EVENTS)
        voluntary, involuntary = (float(x) for x in t.read().split()[-2:])
    counts["voluntary_switches"], counts["involuntary_switches"] = voluntary, involuntary
    return counts


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arm", action="append", required=True, help="NAME=BENCH_DIR:LIBDIR:null|curve")
    p.add_argument("--pattern", default="pair")
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--count", type=int, required=True, help="N (the second run sends 2N)")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--hwm", type=int, default=1000)
    p.add_argument("--cpu", default="0")
    p.add_argument("--port", type=int, default=21790)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    # What bench_argv reads: throughput runs, a receiver and a sender process.
    args.mode, args.process_model = "thr", "two-process"
    arms = [parse_arm(a) for a in args.arm]
    samples: dict[str, list[dict]] = {a[0]: [] for a in arms}
    for rep in range(args.reps):
        order = arms[rep % len(arms):] + arms[:rep % len(arms)]
        for name, bench, libdir, security, extra in order:
            one = one_run(bench, libdir, security, args, args.count, extra)
            two = one_run(bench, libdir, security, args, 2 * args.count, extra)
            samples[name].append({k: (two[k] - one[k]) / args.count for k in one})
    rows = []
    for name, bench, libdir, security, extra in arms:
        reps = samples[name]
        row = {"instrument": "curve_counts", "arm": name, "security": security, "libdir": libdir,
               "env": extra,
               "pattern": args.pattern, "transport": "tcp", "size": args.size, "count": args.count,
               "hwm": args.hwm, "cpu": args.cpu, "reps": len(reps)}
        for key in reps[0]:
            values = [r[key] for r in reps]
            row[key] = statistics.median(values)
            row[key + "_runs"] = values
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        with args.out.open("a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
