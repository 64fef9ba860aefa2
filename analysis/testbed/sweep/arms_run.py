"""Run one arms run (sweep/arms.py) and turn it into one record per cell.

The processes run as a block run's do (execute.py): each role in its own process
group in the runner's session, pinned by the bench itself, supervised together with a
hard deadline; whatever goes wrong becomes a failed record for every cell of the run,
with the cause, and the sweep goes on. The bench's counters (perf_event_open, or
getrusage) are per slice, so the runs are not wrapped in perf stat.

Each cell's record has the shape of a block run's (docs/data-formats.md §4), its
`result` pooled over the run's slices of its arm (arms_pool.py), plus `arms_run`: the
run's id within the block, the arm's place in the creation order and the seed. The
slices themselves go to slices.jsonl (records/slices.py), one line per run.
"""
from __future__ import annotations

import json
from pathlib import Path

from testbed.bench import command, validate_arms
from testbed.records import slices as slicesmod
from testbed.sweep import arms, arms_pool, execute, outcome, placement, process
from testbed.sweep.execute import Attempt, Counts


def _parse(stdout: str, plan: arms.RunPlan, role: str | None, counts: Counts,
           design) -> tuple[dict | None, str]:
    """(line, "") or (line or None, why it is not acceptable): testbed.bench.validate_arms,
    with what this run asked for (cell, arms in creation order, rounds, slice counts)."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        return None, f"malformed output: expected one JSON line on stdout, got {len(lines)} lines"
    try:
        line = json.loads(lines[0])
    except json.JSONDecodeError as exc:
        return None, f"malformed output: not JSON ({exc.msg} at column {exc.colno})"
    cell = plan.cells[0]
    problems = validate_arms.arms_result_problems(
        line, pattern=cell.pattern, transport=cell.transport, msg_size=cell.msg_size,
        arms=[a.label for a in plan.arms], rounds=design.rounds, slice_count=counts.count,
        slice_lat_count=counts.lat_count)
    if role and isinstance(line, dict) and line.get("role") != role:
        problems.insert(0, f"role is {line.get('role')!r}, expected {role!r}")
    if not problems:
        return line, ""
    failed = [p for p in problems if p.startswith("verification failed")]
    if failed:
        return line, failed[0]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return None, f"malformed output: {problems[0]}{more}"


def run(plan: arms.RunPlan, rep: int, rt: execute.Runtime, counts: Counts, libs: dict, bench_dir: Path | None,
        roles: dict[str, str], design, counters: str = arms.COUNTERS) -> tuple[list[dict], dict | None]:
    """(one record per cell of the plan, the slices line or None when it failed).
    `libs`: library label -> LibraryBuild; `roles`: library label -> reference/candidate;
    `counters`: the bench's --counters (a counting run's differ: sweep/counting.py)."""
    cell = plan.cells[0]
    started = execute.now()
    path = arms.binary(bench_dir, cell.pattern) if bench_dir is not None else Path("bench_arms_missing")
    attempts = [Attempt(c, rep, path, libs[c.library].info.get("build_id", ""), roles[c.library])
                for c in plan.cells]
    try:
        pins = placement.pins_for(cell.placement, rt.cpus)
    except ValueError as exc:
        return _failed_all(attempts, counts, started, f"placement: {exc}"), None
    if not path.exists():
        return _failed_all(attempts, counts, started, f"arms binary missing: {path}", code=127), None
    endpoints = None if cell.process_model == "one-process" else command.local_endpoints(cell.transport)
    exp = rt.exp
    argv = arms.argvs(path, plan, libs, exp, design, counts, pins, endpoints, counters)
    env = execute.cell_env(arms.common_env(list(plan.cells)))
    procs = [process.Proc(a, env, rt.workdir) for a in argv.values()]
    outs = dict(zip(argv, process.supervise(procs, arms.timeout_s(exp, design, len(plan.arms))), strict=True))
    parsed = {side: _parse(o.stdout, plan, None if side == "both" else side, counts, design)
              if o.code == 0 else (None, "") for side, o in outs.items()}
    status, failure, code = outcome.roles_status({s: (outs[s], parsed[s][1]) for s in outs})
    line = None
    if status == "ok":
        try:
            line = parsed["both"][0] if "both" in parsed else \
                command.join_arms_roles(parsed["receiver"][0], parsed["sender"][0])
            command.annotate_arms(line, arms.arm_libs(plan, libs))
        except (ValueError, KeyError, TypeError) as exc:
            status, failure, line = "failed", f"malformed output: {exc}", None
    wall = max(o.seconds for o in outs.values())
    tails = "\n".join(f"[{s}] {o.stderr[-execute.STDERR_TAIL_CHARS // 2:]}" for s, o in outs.items())
    common = {"exit_code": code, "wall_seconds": round(wall, 4), "started_at": started, "stderr_tail": tails,
              "command": argv, "pins": pins.as_dict(),
              "perf": {"available": False, "reason": "arms runs count per slice (result.counted)",
                       "events": {}},
              "arms_run": {"seed": plan.seed, "arms": len(plan.arms), "load_order": list(plan.load_order),
                           "rounds": design.rounds, "warmup_rounds": design.warmup_rounds}}
    records = []
    for i, att in enumerate(attempts):
        rec = {**execute.base_record(att, counts), **common, "status": status, "failure": failure,
               "result": None, "layout": arms.ARMS}
        rec["arms_run"] = {**common["arms_run"], "position": i}
        if line is not None:
            rec.update(_arm_record(line, i, att, exp, counts))
        rec["wall_seconds"] = round(wall / len(attempts), 4)  # the run's time, shared: the budget sums them
        rec["run_wall_seconds"] = round(wall, 4)
        rec["placement_check"] = placement.check_threads(pins, (rec.get("result") or {}).get("threads"))
        records.append(rec)
    slices = slicesmod.line(cell.block_id, rep, [c.cell_id for c in plan.cells], plan.seed, line) \
        if line is not None else None
    return records, slices


def _arm_record(line: dict, i: int, att: Attempt, exp, counts: Counts) -> dict:
    mode = counts.mode or exp.mode
    info = (line.get("arms") or [])
    if i >= len(info) or info[i].get("label") != att.cell.cell_id:
        got = info[i].get("label") if i < len(info) else None
        return {"status": "failed", "failure": f"malformed output: arm {i} is {got!r}, expected "
                                               f"{att.cell.cell_id!r}"}
    result = arms_pool.arm_result(line, i, att.cell.msg_size, mode)
    why = arms_pool.missing(result, mode)
    if why:
        return {"status": "failed", "failure": f"malformed output: {why}", "result": None}
    return {"result": result}


def failed(plan: arms.RunPlan, rep: int, counts: Counts, libs: dict, roles: dict[str, str],
           why: str) -> list[dict]:
    """One failed record per cell of a run that could not start (e.g. a library that
    cannot be loaded into a namespace: a blocks run's counting runs, sweep/counting.py)."""
    attempts = [Attempt(c, rep, Path("bench_arms_unavailable"), libs[c.library].info.get("build_id", ""),
                        roles[c.library]) for c in plan.cells]
    return _failed_all(attempts, counts, execute.now(), why)


def _failed_all(attempts: list[Attempt], counts: Counts, started: str, why: str,
                code: int | None = None) -> list[dict]:
    out = []
    for att in attempts:
        rec = execute._unrunnable(att, counts, started, why, code)
        rec["layout"] = arms.ARMS
        out.append(rec)
    return out
