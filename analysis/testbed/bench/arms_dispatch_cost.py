"""What the arms bench's dispatch costs per message, counted with callgrind.

The same cell (one process, --mode thr) runs under callgrind as bench_<pattern> built
against the library, at two message counts, and as bench_arms_<pattern> with that
library as its one arm, whose slice dump covers exactly the slice's messages. From
the dumps (read here in callgrind's own format, for exact self costs and call
counts):

- dispatch: the self cost of the arms binary's zmq_* functions (the shims of
  bench/arms/dispatch.cpp) per message, and the calls into them per message;
- for scale: the whole process's instructions per message in the arms slice, and
  bench's marginal instructions per message (the difference between its two runs
  over the difference in messages, free of set-up).

bench_<pattern> calls the library through the PLT (one `jmp *GOT` per call, which
callgrind attributes to the calling function); the arms binary calls its shim
directly, and the shim jumps to the table's entry. So the net difference per call is
the shim's cost less one instruction.

    python -m testbed.bench.arms_dispatch_cost --lib zlink --lib libzmq-4.3.5
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from testbed.bench import callgrind_slices
from testbed.bench.arms_binaries import arms_binary, shared_object
from testbed.bench.command import Arm, ArmLib, arms_argv, bench_argv

WARMUP = 1000
_COMPRESSED = re.compile(r"\((\d+)\)(?: (.*))?$")


def read_costs(path: Path) -> tuple[Counter, Counter]:
    """(self cost per (object, function), call count per (object, function, callee
    object, callee)) of one callgrind dump, its name compression undone."""
    names: dict[tuple[str, str], str] = {}

    def name(kind: str, text: str) -> str:
        m = _COMPRESSED.match(text)
        if not m:
            return text
        if m.group(2) is not None:
            names[(kind, m.group(1))] = m.group(2)
        return names.get((kind, m.group(1)), text)

    self_cost: Counter = Counter()
    calls: Counter = Counter()
    ob = fn = cob = cfn = ""
    pending: int | None = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            key, _, value = line.partition("=")
            if key in ("ob", "fn", "cob", "cfn"):
                resolved = name("ob" if key.endswith("ob") else "fn", value)
                if key == "ob":
                    ob = resolved
                elif key == "fn":
                    fn, cob = resolved, ""
                elif key == "cob":
                    cob = resolved
                else:
                    cfn = resolved
            elif key in ("fl", "fi", "fe", "cfi", "cfl"):
                name("fl", value)
            elif key == "calls":
                pending = int(value.split()[0])
            elif line[:1].isdigit() or line[:1] in "+-*":
                parts = line.split()
                if pending is not None:  # the inclusive cost of that call: not self
                    calls[(ob, fn, cob or ob, cfn)] += pending
                    pending = None
                elif len(parts) > 1:
                    self_cost[(ob, fn)] += int(parts[1])
    return self_cost, calls


def _callgrind(argv: list[str], out: Path) -> None:
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} under callgrind exited {done.returncode}: {done.stderr[-800:]}")


def _total(path: Path) -> int:
    return sum(read_costs(path)[0].values())


def measure(lib_name: str, pattern: str, size: int, counts: tuple[int, int]) -> dict:
    from testbed.toolchain.libraries import find_built
    lib = find_built(lib_name)
    bench, arms = lib.bench_binary(pattern), arms_binary(pattern)
    common = {"mode": "thr", "io_threads": 1, "timeout_ms": 600000}
    with tempfile.TemporaryDirectory() as tmp:
        bench_totals = []
        for n in counts:
            out = Path(tmp) / f"bench-{n}.out"
            _callgrind(bench_argv(bench, "tcp", size, count=n, warmup=WARMUP, **common), out)
            bench_totals.append(_total(out))
        arms_dir = Path(tmp) / "arms"
        arms_dir.mkdir()
        one_arm = ([ArmLib("lib", str(shared_object(lib)))], [Arm("only", "lib")])
        _callgrind(arms_argv(arms, "tcp", size, *one_arm, rounds=1, warmup_rounds=0, slice_count=counts[1],
                             warmup=WARMUP, counters="off", **common), arms_dir / "callgrind.out")
        (dump,) = callgrind_slices.read_dumps([arms_dir])
        self_cost, calls = read_costs(dump.path)
    exe = arms.name
    shim = sum(v for (ob, fn), v in self_cost.items() if Path(ob).name == exe and fn.startswith("zmq_"))
    into = sum(n for (ob, fn, cob, cfn), n in calls.items()
               if Path(ob).name == exe and Path(cob).name == exe and cfn.startswith("zmq_")
               and not fn.startswith("zmq_"))
    messages = dump.messages
    return {"library": lib_name, "pattern": pattern, "size": size, "messages": messages,
            "shim_per_message": shim / messages, "calls_per_message": into / messages,
            "net_per_message": (shim - into) / messages,  # less bench's one PLT jump per call
            "process_per_message_arms": dump.instructions / messages,
            "process_per_message_bench": (bench_totals[1] - bench_totals[0]) / (counts[1] - counts[0])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.bench.arms_dispatch_cost", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", action="append", required=True, help="registered library (repeatable)")
    parser.add_argument("--pattern", default="ROUTER_ROUTER")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--counts", default="5000,20000", help="bench's two message counts (the arms "
                        "slice uses the second)")
    args = parser.parse_args(argv)
    counts = tuple(int(x) for x in args.counts.split(","))
    for name in args.lib:
        r = measure(name, args.pattern.upper(), args.size, counts)
        print(f"{name} {r['pattern']} tcp {r['size']} B, one process, {r['messages']} messages: "
              f"{r['calls_per_message']:.2f} zmq calls per message through the dispatch, "
              f"{r['shim_per_message']:.2f} dispatch instructions per message "
              f"({r['net_per_message']:+.2f} net of bench's PLT jumps) = "
              f"{100 * r['shim_per_message'] / r['process_per_message_arms']:.2f}% of the "
              f"{r['process_per_message_arms']:,.0f} instructions per message of the whole process in the "
              f"arms slice (bench_{r['pattern'].lower()}: {r['process_per_message_bench']:,.0f} per message, "
              "marginal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
