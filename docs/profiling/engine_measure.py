#!/usr/bin/env python3
"""Per-message costs of one bench pattern for several library builds, side by side.

Written for docs/profiling/2026-11-23-engine.md (issue 10). Three instruments:

  counts     perf stat, native, whole process pinned to one core (taskset -c 0):
             syscalls (raw_syscalls:sys_enter), context switches, task-clock.
             Per message = (run with 2N - run with N) / N, so start-up, handshake
             and shutdown cancel. Median over --reps, libraries interleaved.
  faults     as counts, with page faults and glibc's memory calls (mmap, munmap,
             madvise, brk, mprotect) instead of all syscalls.
  callgrind  instructions (Ir) and malloc calls per message, same N/2N difference.
             Deterministic; valgrind serialises threads, so batches look deeper
             than natively (both libraries alike).
  thr        throughput (msgs/s, receiver-timed), pinned, interleaved A B A B,
             --reps runs each: median, min, max and the ratio of medians.

counts/faults rows keep every run (<figure>_runs, in repetition order); with
--verdict they also print the testbed's paired verdict per figure (FAST/SLOW/SAME/
AMBIGUOUS, lower is better, 95% interval of the ratio).

Libraries are given as NAME=BENCH_DIR[:LIBDIR]; LIBDIR goes first on
LD_LIBRARY_PATH (the bench binaries use RUNPATH, so this swaps the library
build under one bench binary).

  python3 engine_measure.py counts --lib libzmq=B1 --lib zlink=B2:P/lib \\
      --cells tcp:64,tcp:262144 --reps 5 --out results.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

LARGE = 16384


def parse_lib(text: str) -> tuple[str, Path, str | None]:
    name, _, rest = text.partition("=")
    bench, _, libdir = rest.partition(":")
    if not name or not bench:
        raise SystemExit(f"--lib {text!r}: expected NAME=BENCH_DIR[:LIBDIR]")
    return name, Path(bench), libdir or None


def parse_cells(text: str) -> list[tuple[str, int]]:
    cells = []
    for item in text.split(","):
        transport, _, size = item.partition(":")
        if transport not in ("tcp", "ipc", "inproc") or not size.isdigit():
            raise SystemExit(f"--cells: bad cell {item!r} (want tcp|ipc|inproc:BYTES)")
        cells.append((transport, int(size)))
    return cells


def count_for(size: int, args: argparse.Namespace) -> int:
    return args.count_large if size >= LARGE else args.count_small


def bench_argv(bench: Path, args: argparse.Namespace, transport: str, size: int, count: int) -> list[str]:
    """One bench run: one process, or (--process-model two-process) a receiver and a
    sender process started by one shell, so perf stat (which follows children)
    counts both."""
    binary = str(bench / f"bench_{args.pattern}")
    count_flag = "--lat-count" if args.mode == "lat" else "--count"
    common = ["--transport", transport, "--size", str(size), count_flag, str(count), "--mode", args.mode]
    common += ["--lat-warmup", "50"] if args.mode == "lat" else ["--warmup", "50"]
    if args.hwm is not None:
        common += ["--hwm", str(args.hwm)]
    if args.process_model == "one-process":
        return [binary, *common]
    if transport == "inproc":
        raise SystemExit("two-process runs need tcp or ipc")
    ep = (f"tcp://127.0.0.1:{args.port}" if transport == "tcp" else f"ipc:///tmp/engine-measure-{args.port}.ipc")
    receiver = [binary, *common, "--role", "receiver", "--bind", ep]
    sender = [binary, *common, "--role", "sender", "--connect", ep]
    # Keep the JSON line of the side that times: the receiver (thr), the sender (lat).
    quiet_r, quiet_s = ("", " >/dev/null") if args.mode == "thr" else (" >/dev/null", "")
    script = f"{shlex.join(receiver)}{quiet_r} & {shlex.join(sender)}{quiet_s}; wait"
    return ["sh", "-c", script]


def env_for(libdir: str | None) -> dict:
    env = dict(os.environ)
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def run_bench(argv: list[str], env: dict, prefix: list[str] = ()) -> dict:
    out = subprocess.run([*prefix, *argv], check=False, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {out.returncode}: {out.stderr[-400:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- perf counts

PERF_EVENTS = {"raw_syscalls:sys_enter": "syscalls", "context-switches": "context_switches",
               "task-clock": "task_clock_ms"}
# Memory traffic of large messages: page faults and the calls by which glibc gets
# and returns memory (a fresh mmap'd or trimmed block faults page by page).
FAULT_EVENTS = {"page-faults": "page_faults", "minor-faults": "minor_faults",
                "context-switches": "context_switches", "task-clock": "task_clock_ms",
                "syscalls:sys_enter_mmap": "mmap", "syscalls:sys_enter_munmap": "munmap",
                "syscalls:sys_enter_madvise": "madvise", "syscalls:sys_enter_brk": "brk",
                "syscalls:sys_enter_mprotect": "mprotect"}


def perf_counts(argv: list[str], env: dict, cpu: str = "0", events: dict = PERF_EVENTS) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as f:
        cmd = ["perf", "stat", "-x,", "-o", f.name, "-e", ",".join(events), "taskset", "-c", cpu, *argv]
        out = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise RuntimeError(f"perf stat failed: {out.stderr[-400:]}")
        values = {}
        for line in f.read().splitlines():
            parts = line.split(",")
            if len(parts) > 3 and parts[0] and not line.startswith("#"):
                try:
                    values[parts[2]] = float(parts[0])
                except ValueError:
                    pass
    return {key: values.get(event, float("nan")) for event, key in events.items()}


def measure_counts(libs, cells, args) -> list[dict]:
    rows = []
    for transport, size in cells:
        n = count_for(size, args)
        samples = {name: [] for name, _, _ in libs}
        for rep in range(args.reps):
            order = libs if rep % 2 == 0 else list(reversed(libs))
            for name, bench, libdir in order:
                env = env_for(libdir)
                events = FAULT_EVENTS if args.instrument == "faults" else PERF_EVENTS
                one = perf_counts(bench_argv(bench, args, transport, size, n), env, args.cpu, events)
                two = perf_counts(bench_argv(bench, args, transport, size, 2 * n), env, args.cpu, events)
                samples[name].append({k: (two[k] - one[k]) / n for k in one})
        for name, reps in samples.items():
            row = {"instrument": args.instrument, "library": name, "pattern": args.pattern,
                   "mode": args.mode, "process_model": args.process_model, "hwm": args.hwm,
                   "glibc_tunables": os.environ.get("GLIBC_TUNABLES"),
                   "transport": transport, "size": size, "count": n, "reps": len(reps)}
            for key in reps[0]:
                values = [r[key] for r in reps]
                row[key] = statistics.median(values)
                row[key + "_min"], row[key + "_max"] = min(values), max(values)
                row[key + "_runs"] = values  # in rep order: pairs with the other library's
            rows.append(row)
            print(json.dumps(row), flush=True)
        if args.verdict:
            for line in paired_verdicts(rows[-len(libs):], args.reps):
                print(line, flush=True)
    return rows


def paired_verdicts(cell_rows: list[dict], reps: int) -> list[str]:
    """The testbed's paired verdict (analysis/README.md, Verdicts) of each library
    against the first, per counted figure: repetition i of both ran back to back, so
    they pair. Figures with a value <= 0 (small cells, where the N/2N difference is
    noise around zero) are skipped: the verdict works on log ratios."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))
    from testbed.stats.decide import TooFewSamples, decide_paired
    base, lines = cell_rows[0], []
    for other in cell_rows[1:]:
        for key in (k[:-5] for k in base if k.endswith("_runs")):
            ref, cand = base[key + "_runs"], other[key + "_runs"]
            where = f"{other['transport']} {other['size']} B {key}: {other['library']} vs {base['library']}"
            if min(ref + cand) <= 0:
                lines.append(f"verdict {where}: skipped (a value <= 0)")
                continue
            try:
                d = decide_paired(ref, cand, higher_is_better=False, seed=reps)
            except TooFewSamples as e:
                lines.append(f"verdict {where}: {e}")
                continue
            lines.append(f"verdict {where}: {d.verdict} ratio {d.ratio:.3f} "
                         f"[{d.low:.3f}, {d.high:.3f}] ({d.n_reference} pairs)")
    return lines


