"""The arms layout: every cell of a block in one process pair (issue 41).

A block is one workload point (pattern, transport, size, IO threads, placement,
process model) with all its libraries in all its configurations. Run as arms, one run
of the block is one process pair (or one process for inproc) of `bench_arms_<pattern>`
holding every cell of the block as an arm: its library loaded with dlmopen into a
namespace of its own, its configuration's environment applied while its context is
created. The bench measures in rounds, each a slice of every arm in a fresh random
order (docs/design/2026-12-02-arms.md is the contract). So one run is one repetition
of every cell, and two cells of the block always ran in the same processes at the same
seconds: what a host does to one arm it does to the other.

Why: back-to-back runs of one bench differ by sd(log) 8-19% on shared 2-vCPU hosts,
per run, so a verdict between two separately run cells needs dozens of runs; slices
in one process pair gave slice-pair sd(log) 4-5% and a between-run sd of an A/A ratio
of 1.5% (issue 41's pilot). The run, not the slice, is the unit of replication: each
run's arms carry their own offset.

Counterbalanced across runs (`RunPlan`): arm creation order (rotated, and reversed at
odd repetitions, as plan.block_order does for cells), namespace load order (reversed
at odd repetitions), the bench's seed (the order of arms within each round; derived
from the run's shuffle seed, the block and the repetition), and ports (fresh per run).

This module chooses the layout and builds the command lines; arms_run.py runs them.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from testbed.bench import arms_binaries, command
from testbed.sweep.config import UNSET, Experiment
from testbed.sweep.plan import Cell

ARMS, BLOCKS = "arms", "blocks"
# Timed runs count perf's software events only (task clock, context switches, CPU
# migrations, page faults): the syscall tracepoints slow every syscall (zlink 17%,
# libzmq 26% at 1 KiB: bench/measurements/README.md, 2026-12-02), so a run that counts
# them is never timed (docs/design/2026-12-02-arms.md).
COUNTERS = "software"


def binary(bench_dir: Path, pattern: str) -> Path:
    """bench_arms_<pattern> in the arms binaries' directory (testbed.bench.arms_binaries)."""
    return Path(bench_dir) / f"bench_arms_{pattern.lower()}"


def shared_object(lib) -> Path:
    """The library file an arm dlmopen's (testbed.bench.arms_binaries: lib<link name>.so)."""
    return arms_binaries.shared_object(lib)


def build_bench(exp: Experiment, warn) -> None:
    """Build the arms binaries before the layout is chosen, when this run may use them.
    Without this a clone whose sources moved since `./testbed setup` found its arms
    binaries out of date, and `auto` quietly ran blocks (a 2026-12-02 scorecard on a
    loaded host did: blocks spent the whole budget and judged 57 of its 450 comparisons). A failed
    build is said, then the choice below names the missing binaries as its reason."""
    blocks_only = exp.design.layout == BLOCKS and not exp.design.counting_runs  # counting runs are arms runs
    if exp.kind != "bench" or blocks_only or arms_binaries.prebuilt():
        return
    from testbed.toolchain.progress import Progress
    try:
        arms_binaries.arms_dir(Progress())
    except Exception as exc:  # noqa: BLE001 - reported; `choose` then says why arms cannot run
        warn(f"the arms bench did not build: {type(exc).__name__}: {exc}")


def arms_bench_dir() -> Path | None:
    """The directory of the arms binaries (built by ./testbed setup), or None."""
    try:
        return arms_binaries.arms_dir()
    except arms_binaries.ArmsUnavailable:
        return None


def choose(exp: Experiment, libs: dict, cells: list[Cell]) -> tuple[str, str]:
    """(layout, why) for this run: `[run].design` when it says blocks; arms when it
    says so or (auto) when everything arms need is here. Raises ValueError when the
    experiment asks for arms and the run cannot give them."""
    declared = exp.design.layout
    if declared == BLOCKS:
        return BLOCKS, "declared: [run].design = \"blocks\""
    problem = _arms_problem(exp, libs, cells)
    if not problem:
        return ARMS, "declared: [run].design = \"arms\"" if declared == ARMS else \
            "auto: every library can be loaded into a namespace of its own and the arms binaries are built"
    if declared == ARMS:
        raise ValueError(f"{exp.path}: run.design: \"arms\", but {problem}; allowed: \"blocks\" or \"auto\" "
                         "(auto runs blocks where arms cannot run)")
    return BLOCKS, f"auto: {problem}"


def _arms_problem(exp: Experiment, libs: dict, cells: list[Cell]) -> str:
    if exp.kind != "bench":
        return f"[workload].kind = \"{exp.kind}\" runs whole processes of one library"
    if any(c.process_model == "two-host" for c in cells):
        return "two-host cells run their roles on other hosts"
    if not libs:
        return "no library is available"
    try:
        bench_dir = arms_binaries.arms_dir()
    except arms_binaries.ArmsUnavailable as exc:
        return f"no arms binaries: {exc}"
    for pattern in sorted({c.pattern for c in cells}):
        path = binary(bench_dir, pattern)
        if not path.is_file():
            return f"no arms binary {path} (./testbed setup builds bench_arms_<pattern>)"
    for name, lib in sorted(libs.items()):
        try:
            shared_object(lib)
        except arms_binaries.ArmsUnavailable as exc:
            return f"library {name} cannot be loaded with dlmopen: {exc}"
    return bench_variable_problem(cells)


