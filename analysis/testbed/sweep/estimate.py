"""How long a run will take, for --dry-run and the manifest: measured wall times of
earlier runs doing the same work where known, else a simple cost model.

The model uses loopback figures of an otherwise idle 2-core host (/work/shared/FACTS.md)
with bandwidth halved for margin; a host busy with other work runs about 2x slower
(measured with load average ~12). With calibration on, a measured part lasts about
`min_window_s` x HEADROOM whatever the declared count; adaptive designs are estimated
at their minimum and at their cap (or budget).
"""
from __future__ import annotations

import statistics
from pathlib import Path

from testbed.records import run_writer
from testbed.sweep import arms, calibrate, ceiling
from testbed.sweep.config import Experiment
from testbed.sweep.config_run import SLICE_BYTES_FROM, SLICE_MIN_BYTES
from testbed.sweep.plan import Cell, _env_configs, matches

PROCESS_OVERHEAD_S = 0.35          # fork/exec, connect, perf stat start, teardown
TWO_PROCESS_EXTRA_S = 0.15         # a second process and the control connection
PER_MESSAGE_S = {"tcp": 0.30e-6, "ipc": 0.28e-6, "inproc": 0.20e-6}
BYTES_PER_S = {"tcp": 0.8e9, "ipc": 0.9e9, "inproc": 3.0e9}  # loaded-host loopback figures
RTT_BASE_S = {"tcp": 90e-6, "ipc": 70e-6, "inproc": 50e-6}
STARTUP_PROCESS_S = 0.05           # one bench process with tiny counts (measured ~25 ms)
CALLGRIND_RUN_S = 3.0              # one short run under valgrind, start-up included
SPEED_REFERENCE_S = 0.03           # the host speed reference on one CPU (speedref.py: ~25-30 ms)
# Counting runs count the syscall tracepoints, which slow every call (zlink 17%, libzmq
# 26% at 1 KiB: bench/measurements/README.md, 2026-12-02): their slices last longer.
TRACEPOINT_SLOWDOWN = 1.3


def history_key(r: dict) -> tuple:
    """What makes two runs do the same work (library-independent). Calibrated runs
    are keyed by their target window, since their counts follow the library's speed."""
    work = (("window", r.get("target_window_s"), r.get("lat_warmup_s") or 0.0, r.get("tail_round_trips") or 0)
            if r.get("calibrated")
            else (r["count"], r["lat_count"]))
    return (r["pattern"], r["transport"], int(r["msg_size"]), int(r["io_threads"]), r.get("kind", "bench"),
            r.get("process_model", "one-process"), *work)


def cell_history_key(cell: Cell, exp: Experiment) -> tuple:
    calibrated = calibrates(exp)
    return history_key({"pattern": cell.pattern, "transport": cell.transport, "msg_size": cell.msg_size,
                        "io_threads": cell.io_threads, "kind": cell.kind, "process_model": cell.process_model,
                        "calibrated": calibrated, "target_window_s": exp.design.min_window_s,
                        "lat_warmup_s": exp.design.lat_warmup_s,
                        "tail_round_trips": exp.design.tail_round_trips,
                        "count": cell.count, "lat_count": cell.lat_count})


def calibrates(exp: Experiment) -> bool:
    return exp.kind == "bench" and exp.design.min_window_s > 0


def load_history(results_root: Path) -> dict:
    """Median wall seconds of ok cells in earlier runs, keyed by the work they did
    (so zlink cells borrow libzmq's time until zlink has its own)."""
    times: dict[tuple, list[float]] = {}
    for run in run_writer.manifests_under(results_root, depth=2):
        try:
            records, _ = run_writer.any_records(run)
        except (OSError, ValueError):
            continue
        for r in records:
            if r.get("status") == "ok" and "count" in r and r.get("repetition", 0) >= 0:
                times.setdefault(history_key(r), []).append(r["wall_seconds"])
    return {k: statistics.median(v) for k, v in times.items()}


def _measured_part(exp: Experiment, model_s: float) -> float:
    return exp.design.min_window_s * calibrate.HEADROOM if calibrates(exp) else model_s


def arms_likely(exp: Experiment) -> bool:
    """Will blocks run as arms (sweep/arms.py)? Declared, or auto on a bench workload
    on this host (the binaries' presence is only known once libraries are resolved)."""
    return exp.design.layout == "arms" or (exp.design.layout == "auto" and exp.kind == "bench"
                                           and "two-host" not in exp.process_model)


