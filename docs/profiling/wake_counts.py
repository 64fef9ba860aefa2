#!/usr/bin/env python3
"""Wake-ups per message on the receive path, counted under callgrind (deterministic).

Written for docs/profiling/2026-12-02-wakeups.md (issue 42.3). A PUSH_PULL bench
runs as two processes; the receiver runs under callgrind (the sender natively),
with N and 2N messages, and per message = (2N - N) / N, so start-up and shutdown
cancel. From the receiver's callgrind file it counts calls by (caller, callee):

  mailbox_posts   zlink::mailbox::post: commands posted to a thread's mailbox
                  (the socket's: activate_read and pipe commands from the IO thread)
  eventfd_wakes   write() called from mailbox::post: the poster found the owner
                  asleep and signalled its eventfd (a real wake-up of a thread)
  writes          every write() in the process (eventfd signals of any kind)
  instructions    total Ir

valgrind runs one thread at a time, so whether a reader is asleep when its
wake-up is owed follows valgrind's scheduler, not the kernel's: these are
code-path counts for a before/after of one change, not native figures (those
are perf stat's, per_message.py). zlink only (the names are zlink's).

  python3 wake_counts.py --lib before=BENCH_DIR:LIBDIR --lib after=BENCH_DIR:LIBDIR \\
      --cells tcp:64:20000,tcp:262144:200 --out rows.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FN = re.compile(r"^fn=\((\d+)\)(?: (.*))?$")
CFN = re.compile(r"^cfn=\((\d+)\)(?: (.*))?$")


def calls_by_pair(path: Path) -> tuple[dict[tuple[str, str], int], int]:
    """{(caller, callee): calls} and total Ir from one callgrind.out file."""
    names: dict[str, str] = {}
    pairs: dict[tuple[str, str], int] = {}
    total = 0
    caller = callee = None
    with path.open(errors="replace") as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
                continue
            m = FN.match(line)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                caller = names.get(m.group(1), "")
                continue
            c = CFN.match(line)
            if c:
                if c.group(2):
                    names[c.group(1)] = c.group(2)
                callee = names.get(c.group(1), "")
                continue
            if line.startswith("calls=") and callee is not None:
                key = (caller or "", callee)
                pairs[key] = pairs.get(key, 0) + int(line[6:].split()[0])
                callee = None
    return pairs, total


def figures(pairs: dict[tuple[str, str], int], total: int) -> dict[str, int]:
    def is_write(name: str) -> bool:
        return name in ("write", "__libc_write", "__write")

    return {
        "mailbox_posts": sum(n for (_, e), n in pairs.items() if e.startswith("zlink::mailbox::post(")),
        "eventfd_wakes": sum(n for (r, e), n in pairs.items()
                             if r.startswith("zlink::mailbox::post(") and is_write(e)),
        "writes": sum(n for (_, e), n in pairs.items() if is_write(e)),
        "instructions": total,
    }


def run(bench: Path, libdir: str | None, transport: str, size: int, count: int, port: int,
        tmp: str) -> dict[str, int]:
    env = dict(os.environ)
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    ep = f"tcp://127.0.0.1:{port}" if transport == "tcp" else f"ipc://{tmp}/wake-{port}.ipc"
    binary = str(bench / "bench_push_pull")
    common = ["--transport", transport, "--size", str(size), "--count", str(count), "--warmup", "50",
              "--mode", "thr"]
    out = Path(tmp) / f"callgrind.{port}.out"
    receiver = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary,
                                 *common, "--role", "receiver", "--bind", ep],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sender = subprocess.run([binary, *common, "--role", "sender", "--connect", ep, "--timeout-ms", "120000"],
                            env=env, capture_output=True, text=True, timeout=1800)
    r_out, r_err = receiver.communicate(timeout=1800)
    if receiver.returncode != 0 or sender.returncode != 0:
        raise RuntimeError(f"run failed: receiver {receiver.returncode} {r_err[-300:]} / "
                           f"sender {sender.returncode} {sender.stderr[-300:]}")
    return figures(*calls_by_pair(out))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", action="append", default=[], help="NAME=BENCH_DIR[:LIBDIR]")
    p.add_argument("--cells", required=True, help="transport:size:N,... (runs N and 2N messages)")
    p.add_argument("--port", type=int, default=26400)
    p.add_argument("--out", type=Path, help="append every row (JSON lines) here")
    args = p.parse_args()
    port = args.port
    for cell in args.cells.split(","):
        transport, size_text, n_text = cell.split(":")
        size, n = int(size_text), int(n_text)
        for spec in args.lib:
            name, _, rest = spec.partition("=")
            bench, _, libdir = rest.partition(":")
            with tempfile.TemporaryDirectory() as tmp:
                port += 2  # the bench's control connection takes port + 1
                one = run(Path(bench), libdir or None, transport, size, n, port, tmp)
                port += 2
                two = run(Path(bench), libdir or None, transport, size, 2 * n, port, tmp)
            row = {"library": name, "transport": transport, "size": size, "n": n,
                   **{k: (two[k] - one[k]) / n for k in one}}
            print(json.dumps(row), flush=True)
            if args.out:
                with args.out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
