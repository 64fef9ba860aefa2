"""A host speed reference: a fixed CPU-bound workload timed before and after each
interleaved pair of bench runs, on the CPUs the pair runs on.

Why: on our KVM hosts the CPU itself gets slower for minutes at a time (identical bench
work took 1009-1395 ms of CPU in one run; experiments/batch-sweep/README.md). A pair
whose reference changed between its start and its end ran on a host whose speed moved
under it, and its ratio says more about the host than about the libraries.

Why in-process and not a small C program: the workload is C code anyway (CPython's
blake2b over a buffer: integer work, no system calls), so the interpreter adds only
a loop over a constant iterator; no compiler, no extra build product, no process
start-up in the runner's path, and the same code runs in the tests. The runner's
calling thread is pinned to one bench CPU at a time for the measurement and its
previous affinity is restored afterwards, so the bench processes started later
inherit the runner's affinity as before. The reference measures how fast this host
runs this fixed work now; it is compared only within a run, never across hosts.

The work: SLICES slices of ROUNDS_PER_SLICE blake2b updates over a 64 KiB buffer
(about 25 ms in all on our 2-core hosts). The buffer and the hash object exist before
the clock starts; the timed part allocates nothing (itertools.repeat yields one
object). The figure per CPU is the median slice times SLICES: one preemption inside
one slice (a 5-10% blip, seen here on an idle host) does not move it, a slowdown
that lasts the whole measurement does.
"""
from __future__ import annotations

import hashlib
import itertools
import os
import statistics
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from testbed.records import run_writer
from testbed.records.speed_reference import HOST_DRIFT, WORKLOAD
from testbed.records.speed_reference import excluded_pairs as excluded_pairs
from testbed.records.speed_reference import latest_pairs as latest_pairs
from testbed.records.speed_reference import seconds_of as seconds_of
from testbed.records.speed_reference import summarize as summarize
from testbed.sweep.placement import parse_cpu_list

FILE_NAME = run_writer.side_file_name("speed")  # what the manifest names; records/ owns the file

BUFFER_BYTES = 64 * 1024
ROUNDS_PER_SLICE = 100
SLICES = 6
# The test suite, which starts hundreds of runs of fake benches (each pair measured
# before and after on every bench CPU), shortens the workload (tests/conftest.py); the
# manifest records the rounds a run used. Never set for a measurement.
ROUNDS_ENV = "TESTBED_SPEEDREF_ROUNDS"

_BUFFER = bytes(range(256)) * (BUFFER_BYTES // 256)


def rounds_per_slice() -> int:
    """ROUNDS_PER_SLICE, or a positive integer from $TESTBED_SPEEDREF_ROUNDS."""
    given = os.environ.get(ROUNDS_ENV)
    if given is None:
        return ROUNDS_PER_SLICE
    if not given.isdigit() or int(given) < 1:
        raise ValueError(f"${ROUNDS_ENV}={given!r}: allowed: a whole number >= 1 "
                         f"(blake2b updates per slice; default {ROUNDS_PER_SLICE})")
    return int(given)


def describe() -> dict:
    """What the manifest records about the workload."""
    return {"workload": WORKLOAD, "buffer_bytes": BUFFER_BYTES, "rounds_per_slice": rounds_per_slice(),
            "slices": SLICES, "clock": "time.perf_counter_ns (monotonic)", "file": FILE_NAME}


def timestamp() -> str:
    """Wall-clock time with milliseconds: the report plots the reference against it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _last_cpu() -> int | None:
    """The CPU this thread last ran on (field 39 of /proc/thread-self/stat)."""
    try:
        stat = Path(f"/proc/self/task/{threading.get_native_id()}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[36]) if len(fields) > 36 else None


def _time_slices() -> list[int]:
    h = hashlib.blake2b()
    buf = _BUFFER
    rounds = rounds_per_slice()
    out = []
    for _ in range(SLICES):
        t0 = time.perf_counter_ns()
        for _ in itertools.repeat(None, rounds):
            h.update(buf)
        out.append(time.perf_counter_ns() - t0)
    return out


def measure_on(cpu: int) -> dict:
    """Time the workload with the calling thread pinned to `cpu`; the previous affinity
    is restored. Records the affinity seen inside and the CPU it finished on."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        inside = sorted(os.sched_getaffinity(0))
        cpu_t0 = time.thread_time_ns()
        slices = _time_slices()
        cpu_ns = time.thread_time_ns() - cpu_t0
        ran_on = _last_cpu()
    finally:
        os.sched_setaffinity(0, before)
    ms = statistics.median(slices) * SLICES / 1e6
    return {"cpu": cpu, "ms": round(ms, 4), "total_ms": round(sum(slices) / 1e6, 4),
            "cpu_ms": round(cpu_ns / 1e6, 4), "affinity": inside, "ran_on": ran_on}


def measure(cpus: list[int]) -> dict:
    """The reference on every CPU the bench uses: per CPU, and `ms` = the slowest one."""
    per_cpu = [measure_on(c) for c in cpus]
    return {"ms": max(p["ms"] for p in per_cpu), "per_cpu": per_cpu}


def bench_cpus(pins, usable: list[int]) -> list[int]:
    """The CPUs a cell's bench runs on: those its pins name, or (placement free) every
    usable CPU."""
    named = [p for p in (pins.sender, pins.receiver) if p]
    if not named:
        return list(usable)
    return sorted({c for p in named for c in parse_cpu_list(p)})


def drift(before: dict, after: dict) -> float:
    """The largest relative change of any CPU's reference across the pair (slower/faster
    - 1, so a change up and a change down of the same size count the same)."""
    b = {p["cpu"]: p["ms"] for p in before["per_cpu"]}
    a = {p["cpu"]: p["ms"] for p in after["per_cpu"]}
    changes = [max(a[c], b[c]) / min(a[c], b[c]) - 1 for c in b if c in a and min(a[c], b[c]) > 0]
    return max(changes, default=0.0)


def pair_line(group: str, repetition: int, cell_ids: list[str], before: dict, after: dict,
              tolerance: float | None, started_at: str) -> dict:
    d = drift(before, after)
    excluded = tolerance is not None and d > tolerance
    return {"group": group, "repetition": repetition, "cell_ids": cell_ids, "started_at": started_at,
            "before": before, "after": after, "drift": round(d, 6), "tolerance": tolerance,
            "exclusion": HOST_DRIFT if excluded else None}