# ---------------------------------------------------------------- callgrind

CFN = re.compile(r"^cfn=\((\d+)\)(?: (.*))?$")
FN_NAME = re.compile(r"^c?fn=\((\d+)\) (.*)$")


def callgrind_totals(path: Path) -> tuple[int, int]:
    """(total Ir, calls to malloc) from one callgrind.out file."""
    names: dict[str, str] = {}
    total = 0
    mallocs = 0
    callee = None
    with path.open(errors="replace") as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
            m = FN_NAME.match(line)
            if m:
                names[m.group(1)] = m.group(2)
            c = CFN.match(line)
            if c:
                callee = c.group(2) or names.get(c.group(1), "")
                continue
            if line.startswith("calls=") and callee is not None:
                if callee == "malloc":
                    mallocs += int(line[6:].split()[0])
                callee = None
    return total, mallocs


def callgrind_run(argv: list[str], env: dict, out: Path) -> tuple[int, int]:
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv]
    res = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=3600)
    if res.returncode != 0:
        raise RuntimeError(f"callgrind failed: {res.stderr[-400:]}")
    return callgrind_totals(out)


def measure_callgrind(libs, cells, args) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for transport, size in cells:
            n = count_for(size, args) // args.callgrind_divisor
            for name, bench, libdir in libs:
                env = env_for(libdir)
                ir1, m1 = callgrind_run(bench_argv(bench, args, transport, size, n), env,
                                        Path(tmp) / "one.out")
                ir2, m2 = callgrind_run(bench_argv(bench, args, transport, size, 2 * n), env,
                                        Path(tmp) / "two.out")
                row = {"instrument": "callgrind", "library": name, "pattern": args.pattern,
                       "transport": transport, "size": size, "count": n,
                       "instructions": (ir2 - ir1) / n, "mallocs": (m2 - m1) / n}
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


