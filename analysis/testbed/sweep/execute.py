"""Run one cell attempt and describe it as one result line (docs/data-formats.md §4).

One process: the bench binary (or hyperfine around it) under `perf stat`, with the
cell's environment, the placement's pins as bench flags, and a hard timeout. Two
processes (two-process on this machine, two-host across a host pair): the receiver
role binds, the sender role connects, each on its side's CPU (taskset), each under
its own `perf stat` where its host allows, both supervised together; their JSON lines
are joined into one result.

Whatever goes wrong (crash, hang, a dead peer, non-zero exit, garbage on stdout, a
failed verification, a placement or link the host cannot give) becomes a result line
with a status and the cause; it never stops the sweep.
"""
from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from testbed.bench import command
from testbed.sweep import outcome, placement, process
from testbed.sweep import perf as perfmod
from testbed.sweep.config import UNSET, Experiment
from testbed.sweep.hosts import HostError, LocalHost
from testbed.sweep.plan import Cell

CELL_SCHEMA = "testbed.cell/1"
STDERR_TAIL_CHARS = 2000
# Variables a developer's shell may carry that would change a measurement; the
# runner sets exactly the cell's values and removes the rest.
SCRUBBED_PREFIXES = ("ZMQ_ASIO_", "BENCH_", "ZLINK_")
SIDES = ("receiver", "sender")   # start order: the receiver binds first


@dataclass
class TwoHost:
    """The host pair of two-host cells and the shaper of the link between them."""
    receiver: object            # a hosts.*Host
    sender: object
    address: str                # what the sender connects to
    port: int
    shaper: object | None = None  # links.LinkShaper (netns only)
    links: dict = field(default_factory=dict)  # name -> LinkSpec


@dataclass
class Runtime:
    """What every cell of a run shares."""
    exp: Experiment
    perf: perfmod.PerfSetup
    workdir: Path
    cpus: list[int]
    two_host: TwoHost | None = None
    two_host_problem: str = ""     # why two-host cells cannot run here ("" = they can)
    local: LocalHost = field(default_factory=LocalHost)


@dataclass(frozen=True)
class Counts:
    count: int
    lat_count: int
    mode: str | None = None     # None: the experiment's mode
    calibrated: bool = False
    lat_warmup: int | None = None  # None: the bench's default (lat_count / 10, 10..1000)


@dataclass(frozen=True)
class Attempt:
    cell: Cell
    repetition: int
    binary: Path
    build_id: str
    role: str                   # reference | candidate | warmup | probe


