"""Other work on the host while a run measures: CPU used per scheduling class.

Why it is recorded: a benchmark thread that wakes on a core where other work runs at
the normal policy can wait behind it, nice 19 included when that work starts processes
and enters the kernel (a build); under SCHED_IDLE it is preempted at once. Measured
here: split REQ_REP ipc 64 B took 2.5x as long per round trip with 2 CPUs of nice-19
compiles beside it as with the same compiles under SCHED_IDLE (docs/profiling/2026-11-27-background-load.md).
So a run states what else was running, and the runner warns when it competed.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

# /proc/PID/stat fields (1-based, after the command name): 14 utime, 15 stime, 19 nice,
# 41 policy (os.SCHED_IDLE is idle; normal and batch both compete with a woken bench).
_UTIME, _STIME, _NICE, _POLICY = 14, 15, 19, 41
WARN_CPUS = 0.2  # other normal-policy work above this share of a CPU is worth a warning
# The window a run samples at its start and end; the test suite, which starts hundreds of
# runs of fake benches, shortens it (tests/conftest.py).
WINDOW_ENV = "TESTBED_HOSTLOAD_WINDOW_S"


def _sample() -> dict[int, tuple[str, int, int, int]]:
    """pid -> (command, ticks used, nice, policy) for every process readable now."""
    out = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        head, _, rest = text.rpartition(")")
        fields = rest.split()
        # fields[0] is field 3 (state): field N is fields[N - 3]
        try:
            ticks = int(fields[_UTIME - 3]) + int(fields[_STIME - 3])
            out[int(entry.name)] = (head.partition("(")[2], ticks, int(fields[_NICE - 3]),
                                    int(fields[_POLICY - 3]))
        except (IndexError, ValueError):
            continue
    return out


def competing_cpu(window_s: float | None = None, exclude: set[int] | None = None) -> dict:
    """CPUs used by other processes over `window_s`: at a policy that competes with a
    woken benchmark thread (`normal_cpus`) and under SCHED_IDLE (`idle_cpus`), with the
    busiest competing commands."""
    if window_s is None:
        window_s = float(os.environ.get(WINDOW_ENV, "0.5"))
    skip = {os.getpid()} | (exclude or set())
    hz = os.sysconf("SC_CLK_TCK")
    first = _sample()
    time.sleep(window_s)
    second = _sample()
    normal, idle, busy = 0.0, 0.0, []
    for pid, (comm, ticks, nice, policy) in second.items():
        if pid in skip or pid not in first:
            continue
        cpus = (ticks - first[pid][1]) / hz / window_s
        if cpus <= 0:
            continue
        if policy == os.SCHED_IDLE:
            idle += cpus
        else:
            normal += cpus
            busy.append((cpus, comm, nice, pid))
    busy.sort(reverse=True)
    return {"window_s": window_s, "normal_cpus": round(normal, 2), "idle_cpus": round(idle, 2),
            "busiest": [{"command": c, "pid": p, "nice": n, "cpus": round(u, 2)} for u, c, n, p in busy[:5]]}


def warning(load: dict) -> str | None:
    """A sentence for the run's output when other work competed with the benchmarks."""
    if load.get("normal_cpus", 0.0) <= WARN_CPUS:
        return None
    names = ", ".join(f"{b['command']} (nice {b['nice']})" for b in load.get("busiest", [])[:3])
    return (f"other work used {load['normal_cpus']:.2f} CPUs at a normal scheduling policy while "
            f"the run started ({names}): a woken benchmark thread can wait behind it, nice 19 "
            "included (builds); run such work under `chrt -i 0` (SCHED_IDLE) or on other CPUs")
