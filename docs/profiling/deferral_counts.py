#!/usr/bin/env python3
"""Counted per-message costs of two zlink builds, interleaved: with and without a change.

Written for docs/profiling/2026-12-02-deferral-decision.md (issue 42: keep or revert
the engine's deferred wake-up). For every repetition, cell and library (the order of
the libraries reversed every repetition) the one-process bench runs with N and with
2N measured messages (PUSH_PULL: messages, REQ_REP: round trips) and the difference
is divided by N, so start-up, handshake and shutdown cancel. Three instruments, each
run on the same argv:

  perf       perf stat, native: syscalls by name (tracepoints), context switches,
             and the bench process's voluntary / involuntary context switches from
             wait4()'s rusage (all its threads; perf's own few cancel in N/2N).
  strace     strace -f -y: read/write-like calls split by descriptor kind (eventfd =
             a wake-up signal, TCP = data), which tracepoints cannot tell apart.
  callgrind  instructions per message (valgrind serialises the threads).

The whole process is pinned to one CPU (--cpu) so the counts depend on the code path
and the scheduler's slice, not on whether the other core is free. Libraries are
registered testbed names (e.g. zlink and zlink@BRANCH, built by `./testbed bench
--lib NAME`); run with the testbed's python:

  analysis/.venv/bin/python docs/profiling/deferral_counts.py \\
      --lib zlink --lib zlink@zlink-nodefer --reps 3 --out rows.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))

from testbed.bench.command import bench_argv, binary_for  # noqa: E402
from testbed.bench.profile_cmd import (  # noqa: E402
    SYSCALLS_OF_INTEREST,
    parse_callgrind,
    per_message,
    run_strace,
)
from testbed.toolchain.libraries import find_built  # noqa: E402

LARGE = 16384
LOCKSTEP = {"REQ_REP"}  # measured in round trips (--mode lat)


def argv_for(lib, pattern: str, transport: str, size: int, n: int, timeout_ms: int,
             pins: dict) -> list[str]:
    binary = binary_for(lib, pattern)
    if pattern in LOCKSTEP:
        return bench_argv(binary, transport, size, lat_count=n, lat_warmup=50, mode="lat",
                          timeout_ms=timeout_ms, **pins)
    return bench_argv(binary, transport, size, count=n, warmup=50, mode="thr", timeout_ms=timeout_ms,
                      **pins)


def perf_run(argv: list[str], cpu: str) -> dict[str, float]:
    events = ["context-switches"] + [f"syscalls:sys_enter_{s}" for s in SYSCALLS_OF_INTEREST]
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as out:
        cmd = ["perf", "stat", "-x,", "-o", out.name, "-e", ",".join(events), "taskset", "-c", cpu, *argv]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if status != 0:
            raise RuntimeError(f"{' '.join(argv[:6])}... exited {status}: {err[-300:]}")
        counts = {"vol_cs": float(usage.ru_nvcsw), "invol_cs": float(usage.ru_nivcsw)}
        for line in out.read().splitlines():
            parts = line.split(",")
            if len(parts) > 3 and not line.startswith("#"):
                name = parts[2].removeprefix("syscalls:sys_enter_")
                counts[name] = float(parts[0]) if parts[0].replace(".", "").isdigit() else 0.0
    return counts


def strace_run(argv: list[str], cpu: str) -> dict[str, float]:
    """Calls on eventfds and sockets only (the bench's own /proc reads vary per run)."""
    with tempfile.TemporaryDirectory() as tmp:
        counts = run_strace(["taskset", "-c", cpu, *argv], Path(tmp) / "log")
    return {k: float(v) for k, v in counts.items() if k.endswith((":eventfd", ":socket", ":TCP", ":UNIX"))}


def callgrind_run(argv: list[str], cpu: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        cmd = ["taskset", "-c", cpu, "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"callgrind {' '.join(argv[:6])}... exited {proc.returncode}: "
                               f"{proc.stderr[-300:]}")
        return {"instructions": float(parse_callgrind(out).total)}


INSTRUMENTS = {"perf": perf_run, "strace": strace_run, "callgrind": callgrind_run}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", action="append", required=True, help="registered library name (2+)")
    parser.add_argument("--cells", default="PUSH_PULL:inproc:64,PUSH_PULL:inproc:65536,PUSH_PULL:tcp:64,"
                        "PUSH_PULL:tcp:65536,REQ_REP:inproc:64,REQ_REP:inproc:65536,REQ_REP:tcp:64,"
                        "REQ_REP:tcp:65536", help="PATTERN:transport:size,...")
    parser.add_argument("--what", default="perf,strace,callgrind")
    parser.add_argument("--count-small", type=int, default=20000)
    parser.add_argument("--count-large", type=int, default=1000)
    parser.add_argument("--callgrind-divisor", type=int, default=4, help="callgrind runs count/this")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cpu", default="1", help="taskset CPU list of the whole process")
    parser.add_argument("--split", action="store_true",
                        help="the bench's sender on CPU 0, its receiver (and the IO thread) on CPU 1")
    parser.add_argument("--out", type=Path, required=True, help="JSON lines appended here, one per run pair")
    args = parser.parse_args()
    libs = [find_built(name) for name in args.lib]
    pins = {"pin_sender": "0", "pin_receiver": "1"} if args.split else {}
    what = args.what.split(",")
    bad = [w for w in what if w not in INSTRUMENTS]
    if bad or len(libs) < 2:
        raise SystemExit(f"--what {bad} unknown (allowed: {', '.join(INSTRUMENTS)}) or fewer than 2 --lib")
    cells = []
    for item in args.cells.split(","):
        pattern, transport, size = item.split(":")
        cells.append((pattern, transport, int(size)))
    for rep in range(args.reps):
        order = libs if rep % 2 == 0 else list(reversed(libs))
        for pattern, transport, size in cells:
            for instrument in what:
                n = args.count_large if size >= LARGE else args.count_small
                if instrument == "callgrind":
                    n //= args.callgrind_divisor
                timeout = 120000 if instrument != "perf" else 10000
                for lib in order:
                    run = INSTRUMENTS[instrument]
                    runs = [run(argv_for(lib, pattern, transport, size, k, timeout, pins), args.cpu)
                            for k in (n, 2 * n)]
                    row = {"rep": rep, "library": lib.name, "build_id": lib.info.get("build_id"),
                           "commit": lib.info.get("commit"), "instrument": instrument, "pattern": pattern,
                           "transport": transport, "size": size, "count": n, "cpu": args.cpu, **pins,
                           "per_msg": per_message(runs[0], runs[1], n),
                           "argv_N": argv_for(lib, pattern, transport, size, n, timeout, pins)}
                    with args.out.open("a", encoding="utf-8") as fh:
                        fh.write(json.dumps(row) + "\n")
                    print(f"rep {rep} {lib.name} {instrument} {pattern} {transport} {size}: "
                          + " ".join(f"{k}={v:.4g}" for k, v in row["per_msg"].items() if abs(v) >= 0.001),
                          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
