"""Round trips of one bench latency run, classified by what the sender's CPU did.

Used by docs/profiling/2026-12-04-ipc-split-modes.md.  Input: `perf script` text of
`perf record -a -e sched:sched_switch,sched:sched_wakeup,power:cpu_idle,ipi:ipi_send_cpu`
around `./testbed bench PAIR --mode lat --pin-sender 0 --pin-receiver 1
--process-model two-process`.  A round trip is the time between two wake-ups of the
bench's sending thread (each wake-up is a reply); it is classified by whether CPU 0 (the
sender's) entered a halt (`power:cpu_idle` state 1) and whether either CPU sent the
other an IPI in it.  Prints, per class, its share of round trips and its RTT.

    python3 sched_round_trips.py TRACE.txt [SENDER_CPU]
"""
from __future__ import annotations

import bisect
import re
import statistics
import sys

EVENT = re.compile(r"^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$")


def events(path: str) -> list[tuple[float, int, str, str, str]]:
    out = []
    with open(path, errors="replace") as text:
        for line in text:
            m = EVENT.match(line)
            if m:
                out.append((float(m.group(4)), int(m.group(3)), m.group(1).strip(), m.group(5), m.group(6)))
    # the measured phase: while the bench's receiving thread runs
    seen = [e[0] for e in out if e[2] == "bench-receiver"]
    if not seen:
        sys.exit(f"{path}: no event of a bench-receiver thread: not a bench trace")
    return [e for e in out if min(seen) <= e[0] <= max(seen)]


def main() -> None:
    path = sys.argv[1]
    sender_cpu = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    ev = events(path)
    halts = [t for t, cpu, _, kind, rest in ev
             if kind == "power:cpu_idle" and cpu == sender_cpu and rest.startswith("state=1 ")]
    ipis = [t for t, _, _, kind, _ in ev if kind == "ipi:ipi_send_cpu"]
    wakes = [t for t, _, _, kind, rest in ev if kind == "sched:sched_wakeup" and "comm=bench-sender " in rest]

    def within(times: list[float], a: float, b: float) -> int:
        return bisect.bisect_left(times, b) - bisect.bisect_left(times, a)

    trips = [((b - a) * 1e6, within(halts, a, b), within(ipis, a, b)) for a, b in zip(wakes, wakes[1:])]
    trips = [t for t in trips if t[0] > 25]  # a wake-up inside one round trip, not a new one
    print(f"{path}: {len(trips)} round trips")
    classes = (("all", lambda t: True),
               ("no halt, no IPI", lambda t: t[1] == 0 and t[2] == 0),
               ("sender's CPU halted", lambda t: t[1] > 0))
    for label, keep in classes:
        rtts = [t[0] for t in trips if keep(t)]
        if rtts:
            print(f"  {label:20s} {len(rtts) / len(trips):5.2f} of round trips, RTT median "
                  f"{statistics.median(rtts):6.1f} us, mean {statistics.mean(rtts):6.1f} us")


if __name__ == "__main__":
    main()
