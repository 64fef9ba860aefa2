#!/usr/bin/env python3
"""Per-message counted work of the large-message path, per side, beside the plain socket pump.

Written for docs/profiling/2026-12-02-large-path.md (issue 42.1). For each cell
(transport:size) and placement it runs every library's bench and the pump
(bench/ceiling's ceiling_probe, blocking writes and reads of one message each) with
N and 2N messages under `perf stat`, one perf per process (receiver and sender apart),
and keeps (2N - N) / N per message, so start-up, handshake and shutdown cancel.
Libraries and the pump are interleaved, the order reversed every repetition.

Counted per side (software events and tracepoints; this host has no hardware counters):
context switches, wake-ups the side's threads performed (sched:sched_wakeup fires in
the waker), page faults, task-clock, all syscalls, and the data syscalls by name
(sendmsg, sendto, write, writev, recvfrom, recvmsg, read, readv), the waits
(epoll_wait, poll, ppoll, futex). Bytes per data syscall = message bytes / data calls.
With --memcpy SHIM.so one more N/2N pair per library runs with the memcpy_count shim
(memcpy_count.c) for user-space bytes copied per message (timing perturbed; counts only).

Placements: one-core (both sides on CPU 0), split (sender CPU 0, receiver CPU 1), as the
testbed's pins. tcp/ipc run as two processes (the testbed default); inproc as one
process, its two perf figures then being the whole process (side "both").

  python3 per_message.py --lib zlink=build/bench/zlink --lib libzmq=build/bench/libzmq-4.3.5 \\
      --pump build/bench/zlink/ceiling_probe --cells tcp:262144,ipc:262144,inproc:65536 \\
      --placements one-core,split --reps 3 --out rows.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVENTS = {
    "context-switches": "cs", "cpu-migrations": "migrations", "page-faults": "faults",
    "task-clock": "task_ms", "sched:sched_wakeup": "wakeups", "raw_syscalls:sys_enter": "syscalls",
    "syscalls:sys_enter_sendmsg": "sendmsg", "syscalls:sys_enter_sendto": "sendto",
    "syscalls:sys_enter_write": "write", "syscalls:sys_enter_writev": "writev",
    "syscalls:sys_enter_recvfrom": "recvfrom", "syscalls:sys_enter_recvmsg": "recvmsg",
    "syscalls:sys_enter_read": "read", "syscalls:sys_enter_readv": "readv",
    "syscalls:sys_enter_epoll_wait": "epoll_wait", "syscalls:sys_enter_poll": "poll",
    "syscalls:sys_enter_ppoll": "ppoll", "syscalls:sys_enter_futex": "futex",
}
DATA_OUT = ("sendmsg", "sendto", "write", "writev")
DATA_IN = ("recvfrom", "recvmsg", "read", "readv")
PINS = {"one-core": ("0", "0"), "split": ("0", "1")}  # (sender, receiver)


def parse_lib(text: str) -> tuple[str, Path, str | None]:
    name, _, rest = text.partition("=")
    bench, _, libdir = rest.partition(":")
    if not name or not bench:
        raise SystemExit(f"--lib {text!r}: expected NAME=BENCH_DIR[:LIBDIR]")
    return name, Path(bench), libdir or None


def env_for(libdir: str | None, preload: str | None = None, memcpy_out: str | None = None,
            send_buffers: int | None = None) -> dict:
    env = dict(os.environ)
    if send_buffers is not None:  # the bench's payload path (bench/README.md, --send-buffers)
        env["BENCH_SEND_BUFFERS"] = str(send_buffers)
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    if preload:
        env["LD_PRELOAD"] = preload
        env["MEMCPY_COUNT_OUT"] = memcpy_out or ""
    return env


def perf_prefix(out: str) -> list[str]:
    return ["perf", "stat", "-x,", "-o", out, "-e", ",".join(EVENTS)]


def read_perf(path: str) -> dict[str, float]:
    values = {}
    for line in Path(path).read_text().splitlines():
        parts = line.split(",")
        if len(parts) > 3 and parts[0] and not line.startswith("#"):
            try:
                values[parts[2]] = float(parts[0])
            except ValueError:
                pass
    return {key: values.get(event, float("nan")) for event, key in EVENTS.items()}


class Runner:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.port = args.port

    def next_endpoint(self, transport: str) -> str:
        self.port += 2  # the bench's control connection takes port + 1
        if transport == "tcp":
            return f"tcp://127.0.0.1:{self.port}"
        return f"ipc:///tmp/per-message-{os.getpid()}-{self.port}.ipc"

    def bench_common(self, transport: str, size: int, count: int) -> list[str]:
        a = self.args
        common = ["--transport", transport, "--size", str(size), "--count", str(count),
                  "--warmup", str(a.warmup), "--mode", "thr"]
        if a.hwm is not None:
            common += ["--hwm", str(a.hwm)]
        if a.io_threads:
            common += ["--io-threads", str(a.io_threads)]
        return common

    def run_pair(self, receiver: list[str], sender: list[str], env: dict, perf: bool) -> dict:
        """Starts the receiver, then the sender; returns {side: counts} and the receiver's JSON."""
        with tempfile.TemporaryDirectory() as tmp:
            outs = {"receiver": f"{tmp}/r.perf", "sender": f"{tmp}/s.perf"}
            rp = (perf_prefix(outs["receiver"]) if perf else []) + receiver
            sp = (perf_prefix(outs["sender"]) if perf else []) + sender
            r = subprocess.Popen(rp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(0.05)
            s = subprocess.run(sp, env=env, capture_output=True, text=True, timeout=600)
            r_out, r_err = r.communicate(timeout=600)
            if r.returncode != 0 or s.returncode != 0:
                raise RuntimeError(f"run failed: receiver {r.returncode} {r_err[-300:]} / "
                                   f"sender {s.returncode} {s.stderr[-300:]}")
            line = json.loads(r_out.strip().splitlines()[-1]) if r_out.strip() else {}
            counts = {side: read_perf(p) for side, p in outs.items()} if perf else {}
            return {"counts": counts, "json": line}

    def run_one(self, bench: Path, transport: str, size: int, count: int, placement: str,
                env: dict, perf: bool = True) -> dict:
        pin_s, pin_r = PINS[placement]
        common = self.bench_common(transport, size, count)
        binary = str(bench / f"bench_{self.args.pattern}")
        if transport == "inproc":
            argv = [binary, *common, "--pin-sender", pin_s, "--pin-receiver", pin_r]
            with tempfile.TemporaryDirectory() as tmp:
                out = f"{tmp}/b.perf"
                res = subprocess.run((perf_prefix(out) if perf else []) + argv, env=env,
                                     capture_output=True, text=True, timeout=600)
                if res.returncode != 0:
                    raise RuntimeError(f"{argv} exited {res.returncode}: {res.stderr[-300:]}")
                return {"counts": {"both": read_perf(out)} if perf else {},
                        "json": json.loads(res.stdout.strip().splitlines()[-1])}
        ep = self.next_endpoint(transport)
        receiver = [binary, *common, "--role", "receiver", "--bind", ep, "--pin-receiver", pin_r]
        sender = [binary, *common, "--role", "sender", "--connect", ep, "--pin-sender", pin_s]
        return self.run_pair(receiver, sender, env, perf)

    def run_pump(self, transport: str, size: int, count: int, placement: str, env: dict,
                 perf: bool = True) -> dict:
        pin_s, pin_r = PINS[placement]
        probe = str(self.args.pump)
        common = ["--transports", transport, "--sizes", str(size), "--bytes", str(count * size),
                  "--write-sizes", str(size), "--io-waits", "blocking", "--mode", "thr"]
        ep = self.next_endpoint(transport)
        receiver = [probe, *common, "--role", "receiver", "--bind", ep, "--pin-receiver", pin_r]
        sender = [probe, *common, "--role", "sender", "--connect", ep, "--pin-sender", pin_s]
        return self.run_pair(receiver, sender, env, perf)


def per_message(one: dict, two: dict, n: int) -> dict:
    return {k: (two[k] - one[k]) / n for k in one}


def derive(c: dict, size: int) -> dict:
    """Bytes per data call (message bytes over that side's data syscalls)."""
    out_calls = sum(c.get(k, 0) for k in DATA_OUT)
    in_calls = sum(c.get(k, 0) for k in DATA_IN)
    c = dict(c)
    c["data_out_calls"], c["data_in_calls"] = out_calls, in_calls
    c["bytes_per_out_call"] = size / out_calls if out_calls > 0.01 else None
    c["bytes_per_in_call"] = size / in_calls if in_calls > 0.01 else None
    return c


def memcpy_rows(runner: Runner, name: str, bench: Path | None, libdir: str | None, transport: str,
                size: int, n: int, placement: str) -> dict:
    """User-space bytes copied per message and side (memcpy_count shim), N/2N."""
    per = {}
    for count in (n, 2 * n):
        with tempfile.NamedTemporaryFile("r", suffix=".memcpy") as f:
            env = env_for(libdir, str(runner.args.memcpy), f.name)
            if bench is None:
                runner.run_pump(transport, size, count, placement, env, perf=False)
            else:
                runner.run_one(bench, transport, size, count, placement, env, perf=False)
            lines = [dict(kv.split("=", 1) for kv in line.split()[1:]) for line in f.read().splitlines()]
        # the bench/probe processes only, not the wrappers (perf, taskset, sh)
        total = {"bytes": 0, "large_bytes": 0, "calls": 0, "large_calls": 0}
        for line in lines:
            if line["comm"] not in ("perf", "taskset", "sh"):
                for k in total:
                    total[k] += int(line[k])
        per[count] = total
    return {f"memcpy_{k}": (per[2 * n][k] - per[n][k]) / n for k in per[n]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", action="append", default=[], help="NAME=BENCH_DIR[:LIBDIR]")
    p.add_argument("--pump", type=Path, help="ceiling_probe binary (the plain socket pump)")
    p.add_argument("--memcpy", type=Path, help="memcpy_count.so: also count user-space copies")
    p.add_argument("--pattern", default="push_pull")
    p.add_argument("--cells", default="tcp:262144,ipc:262144,inproc:65536")
    p.add_argument("--placements", default="one-core,split")
    p.add_argument("--n", type=int, default=2000, help="messages of the short run (the long: 2N)")
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--hwm", type=int, help="bench --hwm (default: the library's)")
    p.add_argument("--io-threads", type=int)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--send-buffers", default="",
                   help="comma list, e.g. 0,16: every library runs once per value, interleaved "
                        "(0 = zmq_send, N = zero copy from a ring of N); default: the environment's")
    p.add_argument("--port", type=int, default=23400)
    p.add_argument("--out", type=Path, help="append every row (JSON lines) here")
    args = p.parse_args()
    libs = [parse_lib(t) for t in args.lib]
    runner = Runner(args)
    rings = [int(v) for v in args.send_buffers.split(",") if v] or [None]
    arms = [(name, bench, libdir, sb) for name, bench, libdir in libs for sb in rings]
    if args.pump:
        arms.append(("pump", None, None, None))
    for cell in args.cells.split(","):
        transport, _, size_text = cell.partition(":")
        size = int(size_text)
        for placement in args.placements.split(","):
            for rep in range(args.reps):
                order = arms if rep % 2 == 0 else list(reversed(arms))
                for name, bench, libdir, sb in order:
                    if bench is None and transport == "inproc":
                        continue  # the pump is a stream-socket probe
                    env = env_for(libdir, send_buffers=sb)
                    def run(count: int, bench=bench, transport=transport, size=size,
                            placement=placement, env=env) -> dict:
                        if bench is None:
                            return runner.run_pump(transport, size, count, placement, env)
                        return runner.run_one(bench, transport, size, count, placement, env)
                    try:
                        one, two = run(args.n), run(2 * args.n)
                    except Exception as e:  # noqa: BLE001 - a failed run is a row too
                        row = {"library": name, "send_buffers": sb, "transport": transport, "size": size,
                               "placement": placement, "rep": rep, "error": str(e)[-500:]}
                        print(json.dumps(row), flush=True)
                        if args.out:
                            with args.out.open("a") as f:
                                f.write(json.dumps(row) + "\n")
                        continue
                    for side in one["counts"]:
                        row = {"library": name, "send_buffers": sb, "pattern": args.pattern,
                               "transport": transport,
                               "size": size, "placement": placement, "rep": rep, "side": side,
                               "n": args.n, "hwm": args.hwm, "io_threads": args.io_threads,
                               **derive(per_message(one["counts"][side], two["counts"][side], args.n),
                                        size)}
                        thr = two["json"].get("throughput") or {}
                        row["msgs_per_sec_2n"] = thr.get("msgs_per_sec")
                        print(json.dumps(row), flush=True)
                        if args.out:
                            with args.out.open("a") as f:
                                f.write(json.dumps(row) + "\n")
            if args.memcpy:
                for name, bench, libdir, _ in arms:
                    if bench is None and transport == "inproc":
                        continue
                    row = {"library": name, "pattern": args.pattern, "transport": transport,
                           "size": size, "placement": placement, "instrument": "memcpy",
                           **memcpy_rows(runner, name, bench, libdir, transport, size, args.n,
                                         placement)}
                    print(json.dumps(row), flush=True)
                    if args.out:
                        with args.out.open("a") as f:
                            f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