def cell_env(params: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
    for name, value in params.items():
        env.pop(name, None)
        if value != UNSET:
            env[name] = value
    return env


def declared_counts(cell: Cell) -> Counts:
    return Counts(cell.count, cell.lat_count)


def _options(cell: Cell, exp: Experiment, counts: Counts) -> dict:
    # None values (lat_warmup unless calibrated to a time) keep the bench's defaults:
    # command.bench_argv leaves them out.
    return {"count": counts.count, "lat_count": counts.lat_count, "warmup": exp.warmup,
            "lat_warmup": counts.lat_warmup, "io_threads": cell.io_threads, "hwm": exp.hwm,
            "timeout_ms": exp.bench_timeout_ms, "mode": counts.mode or exp.mode}


def bench_argv(binary: Path, cell: Cell, exp: Experiment, counts: Counts | None = None,
               **extra: object) -> list[str]:
    """The cell's one-process command line, from the one argv builder (testbed.bench.command)."""
    counts = counts or declared_counts(cell)
    return command.bench_argv(binary, cell.transport, cell.msg_size, **_options(cell, exp, counts), **extra)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_cell(att: Attempt, rt: Runtime, counts: Counts | None = None) -> dict:
    counts = counts or declared_counts(att.cell)
    if att.cell.kind == "perf-tools":  # libzmq's own programs, not the bench
        from testbed.sweep import perf_tools
        return perf_tools.run_cell(att, rt, counts)
    started = now()
    try:
        pins = placement.pins_for(att.cell.placement, rt.cpus)
    except ValueError as exc:
        return _unrunnable(att, counts, started, f"placement: {exc}")
    if not att.binary.exists():
        return _unrunnable(att, counts, started, f"bench binary missing: {att.binary}", code=127)
    if att.cell.process_model == "one-process":
        rec = _one_process(att, rt, counts, pins)
    else:
        rec = _two_roles(att, rt, counts, pins)
    rec["started_at"] = started
    rec["placement_check"] = placement.check_threads(pins, (rec.get("result") or {}).get("threads"))
    return rec


def base_record(att: Attempt, counts: Counts) -> dict:
    cell = att.cell
    return {
        "schema": CELL_SCHEMA, "cell_id": cell.cell_id, "repetition": att.repetition,
        "library": cell.library, "pattern": cell.pattern, "transport": cell.transport,
        "msg_size": cell.msg_size, "io_threads": cell.io_threads, "params": cell.params,
        "config": cell.config,
        # Additive fields (docs/data-formats.md §4 allows adding):
        "library_name": cell.library_name, "build_id": att.build_id, "role": att.role,
        "group": cell.group, "block": cell.block_id, "kind": cell.kind, "count": counts.count,
        "lat_count": counts.lat_count,
        "lat_warmup": counts.lat_warmup, "calibrated": counts.calibrated, "placement": cell.placement,
        "process_model": cell.process_model, "link": cell.link,
    }


def _unrunnable(att: Attempt, counts: Counts, started: str, why: str, code: int | None = None) -> dict:
    """A cell that could not even start (placement, host, link, binary): failed, with why."""
    return {**base_record(att, counts), "status": "failed", "exit_code": code, "stderr_tail": "",
            "wall_seconds": 0.0, "started_at": started, "result": None,
            "perf": {"available": False, "reason": "not run", "events": {}}, "failure": why,
            "command": [], "pins": None, "placement_check": {"checked": 0, "ok": None, "mismatches": []}}


def _one_process(att: Attempt, rt: Runtime, counts: Counts, pins: placement.Pins) -> dict:
    cell, exp = att.cell, rt.exp
    extra = {"pin_sender": pins.sender, "pin_receiver": pins.receiver} if pins.sender else {}
    bench = bench_argv(att.binary, cell, exp, counts, **extra)
    hyperfine_json = rt.workdir / f"hyperfine-{cell.cell_id}-{att.repetition}.json"
    if cell.kind == "startup":
        target = ["hyperfine", "--style", "none", "--shell=none", "--warmup", "1",
                  "--runs", str(exp.hyperfine_runs), "--export-json", str(hyperfine_json), shlex.join(bench)]
    else:
        target = bench
    perf_file = rt.workdir / f"perf-{cell.cell_id}-{att.repetition}.csv"
    perf_file.unlink(missing_ok=True)
    argv = rt.perf.prefix(perf_file) + target
    out = process.run(argv, cell_env(cell.params), exp.timeout_s, rt.workdir)
    _signal_under_perf(out, rt, rt.local, target[0])
    if cell.kind == "startup":
        result, problem = _hyperfine_result(hyperfine_json, out.code)
    else:
        result, problem = outcome.parse_bench_stdout(out.stdout, cell) if out.code == 0 else (None, "")
    status, failure = outcome.status_of(out.code, problem, out.killed)
    rec = {**base_record(att, counts), "status": status, "exit_code": out.code,
           "stderr_tail": out.stderr[-STDERR_TAIL_CHARS:], "wall_seconds": round(out.seconds, 4),
           "result": result if status == "ok" else None, "perf": rt.perf.read(perf_file),
           "failure": failure, "command": argv, "pins": pins.as_dict()}
    perf_file.unlink(missing_ok=True)
    hyperfine_json.unlink(missing_ok=True)
    return rec


def _hyperfine_result(path: Path, code: int | None) -> tuple[dict | None, str]:
    if code != 0:
        return None, ""
    try:
        data = json.loads(path.read_text())["results"][0]
    except (OSError, ValueError, KeyError, IndexError) as exc:
        return None, f"malformed hyperfine output: {exc}"
    keep = ("mean", "stddev", "median", "min", "max", "times", "exit_codes")
    return {"schema": "testbed.hyperfine/1", "unit": "s", "runs": len(data.get("times", [])),
            **{k: data.get(k) for k in keep}}, ""


# ---------------------------------------------------------------- two roles

def endpoints(cell: Cell, rt: Runtime) -> command.Endpoints:
    """Where the receiver binds and the sender connects (the bench puts its control
    connection beside them)."""
    if cell.process_model == "two-host":
        th = rt.two_host
        return command.Endpoints(f"tcp://0.0.0.0:{th.port}", f"tcp://{th.address}:{th.port}")
    return command.local_endpoints(cell.transport)


def role_hosts(cell: Cell, rt: Runtime) -> dict:
    """side -> host driver; HostError when this machine cannot provide them."""
    if cell.process_model != "two-host":
        return {"receiver": rt.local, "sender": rt.local}
    if rt.two_host is None:
        raise HostError(rt.two_host_problem or "no host pair was set up for two-host cells")
    if rt.two_host.shaper is not None:
        rt.two_host.shaper.apply(rt.two_host.links.get(cell.link))
    return {"receiver": rt.two_host.receiver, "sender": rt.two_host.sender}


def role_argvs(att: Attempt, rt: Runtime, counts: Counts, pins: placement.Pins, hosts: dict,
               perf_files: dict) -> dict[str, list[str]]:
    """Each role's full command: the bench (which pins its own process to its side's
    CPUs), under perf stat where its host allows, started through its host driver."""
    cell, exp = att.cell, rt.exp
    bench = dict(zip(SIDES, command.role_argvs(
        att.binary, cell.transport, cell.msg_size, endpoints(cell, rt), cell.process_model,
        **_options(cell, exp, counts), pin_sender=pins.sender, pin_receiver=pins.receiver), strict=True))
    out = {}
    for side in SIDES:
        counter = rt.perf.prefix(perf_files[side]) if hosts[side].perf else []
        out[side] = hosts[side].wrap([*counter, *bench[side]], exp.timeout_s)
    return out


def _two_roles(att: Attempt, rt: Runtime, counts: Counts, pins: placement.Pins) -> dict:
    cell = att.cell
    try:
        hosts = role_hosts(cell, rt)
    except HostError as exc:
        return _unrunnable(att, counts, now(), f"{cell.process_model}: {exc}")
    perf_files = {side: rt.workdir / f"perf-{cell.cell_id}-{att.repetition}-{side}.csv" for side in SIDES}
    argvs = role_argvs(att, rt, counts, pins, hosts, perf_files)
    env = cell_env(cell.params)
    procs = [process.Proc(argvs[side], env, rt.workdir) for side in SIDES]
    outs = dict(zip(SIDES, process.supervise(procs, rt.exp.timeout_s), strict=True))
    for side in SIDES:
        _signal_under_perf(outs[side], rt, hosts[side], str(att.binary))
    parsed = {side: outcome.parse_bench_stdout(o.stdout, cell, role=side) if o.code == 0 else (None, "")
              for side, o in outs.items()}
    status, failure, code = outcome.roles_status({s: (outs[s], parsed[s][1]) for s in SIDES})
    result = command.join_roles(parsed["receiver"][0], parsed["sender"][0]) if status == "ok" else None
    roles = {side: _role_entry(outs[side], parsed[side][0], hosts[side], rt, perf_files[side])
             for side in SIDES}
    for f in perf_files.values():
        f.unlink(missing_ok=True)
    return {**base_record(att, counts), "status": status, "exit_code": code,
            "stderr_tail": "\n".join(f"[{s}] {outs[s].stderr[-STDERR_TAIL_CHARS // 2:]}" for s in SIDES),
            "wall_seconds": round(max(o.seconds for o in outs.values()), 4), "result": result,
            "perf": perfmod.combined([roles[s]["perf"] for s in SIDES]), "failure": failure,
            "command": {s: argvs[s] for s in SIDES}, "pins": pins.as_dict(), "roles": roles,
            "hosts": {s: hosts[s].name for s in SIDES}}


def _signal_under_perf(out: process.Outcome, rt: Runtime, host, argv0: str) -> None:
    """perf stat exits 0 when its workload dies of a signal: recover the signal."""
    if out.code == 0 and rt.perf.available and host.perf and rt.perf.signals_in_stderr:
        sig = outcome.signal_seen_by_perf(out.stderr, argv0)
        out.code = -sig if sig else out.code


def _role_entry(out: process.Outcome, line: dict | None, host, rt: Runtime, perf_file: Path) -> dict:
    perf = rt.perf.read(perf_file) if host.perf else \
        {"available": False, "reason": f"perf is not run on {host.kind} hosts", "events": {}}
    return {"exit_code": out.code, "killed": out.killed or None, "wall_seconds": round(out.seconds, 4),
            "stderr_tail": out.stderr[-STDERR_TAIL_CHARS:], "perf": perf, "host": host.name, "result": line}
