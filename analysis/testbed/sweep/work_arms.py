"""Instructions per message of every arm of a block, from one callgrind arms run.

Under callgrind the arms bench zeroes the counts when a slice starts and dumps them,
labelled with the slice, when it ends (bench/README.md "Callgrind"), in each process:
one run under valgrind gives instructions per slice and arm, each process's own
(testbed.bench.callgrind_slices reads them; the dumps of a slice's two processes are
added). Per arm: its measured throughput slices' instructions over their messages
(each slice's warm-up messages included, as its instructions cover them).
Deterministic up to scheduling (callgrind runs one thread at a time), so one run per
block is the measurement, and every arm is measured in it (never one configuration's
figure for another's). Work, not speed: under callgrind threads take turns, so
batching behaves differently than at full speed.
"""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from testbed.bench import callgrind_slices, command
from testbed.sweep import arms, execute, outcome, placement, process, work
from testbed.sweep.execute import Counts

METHOD = "callgrind-arms"
ROUNDS, WARMUP_ROUNDS = 2, 1


def per_arm(dumps: list[callgrind_slices.SliceDump]) -> dict[str, dict]:
    """arm label -> {"messages", "instructions", "slices", "roles"} of its measured
    throughput slices (both processes' instructions added per slice)."""
    roles: dict[str, set] = {}
    for d in dumps:
        roles.setdefault(d.label, set()).add(d.role)
    return {r.label: {"messages": r.messages, "instructions": r.instructions, "slices": r.slices,
                      "roles": roles.get(r.label, set())}
            for r in callgrind_slices.per_message(dumps) if r.kind == "thr"}


def messages_per_slice(msg_size: int, timed: int) -> int:
    return max(work.MIN_MESSAGES, work.messages_for("callgrind", msg_size, timed) // ROUNDS)


def measure(plan: arms.RunPlan, rt: execute.Runtime, counts: Counts, libs: dict, bench_dir: Path | None,
            design) -> list[dict]:
    """One callgrind arms run of the plan's cells: one work record per cell."""
    cell = plan.cells[0]
    n = messages_per_slice(cell.msg_size, counts.count)
    if bench_dir is None:
        return [_record(c, n, {}, "no arms binaries") for c in plan.cells]
    cg_design = dataclasses.replace(design, rounds=ROUNDS, warmup_rounds=WARMUP_ROUNDS)
    factor = work.CALLGRIND_TIMEOUT_FACTOR
    exp = dataclasses.replace(rt.exp, timeout_s=rt.exp.timeout_s * factor,
                              bench_timeout_ms=min(3_600_000, rt.exp.bench_timeout_ms * factor))
    try:
        pins = placement.pins_for(cell.placement, rt.cpus)
    except ValueError as exc:
        return [_record(c, n, {}, f"placement: {exc}") for c in plan.cells]
    endpoints = None if cell.process_model == "one-process" else command.local_endpoints(cell.transport)
    argv = arms.argvs(arms.binary(bench_dir, cell.pattern), plan, libs, exp, cg_design,
                      Counts(n, 1, mode="thr"), pins, endpoints)
    dumps_dir = rt.workdir / f"callgrind-{cell.block_id}"
    shutil.rmtree(dumps_dir, ignore_errors=True)
    dumps_dir.mkdir(parents=True)
    prefix = work.CallgrindSetup().prefix(dumps_dir / "callgrind.out.%p")
    env = execute.cell_env(arms.common_env(list(plan.cells)))
    procs = [process.Proc(prefix + a, env, rt.workdir) for a in argv.values()]
    outs = process.supervise(procs, arms.timeout_s(exp, cg_design, len(plan.arms)) * factor)
    status, failure, _ = outcome.roles_status({s: (o, "") for s, o in zip(argv, outs, strict=True)})
    found: dict[str, dict] = {}
    if status == "ok":
        try:
            found = per_arm(callgrind_slices.read_dumps([dumps_dir]))
        except (OSError, ValueError, KeyError) as exc:
            failure = f"callgrind dumps unreadable: {exc}"
    shutil.rmtree(dumps_dir, ignore_errors=True)
    return [_record(c, n, found.get(c.cell_id, {}), failure) for c in plan.cells]


def _record(cell, n: int, arm: dict, failure: str) -> dict:
    ok = not failure and arm.get("messages", 0) > 0
    why = failure or ("" if ok else "no measured throughput slice of this arm in the callgrind dumps")
    return {"group": cell.group, "cell_id": cell.cell_id, "library": cell.library, "method": METHOD,
            "messages": arm.get("messages", 0), "messages_per_slice": n,
            "status": "ok" if ok else "failed", "failure": why,
            "instructions_per_msg": round(arm["instructions"] / arm["messages"], 1) if ok else None,
            "cycles_per_msg": None, "slices": arm.get("slices", 0), "roles": sorted(arm.get("roles", ())),
            "instructions": arm.get("instructions")}
