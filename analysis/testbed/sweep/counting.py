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
"""
from __future__ import annotations

import dataclasses

from testbed.records import counting_runs
from testbed.sweep import arms, arms_run

COUNTERS = "auto"      # perf software events, syscall tracepoints, hardware where they count


def due(cells, k: int, recorded: set[tuple[str, int]]) -> bool:
    """Counting run k of these cells is still to do: some cell has no record of it (a run
    cut off while its records were stored runs again whole, as timed arms runs do)."""
    return any((c.cell_id, k) not in recorded for c in cells)


def run(cells, k: int, rt, counts, libs: dict, bench_dir, roles: dict[str, str], design,
        seed: int) -> list[dict]:
    """Counting run k of a block (cells in plan order): one record per cell, marked."""
    plan = arms.run_plan(cells, k, seed)
    records, _slices = arms_run.run(plan, k, rt, dataclasses.replace(counts, mode="thr"), libs, bench_dir,
                                    roles, design, counters=COUNTERS)
    return [mark(rec, k) for rec in records]


def mark(rec: dict, k: int) -> dict:
    """What tells a counting run's record from a timed one's, wherever it is read."""
    return {**rec, "purpose": counting_runs.PURPOSE, "counting_run": k, "counters": COUNTERS,
            "perturbs_timing": True}