# ---------------------------------------------------------------- throughput

def measure_thr(libs, cells, args) -> list[dict]:
    rows = []
    for transport, size in cells:
        n = count_for(size, args)
        samples = {name: [] for name, _, _ in libs}
        for rep in range(args.reps):
            order = libs if rep % 2 == 0 else list(reversed(libs))
            for name, bench, libdir in order:
                result = run_bench(bench_argv(bench, args, transport, size, n), env_for(libdir),
                                   ["taskset", "-c", args.cpu])
                samples[name].append(result["latency"]["p50"] if args.mode == "lat"
                                     else result["throughput"]["msgs_per_sec"])
        for name, values in samples.items():
            row = {"instrument": "thr", "library": name, "pattern": args.pattern, "transport": transport,
                   "size": size, "count": n, "reps": len(values), "mode": args.mode, "hwm": args.hwm,
                   "process_model": args.process_model,
                   ("p50_us" if args.mode == "lat" else "msgs_per_sec"): statistics.median(values),
                   "min": min(values), "max": max(values), "all": values}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("instrument", choices=("counts", "faults", "callgrind", "thr"))
    parser.add_argument("--lib", action="append", required=True, help="NAME=BENCH_DIR[:LIBDIR]")
    parser.add_argument("--pattern", default="pair")
    parser.add_argument("--mode", choices=("thr", "lat"), default="thr", help="lat: per round trip")
    parser.add_argument("--process-model", choices=("one-process", "two-process"),
                        default="one-process")
    parser.add_argument("--hwm", type=int, help="bench --hwm (default: the bench's, 0 = unlimited)")
    parser.add_argument("--port", type=int, default=21770, help="tcp port (and ipc name) of two-process runs")
    parser.add_argument("--cells", default="tcp:64,tcp:1024,tcp:65536,tcp:262144,ipc:64,ipc:1024,ipc:65536,"
                        "ipc:262144")
    parser.add_argument("--count-small", type=int, default=200000)
    parser.add_argument("--count-large", type=int, default=4000)
    parser.add_argument("--callgrind-divisor", type=int, default=10, help="callgrind runs count/this")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cpu", default="0",
                        help="taskset CPU list for counts and thr (1 while /work/QUIET)")
    parser.add_argument("--out", type=Path, help="append JSON lines here too")
    parser.add_argument("--verdict", action="store_true",
                        help="counts/faults: print the paired verdict of each library against the "
                             "first, per figure (needs numpy: run with the testbed's .venv python)")
    args = parser.parse_args()
    libs = [parse_lib(t) for t in args.lib]
    cells = parse_cells(args.cells)
    instruments = {"counts": measure_counts, "faults": measure_counts, "callgrind": measure_callgrind,
                   "thr": measure_thr}
    rows = instruments[args.instrument](libs, cells, args)
    if args.out:
        with args.out.open("a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
