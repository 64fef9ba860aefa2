"""Counting runs ([run].counting_runs = N): per block, N more arms runs that count the
syscall tracepoints (`--counters auto`), for the counted work timed runs cannot count.

Why apart: batching changes how many system calls a message costs and how many bytes
each data call moves, but the tracepoints slow every system call (zlink 17%, libzmq
26% at 1 KiB: bench/measurements/README.md, 2026-12-02), so timed runs count perf's
software events only (arms.COUNTERS) and a run that counts syscalls is never timed.
Context switches, the counted judge of timed runs, follow the host's load (preemptions);
system calls per message follow the code path.

A counting run is an arms run like a timed one (arms.run_plan: the same
counterbalancing per run index), throughput slices only (counted work is summed over
them: arms_pool.counted), at the block's calibrated counts. Its records go to their own
journal (records/run_writer "counting", counting.jsonl), never to results.jsonl, so no
timing verdict, adaptive look, budget repetition or host-speed pair ever sees them;
results/load.py reads from them the TRACEPOINT metrics alone (records/counted.py),
judged per run, paired between the arms of one counting run. Their wall time counts in
the run's budget; a failed one is recorded (every cell of it, with the cause) and the
sweep goes on; a resumed run does the ones not recorded yet.

A run laid out as blocks (sweep/arms.py: a bench variable such as BENCH_SECURITY
differs between the cells of a block, so they cannot share a process) counts each cell
on its own: counting run k of a cell is a one-arm arms run of that cell alone, its
variables set for the whole process, at about one timed window of messages spread over
`rounds` slices (blocks_counts). Its timed runs are whole bench processes, whose perf
stat totals include start-up, connection and the latency phase, so there the counting
runs give every counted metric (records/counted.py for_layout), judged per counting run
and paired by run index as the blocks' timed repetitions are.
"""
from __future__ import annotations

import dataclasses
import math

from testbed.bench import arms_binaries
from testbed.records import counting_runs
from testbed.sweep import arms, arms_run
from testbed.sweep.config_run import SLICE_BYTES_FROM, SLICE_MIN_BYTES

COUNTERS = "auto"      # perf software events, syscall tracepoints, hardware where they count


def due(cells, k: int, recorded: set[tuple[str, int]]) -> bool:
    """Counting run k of these cells is still to do: some cell has no record of it (a run
    cut off while its records were stored runs again whole, as timed arms runs do)."""
    return any((c.cell_id, k) not in recorded for c in cells)


def run(cells, k: int, rt, counts, libs: dict, bench_dir, roles: dict[str, str], design,
        seed: int) -> list[dict]:
    """Counting run k of a block (cells in plan order): one record per cell, marked."""
    plan = arms.run_plan(cells, k, seed)
    counts = dataclasses.replace(counts, mode="thr")
    try:
        records, _slices = arms_run.run(plan, k, rt, counts, libs, bench_dir, roles, design,
                                        counters=COUNTERS)
    except arms_binaries.ArmsUnavailable as exc:  # blocks: a library arms cannot load (arms.choose checked)
        records = arms_run.failed(plan, k, counts, libs, roles, f"not loadable into a namespace: {exc}")
    return [mark(rec, k) for rec in records]


def blocks_counts(counts, design, msg_size: int):
    """The counts of a blocks cell's counting run: its timed window's messages (`counts`,
    calibrated for one window) over `design.rounds` throughput slices, each from 64 KiB
    up carrying at least SLICE_MIN_BYTES, as an arms slice does (shorter ones measure
    the burst into empty socket buffers)."""
    per_slice = max(1, counts.count // max(1, design.rounds))
    if msg_size >= SLICE_BYTES_FROM:
        per_slice = max(per_slice, math.ceil(SLICE_MIN_BYTES / msg_size))
    return dataclasses.replace(counts, count=per_slice, mode="thr")


def mark(rec: dict, k: int) -> dict:
    """What tells a counting run's record from a timed one's, wherever it is read."""
    return {**rec, "purpose": counting_runs.PURPOSE, "counting_run": k, "counters": COUNTERS,
            "perturbs_timing": True}
