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

from testbed.bench import command
from testbed.sweep.config import UNSET, Experiment
from testbed.sweep.plan import Cell

ARMS_SCHEMA = "testbed.bench-arms/1"
BINARY_PREFIX = "bench_arms_"
ARMS, BLOCKS = "arms", "blocks"


def binary(bench_dir: Path, pattern: str) -> Path:
    """bench_arms_<pattern>: built once (against the reference's zmq.h), beside the
    reference library's bench binaries."""
    return Path(bench_dir) / f"{BINARY_PREFIX}{pattern.lower()}"


def shared_object(lib) -> Path:
    """The library file an arm dlmopen's: what the bench links against (-l<link_name>)."""
    return Path(lib.prefix) / "lib" / f"lib{lib.info.get('link_name', 'zmq')}.so"


def arms_bench_dir(exp: Experiment, libs: dict):
    """The bench dir that holds the arms binaries: the reference library's (else any)."""
    names = [e.name for e in exp.libraries if e.label == exp.reference] + sorted(libs)
    return next((libs[n].bench_dir for n in names if n in libs), None)


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
    bench_dir = arms_bench_dir(exp, libs)
    for pattern in sorted({c.pattern for c in cells}):
        path = binary(bench_dir, pattern)
        if not path.is_file():
            return f"no arms binary {path} (bench/ builds bench_arms_<pattern>)"
    for name, lib in sorted(libs.items()):
        so = shared_object(lib)
        if not so.is_file():
            return f"library {name} has no shared object {so} to load with dlmopen"
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


def arms_flags(plan: RunPlan, objects: dict[str, Path], design, counts) -> list[str]:
    """The flags an arms run adds to the bench's (docs/design/2026-12-02-arms.md)."""
    out = []
    for label in plan.load_order:
        out += ["--lib", f"{label}={objects[label]}"]
    for arm in plan.arms:
        env = ",".join(f"{k}={v}" for k, v in arm.env.items())
        out += ["--arm", f"{arm.label}={arm.library}" + (f":{env}" if env else "")]
    out += ["--rounds", str(design.rounds), "--warmup-rounds", str(design.warmup_rounds),
            "--slice-count", str(counts.count), "--slice-lat-count", str(counts.lat_count),
            "--seed", str(plan.seed), "--counters", "auto"]
    return out


def bench_options(cell: Cell, exp: Experiment, counts) -> dict:
    """The bench's own options for an arms run (no --count: slices have their own)."""
    return {"warmup": exp.warmup, "lat_warmup": counts.lat_warmup, "io_threads": cell.io_threads,
            "hwm": exp.hwm, "timeout_ms": exp.bench_timeout_ms, "mode": counts.mode or exp.mode}


def argvs(path: Path, plan: RunPlan, objects: dict[str, Path], exp: Experiment, counts, pins,
          endpoints: command.Endpoints | None) -> dict[str, list[str]]:
    """side -> argv: {"both": ...} for one process, {"receiver", "sender"} for two."""
    cell = plan.cells[0]
    options = bench_options(cell, exp, counts)
    extra = arms_flags(plan, objects, exp.design, counts)
    if cell.process_model == "one-process":
        pin = {"pin_sender": pins.sender, "pin_receiver": pins.receiver} if pins.sender else {}
        return {"both": command.bench_argv(path, cell.transport, cell.msg_size, **options, **pin) + extra}
    receiver, sender = command.role_argvs(path, cell.transport, cell.msg_size, endpoints, cell.process_model,
                                          **options, pin_sender=pins.sender, pin_receiver=pins.receiver)
    return {"receiver": receiver + extra, "sender": sender + extra}


def expected_seconds(design, arms: int, mode: str) -> float:
    """How long the measuring part of one run should last (slices at their target)."""
    kinds = 2 if mode == "both" else 1
    return (design.rounds + design.warmup_rounds) * arms * design.slice_s * kinds


def timeout_s(exp: Experiment, arms: int) -> float:
    """The run's deadline: the cell timeout plus four times the expected measuring time."""
    return exp.timeout_s + 4 * expected_seconds(exp.design, arms, exp.mode)