# The bench's own variables (BENCH_SECURITY, BENCH_SEND_BUFFERS, ...) are read once, when
# the bench parses its options; an arm's variables are set inside its library's namespace
# while its context is created (docs/design/2026-12-02-arms.md). So one that differs
# between the arms of a block would reach no arm: every arm would run with the process's
# value, and a CURVE arm would measure NULL under its name.
BENCH_PREFIX = "BENCH_"


def bench_variable_problem(cells: list[Cell]) -> str:
    """Why these cells cannot share a process ("" = they can): a bench variable whose
    value differs between cells of one block."""
    blocks: dict[str, list[Cell]] = {}
    for c in cells:
        blocks.setdefault(c.block_id, []).append(c)
    for block in blocks.values():
        for name in sorted({n for c in block for n in c.params if n.startswith(BENCH_PREFIX)}):
            values = sorted({str(c.params.get(name, UNSET)) for c in block})
            if len(values) > 1:
                return (f"{name} differs between the cells of one block ({', '.join(values)}): the bench "
                        "reads it once per process, so its arms could not each get their own value")
    return ""


@dataclass(frozen=True)
class Arm:
    label: str          # the cell id: unique in the block, and it names the record
    library: str        # the library label (an A/A alias is a namespace of its own)
    env: dict           # the configuration's variables that are set


@dataclass(frozen=True)
class RunPlan:
    """One arms run: its arms in creation order, its libraries in load order, its seed."""
    cells: tuple[Cell, ...]      # in creation order; arm i of the output is cells[i]
    arms: tuple[Arm, ...]
    load_order: tuple[str, ...]  # library labels in the order of --lib
    seed: int


def run_plan(cells: list[Cell], rep: int, run_seed: int) -> RunPlan:
    """The counterbalanced plan of repetition `rep` of a block (cells in plan order)."""
    ordered = list(cells)
    k = rep // 2 % len(ordered) if ordered else 0
    ordered = ordered[k:] + ordered[:k]
    if rep % 2:
        ordered.reverse()
    libs = list(dict.fromkeys(c.library for c in cells))
    if rep % 2:
        libs.reverse()
    arms = tuple(Arm(c.cell_id, c.library, {n: str(v) for n, v in sorted(c.params.items()) if v != UNSET})
                 for c in ordered)
    block = cells[0].block_id if cells else ""
    seed = int(hashlib.sha256(f"{run_seed}/{block}/{rep}".encode()).hexdigest()[:8], 16)
    return RunPlan(tuple(ordered), arms, tuple(libs), seed)


def common_env(cells: list[Cell]) -> dict:
    """Variables every arm sets to the same value: set for the whole process too (a
    library may read one at load), the others only per arm."""
    sets = [{n: str(v) for n, v in c.params.items() if v != UNSET} for c in cells]
    if not sets:
        return {}
    return {n: v for n, v in sets[0].items() if all(s.get(n) == v for s in sets[1:])}


def arm_libs(plan: RunPlan, libs: dict) -> list[command.ArmLib]:
    """--lib entries in the plan's load order: one namespace per library label (an A/A
    alias is a copy of its own). `libs`: label -> LibraryBuild."""
    return [command.ArmLib(label, str(shared_object(libs[label])), libs[label].name,
                           libs[label].info.get("build_id")) for label in plan.load_order]


def arm_specs(plan: RunPlan) -> list[command.Arm]:
    return [command.Arm(a.label, a.library, tuple(a.env.items())) for a in plan.arms]


def bench_options(cell: Cell, exp: Experiment, counts, design, counters: str = COUNTERS) -> dict:
    """The options of an arms run: the bench's (IO threads, HWM, timeouts, mode) and the
    slices'. Each slice's warm-up is the bench's default (a twentieth of its messages,
    a tenth of its round trips): a cell's declared warm-up is sized for one long window.
    `counters`: COUNTERS for timed runs; a counting run's own (sweep/counting.py)."""
    return {"io_threads": cell.io_threads, "hwm": exp.hwm, "timeout_ms": exp.bench_timeout_ms,
            "mode": counts.mode or exp.mode, "rounds": design.rounds, "warmup_rounds": design.warmup_rounds,
            "slice_count": counts.count, "slice_lat_count": counts.lat_count, "counters": counters,
            "redeal": "on" if design.redeal else None}


def argvs(path: Path, plan: RunPlan, libs: dict, exp: Experiment, design, counts, pins,
          endpoints: command.Endpoints | None, counters: str = COUNTERS) -> dict[str, list[str]]:
    """side -> argv: {"both": ...} for one process, {"receiver", "sender"} for two."""
    cell = plan.cells[0]
    options = {**bench_options(cell, exp, counts, design, counters), "seed": plan.seed}
    pin = {"pin_sender": pins.sender, "pin_receiver": pins.receiver}
    if cell.process_model == "one-process":
        return {"both": command.arms_argv(path, cell.transport, cell.msg_size, arm_libs(plan, libs),
                                          arm_specs(plan), **options, **(pin if pins.sender else {}))}
    receiver, sender = command.arms_role_argvs(path, cell.transport, cell.msg_size, endpoints,
                                               arm_libs(plan, libs), arm_specs(plan), cell.process_model,
                                               **options, **pin)
    return {"receiver": receiver, "sender": sender}


def expected_seconds(design, arms: int, mode: str) -> float:
    """How long the measuring part of one run should last (slices at their target)."""
    kinds = 2 if mode == "both" else 1
    return (design.rounds + design.warmup_rounds) * arms * design.slice_s * kinds


def timeout_s(exp: Experiment, design, arms: int) -> float:
    """The run's deadline: the cell timeout plus four times the expected measuring time."""
    return exp.timeout_s + 4 * expected_seconds(design, arms, exp.mode)
