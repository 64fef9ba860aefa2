"""Instructions per message of every arm of a block, from one callgrind arms run.

Under callgrind the arms bench zeroes the counts when a slice starts and dumps them,
labelled with the slice, when it ends (bench/arms/valgrind_marks.hpp), in each process:
so one run under valgrind gives instructions per slice and arm, each process's own.
Per arm: the instructions of its measured throughput slices, summed over both
processes, over their messages. Deterministic up to scheduling (callgrind runs one
thread at a time), so one run per block is the measurement; every arm is measured in
it (never one configuration's figure for another's). Work, not speed: under callgrind
threads take turns, so batching behaves differently than at full speed.

Labels: "arms arm=<i>:<label> kind=<thr|lat> round=<r> warmup=<0|1> count=<n>
role=<receiver|sender|both>", one dump file each (<out>.<n>); the dump at program
termination (<out> itself) is not a slice.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from testbed.bench import command
from testbed.sweep import arms, execute, outcome, placement, process, work
from testbed.sweep.execute import Counts

METHOD = "callgrind-arms"
ROUNDS, WARMUP_ROUNDS = 2, 1
LABEL = re.compile(r"^desc: Trigger: Client Request: arms arm=(\d+):(\S+) kind=(\w+) round=(\d+) "
                   r"warmup=([01]) count=(\d+) role=(\w+)\s*$", re.M)
TOTALS = re.compile(r"^(?:totals|summary):\s*(\d+)", re.M)


def slice_dumps(out_file: Path) -> list[dict]:
    """Every slice dump of one process: arm index, label, kind, round, warmup, count,
    role and its instructions."""
    out = []
    for path in sorted(out_file.parent.glob(out_file.name + ".*")):
        text = path.read_text(errors="replace")
        label, totals = LABEL.search(text), TOTALS.search(text)
        if not label or not totals:
            continue
        i, arm_label, kind, rnd, warm, count, role = label.groups()
        out.append({"arm": int(i), "label": arm_label, "kind": kind, "round": int(rnd),
                    "warmup": warm == "1", "count": int(count), "role": role,
                    "instructions": int(totals.group(1))})
    return out


def per_arm(dumps: list[dict]) -> dict[str, dict]:
    """arm label -> {"messages", "instructions", "slices", "roles"} over the measured
    throughput slices: instructions of every process, messages counted once (per slice)."""
    out: dict[str, dict] = {}
    seen: set[tuple] = set()
    for d in dumps:
        if d["kind"] != "thr" or d["warmup"]:
            continue
        a = out.setdefault(d["label"], {"messages": 0, "instructions": 0, "slices": 0, "roles": set()})
        a["instructions"] += d["instructions"]
        a["roles"].add(d["role"])
        if (d["label"], d["round"]) not in seen:
            seen.add((d["label"], d["round"]))
            a["messages"] += d["count"]
            a["slices"] += 1
    return out


def messages_per_slice(msg_size: int, timed: int) -> int:
    return work.messages_for("callgrind", msg_size, timed) // ROUNDS or work.MIN_MESSAGES


def measure(plan: arms.RunPlan, rt: execute.Runtime, counts: Counts, libs: dict, bench_dir: Path,
            design) -> list[dict]:
    """One callgrind arms run of the plan's cells: one work record per cell."""
    cell = plan.cells[0]
    n = messages_per_slice(cell.msg_size, counts.count)
    cg_design = dataclasses.replace(design, rounds=ROUNDS, warmup_rounds=WARMUP_ROUNDS)
    cg_counts = Counts(n, 1, mode="thr")
    factor = work.CALLGRIND_TIMEOUT_FACTOR
    exp = dataclasses.replace(rt.exp, design=cg_design, timeout_s=rt.exp.timeout_s * factor,
                              bench_timeout_ms=min(3_600_000, rt.exp.bench_timeout_ms * factor))
    path = arms.binary(bench_dir, cell.pattern)
    objects = {label: arms.shared_object(lib) for label, lib in libs.items()}
    try:
        pins = placement.pins_for(cell.placement, rt.cpus)
    except ValueError as exc:
        return [_record(c, n, {}, f"placement: {exc}") for c in plan.cells]
    endpoints = None if cell.process_model == "one-process" else command.local_endpoints(cell.transport)
    argv = arms.argvs(path, plan, objects, exp, cg_counts, pins, endpoints)
    setup = work.CallgrindSetup()
    outs = {side: rt.workdir / f"cg-arms-{cell.block_id}-{side}.out" for side in argv}
    for f in outs.values():
        for old in f.parent.glob(f.name + "*"):
            old.unlink()
    env = execute.cell_env(arms.common_env(list(plan.cells)))
    procs = [process.Proc(setup.prefix(outs[side]) + a, env, rt.workdir) for side, a in argv.items()]
    results = dict(zip(argv, process.supervise(procs, arms.timeout_s(exp, len(plan.arms))), strict=True))
    status, failure, _ = outcome.roles_status({s: (o, "") for s, o in results.items()})
    found = per_arm([d for f in outs.values() for d in slice_dumps(f)]) if status == "ok" else {}
    for f in outs.values():
        for old in f.parent.glob(f.name + "*"):
            old.unlink()
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
