#!/usr/bin/env python3
"""Which thread switches out, and why, per message: the two-process bench under
`perf record -e sched:sched_switch`, one run of N and one of 2N messages.

Written for docs/profiling/2026-12-03-curve-wakeups.md (issue 42). curve_counts.py
counts switches of both processes together; this splits them by process and
thread (by the names the bench and the libraries give their threads), and by
the state the thread left the CPU in: R = preempted (involuntary), anything else =
went to sleep (voluntary). Per message = (2N - N) / N, as curve_counts.py.

  python3 curve_switches.py --arm after=BENCH:LIBDIR:curve[:VAR=VALUE,...] \\
      --size 262144 --count 500 --reps 3
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from curve_counts import parse_arm
from engine_measure import bench_argv, env_for


def switches(argv: list[str], env: dict, cpu: str) -> Counter:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        rec = subprocess.run(["perf", "record", "-q", "-e", "sched:sched_switch", "-o", str(data),
                              "taskset", "-c", cpu, *argv],
                             env=env, capture_output=True, text=True, timeout=600, check=False)
        if rec.returncode != 0:
            raise RuntimeError(f"perf record failed: {rec.stderr[-400:]}")
        out = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,pid,tid,trace"],
                             capture_output=True, text=True, timeout=600, check=True).stdout
    raw: Counter = Counter()
    # Lines of `perf script -F comm,pid,tid,trace`: "comm pid/tid prev_comm=.. prev_state=S ==> ..".
    for line in out.splitlines():
        m = re.match(r"^\s*(.+?)\s+(\d+)/(\d+)\s+(.*)$", line)
        if not m:
            continue
        comm, pid, trace = m.group(1), int(m.group(2)), m.group(4)
        st = re.search(r"prev_state=(\S+)", trace)
        if not st:
            continue
        raw[(pid, comm, "preempted" if st.group(1).startswith("R") else "slept")] += 1
    # The bench names its threads: bench-receiver / bench-sender (the application
    # thread of each process), bench-main, -watchdog, -control; the libraries name
    # their IO threads (zlink/IO/0, ZMQbg/IO/0) and reapers.
    role = {pid: comm.split("-")[1] for (pid, comm, _) in raw if comm in ("bench-receiver", "bench-sender")}
    per: Counter = Counter()
    for (pid, comm, why), n in raw.items():
        if pid in role:
            thread = ("app" if comm in ("bench-receiver", "bench-sender")
                      else "io" if "/IO/" in comm else "other")
            per[f"{role[pid]}.{thread}.{why}"] += n
    return per


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arm", action="append", required=True)
    p.add_argument("--pattern", default="pair")
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--hwm", type=int, default=1000)
    p.add_argument("--cpu", default="0")
    p.add_argument("--port", type=int, default=21791)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    args.mode, args.process_model = "thr", "two-process"
    arms = [parse_arm(a) for a in args.arm]
    samples: dict[str, list[dict]] = {a[0]: [] for a in arms}
    for rep in range(args.reps):
        order = arms[rep % len(arms):] + arms[:rep % len(arms)]
        for name, bench, libdir, security, extra in order:
            env = env_for(libdir)
            env["BENCH_SECURITY"] = security
            env.update(extra)
            one = switches(bench_argv(bench, args, "tcp", args.size, args.count), env, args.cpu)
            two = switches(bench_argv(bench, args, "tcp", args.size, 2 * args.count), env, args.cpu)
            keys = set(one) | set(two)
            samples[name].append({k: (two[k] - one[k]) / args.count for k in keys})
    with (args.out.open("a") if args.out else open("/dev/null", "w")) as f:
        for name, *_ in arms:
            keys = sorted({k for r in samples[name] for k in r})
            row = {"instrument": "curve_switches", "arm": name, "size": args.size, "count": args.count,
                   "cpu": args.cpu, "reps": args.reps}
            for k in keys:
                values = [r.get(k, 0.0) for r in samples[name]]
                row[k] = statistics.median(values)
                row[k + "_runs"] = values
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