def runs_as_arms(exp: Experiment, cells: list[Cell]) -> bool:
    """Will these cells really run as arms? Not when a bench variable differs inside a
    block (security-cost's BENCH_SECURITY): the runner falls back to blocks, one process
    per cell, and the estimate must price that, not the arms' shared start-up."""
    return arms_likely(exp) and not arms.bench_variable_problem(cells)


def arms_cell_seconds(cell: Cell, exp: Experiment) -> float:
    """A cell's share of one arms run: its slices at their target, and the run's process
    start-up shared by the block's arms."""
    d = exp.design
    kinds = 2 if exp.mode == "both" else 1
    arms = max(1, len(exp.libraries) * len(_env_configs(exp)))
    overhead = PROCESS_OVERHEAD_S + (TWO_PROCESS_EXTRA_S if cell.process_model != "one-process" else 0.0)
    return (d.rounds + d.warmup_rounds) * d.slice_s * kinds + overhead / arms


def counting_seconds(cells: list[Cell], exp: Experiment) -> float:
    """Every counting run of the run ([run].counting_runs per block, sweep/counting.py):
    throughput slices only, each at least slice_s (as blocks: a timed window over
    `rounds` slices) and, from 64 KiB up, the slice's 32 MiB at the model's bandwidth
    (config_run.SLICE_MIN_BYTES), slowed by the tracepoints; the process start-up once
    per run (as blocks: one run per cell)."""
    d = exp.design
    if not d.counting_runs:
        return 0.0
    per_cell = not runs_as_arms(exp, cells)
    total = 0.0
    for cell in cells:
        slice_s = d.slice_s
        if per_cell:
            window = exp.design.min_window_s if calibrates(exp) else d.slice_s * d.rounds
            slice_s = window / d.rounds
        if cell.msg_size >= SLICE_BYTES_FROM:
            slice_s = max(slice_s, SLICE_MIN_BYTES / BYTES_PER_S[cell.transport])
        total += (d.rounds + d.warmup_rounds) * slice_s * TRACEPOINT_SLOWDOWN
    starts = cells if per_cell else {c.block_id: c for c in cells}.values()
    total += sum(PROCESS_OVERHEAD_S + (TWO_PROCESS_EXTRA_S if c.process_model != "one-process" else 0.0)
                 for c in starts)
    return d.counting_runs * total


def cell_seconds(cell: Cell, exp: Experiment, history: dict | None, as_arms: bool) -> float:
    """One run of `cell`: measured earlier if known, else the model. `as_arms`: whether
    its block runs as arms (runs_as_arms over the run's cells)."""
    if as_arms:
        return arms_cell_seconds(cell, exp)
    key = cell_history_key(cell, exp)
    if history and key in history:
        return history[key]
    t = cell.transport
    per_msg = PER_MESSAGE_S[t] + cell.msg_size / BYTES_PER_S[t]
    thr = 0.0 if exp.mode == "lat" else _measured_part(exp, (cell.count + exp.warmup) * per_msg)
    rtt = RTT_BASE_S[t] + 2 * cell.msg_size / BYTES_PER_S[t]
    lat = 0.0 if exp.mode == "thr" else _measured_part(exp, cell.lat_count * rtt)
    if lat and calibrates(exp) and exp.design.tail_round_trips:  # calibrate.tail_count at the model's RTT
        tail = exp.design.tail_round_trips / (1 - calibrate.TAIL_QUANTILE) * rtt
        lat = max(lat, min(tail, calibrate.TAIL_STRETCH * lat))
    if lat and calibrates(exp):
        lat += exp.design.lat_warmup_s * calibrate.HEADROOM  # the timed latency warm-up
    overhead = PROCESS_OVERHEAD_S + (TWO_PROCESS_EXTRA_S if cell.process_model != "one-process" else 0.0)
    if cell.kind == "startup":  # hyperfine: 1 warm-up + N timed processes, each ~50 ms plus its work
        return overhead + (exp.hyperfine_runs + 1) * (STARTUP_PROCESS_S + thr + lat)
    return overhead + thr + lat


def work_cells(cells: list[Cell], exp: Experiment) -> set[tuple[str, str]]:
    """(configuration, library label) pairs measured for work per message: the
    [[perf.work]] selection, every cell measured on its own runs."""
    chosen = [c for c in cells if not exp.perf_work or any(matches(s, c.fields()) for s in exp.perf_work)]
    return {(c.group, c.library) for c in chosen}


