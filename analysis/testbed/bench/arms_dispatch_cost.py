"""What the arms bench's dispatch costs per message, counted with callgrind.

The same cell runs under callgrind twice per binary: bench_<pattern> built against the
library, and bench_arms_<pattern> with that library as its one arm, each at two
message counts (one process, --mode thr). The harness's own functions (the binary's
object) plus the zmq_* entry functions it calls (their self cost: in the arms binary
the dispatch shim's instructions are attributed to the function it jumps to, in bench
the PLT jump to the harness function that calls) are summed, and the difference
between the two counts divided by the difference in messages gives their marginal
cost per message, free of set-up. The difference between the two binaries is the
dispatch's net cost; the arms run's slice dump gives the whole process's instructions
per message for scale.

    python -m testbed.bench.arms_dispatch_cost --lib zlink --pattern ROUTER_ROUTER --size 1024
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from testbed.bench import callgrind_slices
from testbed.bench.arms_binaries import arms_binary, shared_object
from testbed.bench.command import Arm, ArmLib, arms_argv, bench_argv

LINE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(\S+?):(.*?)\s+\[(.*)\]\s*$")
WARMUP = 1000


def self_costs(path: Path) -> list[tuple[int, str, str]]:
    """(instructions, function, object) of every function in a callgrind dump (self cost)."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", str(path)],
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            rows.append((int(m.group(1).replace(",", "")), m.group(3), m.group(4)))
    return rows


def harness_cost(path: Path, binary: Path) -> int:
    """The harness's own instructions plus the self cost of the zmq_* functions it calls."""
    return sum(n for n, fn, obj in self_costs(path)
               if Path(obj).name == binary.name or fn.startswith("zmq_"))


def _callgrind(argv: list[str], out: Path) -> None:
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} under callgrind exited {done.returncode}: {done.stderr[-800:]}")


def measure(lib_name: str, pattern: str, size: int, counts: tuple[int, int]) -> dict:
    from testbed.toolchain.libraries import find_built
    lib = find_built(lib_name)
    bench = lib.bench_binary(pattern)
    arms = arms_binary(pattern)
    common = {"mode": "thr", "io_threads": 1, "timeout_ms": 600000}
    marginal = {}
    per_message_total = None
    with tempfile.TemporaryDirectory() as tmp:
        for kind, binary in (("bench", bench), ("arms", arms)):
            costs = []
            for n in counts:
                out = Path(tmp) / f"{kind}-{n}" / "callgrind.out"
                out.parent.mkdir()
                if kind == "bench":
                    argv = bench_argv(bench, "tcp", size, count=n, warmup=WARMUP, **common)
                else:
                    argv = arms_argv(arms, "tcp", size, [ArmLib("lib", str(shared_object(lib)))],
                                     [Arm("only", "lib")], rounds=1, warmup_rounds=0, slice_count=n,
                                     warmup=WARMUP, counters="off", **common)
                _callgrind(argv, out)
                if kind == "arms":
                    dumps = callgrind_slices.read_dumps([out.parent])
                    costs.append(sum(harness_cost(d.path, binary) for d in dumps)
                                 + harness_cost(out, binary))
                    per_message_total = dumps[0].instructions / dumps[0].messages
                else:
                    costs.append(harness_cost(out, binary))
            marginal[kind] = (costs[1] - costs[0]) / (counts[1] - counts[0])
    return {"library": lib_name, "pattern": pattern, "size": size, "counts": list(counts),
            "harness_per_message": marginal, "dispatch_per_message": marginal["arms"] - marginal["bench"],
            "process_per_message_in_arms_slice": per_message_total}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.bench.arms_dispatch_cost", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", action="append", required=True, help="registered library (repeatable)")
    parser.add_argument("--pattern", default="ROUTER_ROUTER")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--counts", default="5000,20000", help="two message counts")
    args = parser.parse_args(argv)
    counts = tuple(int(x) for x in args.counts.split(","))
    for name in args.lib:
        r = measure(name, args.pattern.upper(), args.size, counts)
        total = r["process_per_message_in_arms_slice"]
        print(f"{name} {r['pattern']} tcp {r['size']} B: harness + zmq_* entry instructions per message "
              f"bench {r['harness_per_message']['bench']:.1f}, arms {r['harness_per_message']['arms']:.1f}: "
              f"dispatch {r['dispatch_per_message']:+.1f} per message, "
              f"{100 * r['dispatch_per_message'] / total:.2f}% of the {total:,.0f} the whole process "
              f"executes per message in the arms slice")
    return 0


if __name__ == "__main__":
    sys.exit(main())
