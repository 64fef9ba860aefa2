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

from testbed.bench import command
from testbed.records import slices as slicesmod
from testbed.sweep import arms, arms_pool, execute, outcome, placement, process
from testbed.sweep.execute import Attempt, Counts


def _parse(stdout: str, cell, role: str | None) -> tuple[dict | None, str]:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        return None, f"malformed output: expected one JSON line on stdout, got {len(lines)} lines"
    try:
        line = json.loads(lines[0])
    except json.JSONDecodeError as exc:
        return None, f"malformed output: not JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(line, dict) or line.get("schema") != arms.ARMS_SCHEMA:
        return None, f"malformed output: schema is not {arms.ARMS_SCHEMA}"
    for key, want in (("pattern", cell.pattern), ("transport", cell.transport), ("msg_size", cell.msg_size),
                      *((("role", role),) if role else ())):
        if line.get(key) != want:
            return None, f"malformed output: {key} is {line.get(key)!r}, expected {want!r}"
    if not isinstance(line.get("arms"), list) or not isinstance(line.get("rounds"), list):
        return None, "malformed output: no arms or rounds"
    if (line.get("verify") or {}).get("ok") is False:
        return line, f"verification failed: {line.get('verify')}"
    return line, ""


def join(receiver: dict, sender: dict) -> dict:
    """One line from the two roles' (contract: throughput slices timed at the receiver,
    latency slices measured by the sender, counters summed per slice, each process's
    kept as `counters_by_role`)."""
    if len(receiver["rounds"]) != len(sender["rounds"]):
        raise ValueError(f"the roles report {len(receiver['rounds'])} and {len(sender['rounds'])} rounds")
    rounds = []
    for r_round, s_round in zip(receiver["rounds"], sender["rounds"], strict=True):
        r_slices, s_slices = r_round.get("slices") or [], s_round.get("slices") or []
        if [_key(s) for s in r_slices] != [_key(s) for s in s_slices]:
            raise ValueError(f"round {r_round.get('round')}: the roles' slices differ")
        slices = []
        for r, s in zip(r_slices, s_slices, strict=True):
            joined = {**s, **r} if r.get("kind") == "thr" else {**r, **s}
            if r.get("kind") == "thr" and "sender_seconds" in s:
                joined["sender_seconds"] = s["sender_seconds"]
            joined["counters"] = _summed(r.get("counters") or {}, s.get("counters") or {})
            joined["counters_by_role"] = {"receiver": r.get("counters"), "sender": s.get("counters")}
            slices.append(joined)
        rounds.append({**r_round, "slices": slices})
    out = json.loads(json.dumps(receiver))
    events = [e for e in (receiver.get("counters") or {}).get("events", [])
              if e in set((sender.get("counters") or {}).get("events", []))]
    out.update(role="joined", rounds=rounds, sender_settings=sender.get("settings"),
               counters={"source": (receiver.get("counters") or {}).get("source"), "events": events,
                         "by_role": {"receiver": receiver.get("counters"), "sender": sender.get("counters")}})
    rv, sv = receiver.get("verify") or {}, sender.get("verify") or {}
    out["verify"] = {**rv, "ok": bool(rv.get("ok", True)) and bool(sv.get("ok", True)), "sender": sv}
    out["threads"] = ([{**t, "process": "receiver"} for t in receiver.get("threads") or []]
                      + [{**t, "process": "sender"} for t in sender.get("threads") or []])
    return out


def _key(s: dict) -> tuple:
    return s.get("arm"), s.get("kind")


def _summed(a: dict, b: dict) -> dict:
    return {k: a[k] + b[k] for k in a if k in b and isinstance(a[k], (int, float))
            and isinstance(b[k], (int, float))}


def run(plan: arms.RunPlan, rep: int, rt: execute.Runtime, counts: Counts, libs: dict, bench_dir: Path,
        roles: dict[str, str], design) -> tuple[list[dict], dict | None]:
    """(one record per cell of the plan, the slices line or None when it failed).
    `libs`: library label -> LibraryBuild; `roles`: library label -> reference/candidate."""
    cell = plan.cells[0]
    started = execute.now()
    path = arms.binary(bench_dir, cell.pattern)
    attempts = [Attempt(c, rep, path, libs[c.library].info.get("build_id", ""), roles[c.library])
                for c in plan.cells]
    try:
        pins = placement.pins_for(cell.placement, rt.cpus)
    except ValueError as exc:
        return _failed_all(attempts, counts, started, f"placement: {exc}"), None
    if not path.exists():
        return _failed_all(attempts, counts, started, f"arms binary missing: {path}", code=127), None
    objects = {label: arms.shared_object(lib) for label, lib in libs.items()}
    endpoints = None if cell.process_model == "one-process" else command.local_endpoints(cell.transport)
    exp = rt.exp
    argv = arms.argvs(path, plan, objects, exp, counts, pins, endpoints)
    env = execute.cell_env({k: v for k, v in arms.common_env(list(plan.cells)).items()})
    timeout = arms.timeout_s(exp, len(plan.arms))
    procs = [process.Proc(a, env, rt.workdir) for a in argv.values()]
    outs = dict(zip(argv, process.supervise(procs, timeout), strict=True))
    parsed = {side: _parse(o.stdout, cell, None if side == "both" else side) if o.code == 0 else (None, "")
              for side, o in outs.items()}
    status, failure, code = outcome.roles_status({s: (outs[s], parsed[s][1]) for s in outs})
    line = None
    if status == "ok":
        try:
            line = parsed["both"][0] if "both" in parsed else join(parsed["receiver"][0], parsed["sender"][0])
        except (ValueError, KeyError, TypeError) as exc:
            status, failure = "failed", f"malformed output: {exc}"
    wall = max(o.seconds for o in outs.values())
    common = {"exit_code": code, "wall_seconds": round(wall, 4), "started_at": started,
              "stderr_tail": "\n".join(f"[{s}] {o.stderr[-execute.STDERR_TAIL_CHARS // 2:]}"
                                       for s, o in outs.items()),
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


def _failed_all(attempts: list[Attempt], counts: Counts, started: str, why: str,
                code: int | None = None) -> list[dict]:
    out = []
    for att in attempts:
        rec = execute._unrunnable(att, counts, started, why, code)
        rec["layout"] = arms.ARMS
        out.append(rec)
    return out