def run_seconds(cells: list[Cell], exp: Experiment, history: dict | None = None,
                repetitions: int | None = None) -> float:
    """The whole run at `repetitions` per cell (default: the design's minimum), with one
    calibration probe per block and the work-per-message runs."""
    reps = exp.design.min_repetitions if repetitions is None else repetitions
    as_arms = runs_as_arms(exp, cells)
    per_rep = [cell_seconds(c, exp, history, as_arms) for c in cells]
    total = sum(per_rep) * reps
    if calibrates(exp):
        blocks = {c.block_id: s for c, s in zip(cells, per_rep, strict=True)}
        total += sum(blocks.values())  # one probe per block, about one run long
    total += reps * reference_seconds(cells, exp)
    total += reps * ceiling_seconds(cells, exp)
    total += counting_seconds(cells, exp)
    if exp.work_per_message and exp.kind == "bench":
        total += len(work_cells(cells, exp)) * 2 * CALLGRIND_RUN_S  # worst case: callgrind
    warm = exp.warmup_runs * len({c.library_name for c in cells}) * PROCESS_OVERHEAD_S * 3
    return total + warm


def budget_warning(cells: list[Cell], exp: Experiment, history: dict | None = None) -> str | None:
    """A warning when [run].time_budget_s is below what the minimum repetitions are
    estimated to spend: the loop would stop before some comparisons had their first
    look, and their verdicts would be "not planned". None when the budget fits."""
    budget = exp.design.time_budget_s
    if budget is None or not exp.design.adaptive:
        return None
    # counting runs spend the budget too, before the adaptive rounds (loop.py)
    needed = run_seconds(cells, exp, history) - run_seconds(cells, exp, history, 0) \
        + counting_seconds(cells, exp)
    if budget >= needed:
        return None
    return (f"[run].time_budget_s = {budget:g} in {exp.path} is below the ~{needed:.0f} s the "
            f"minimum {exp.design.min_repetitions} repetitions of these {len(cells)} cells are "
            "estimated to spend: the run will stop before every comparison is looked at once. "
            f"Raise time_budget_s to >= {needed * 1.2:.0f} or lower min_repetitions.")


def reference_seconds(cells: list[Cell], exp: Experiment) -> float:
    """The host speed reference of one repetition of every block: timed before and
    after each block's batch, on each CPU the batch runs on (one-core: one CPU;
    any other placement: both of a 2-core host, the most this estimate assumes)."""
    if not exp.design.speed_reference or exp.kind != "bench":
        return 0.0
    cpus_per_group = {c.block_id: 1 if c.placement == "one-core" else 2 for c in cells}
    return sum(2 * n * SPEED_REFERENCE_S for n in cpus_per_group.values())


def probe_seconds(cell: Cell, exp: Experiment) -> float:
    """One in-run ceiling probe for `cell`'s block (sweep/ceiling.py): each try streams
    `bytes` plus a tenth of warm-up at the model's bandwidth, then the latency rows."""
    spec, t = exp.ceiling, cell.transport
    tries = len(spec.write_sizes) * len(spec.io_waits)
    thr = 0.0 if exp.mode == "lat" else tries * 1.1 * spec.bytes / BYTES_PER_S[t]
    lat = 0.0 if exp.mode == "thr" else spec.lat_count * (RTT_BASE_S[t] + 2 * cell.msg_size / BYTES_PER_S[t])
    overhead = PROCESS_OVERHEAD_S + (TWO_PROCESS_EXTRA_S if cell.process_model != "one-process" else 0.0)
    return overhead + thr + lat


def ceiling_seconds(cells: list[Cell], exp: Experiment) -> float:
    """The ceiling probes of one repetition of every block [ceiling] selects."""
    if exp.ceiling is None:
        return 0.0
    blocks = {c.block_id: c for c in cells if ceiling.bounds(exp, c)}
    return sum(probe_seconds(c, exp) for c in blocks.values())


def bounds(cells: list[Cell], exp: Experiment, history: dict | None = None) -> tuple[float, float]:
    """(at the minimum, at the cap or budget) in seconds."""
    low = run_seconds(cells, exp, history)
    if not exp.design.adaptive:
        return low, low
    high = run_seconds(cells, exp, history, exp.design.max_repetitions)
    if exp.design.time_budget_s is not None:
        # The budget bounds probes, repetitions and counting runs; warm-ups and work runs
        # come on top.
        fixed = run_seconds(cells, exp, history, 0) - counting_seconds(cells, exp)
        high = min(high, max(low, fixed + exp.design.time_budget_s))
    return low, high
