"""The host ceiling inside a run ([ceiling] in experiment.toml, issue 27.5).

For a block of tcp/ipc bench cells at one of the declared sizes, every batch (one
repetition of the block) also runs bench/ceiling's ceiling_probe: a plain socket pump
with no messaging library, streaming messages of the cells' size over the cells'
transport, with their placement (the same pins), process model (one process with two
threads, or a receiver and a sender process on one endpoint), socket buffers (the
cells set none, so neither does the probe: OS defaults) and mode. It runs between the
batch's cells, at a position that moves with the repetition, so host drift hits it
and the libraries alike, and it is repeated exactly as often as the batch is
(adaptive rounds included). Each probe is one line of `ceiling.jsonl` in the run
directory, fsynced like results.jsonl, keyed by (block, repetition) and naming the
cells it ran beside; a resumed run probes only the batches that have no line yet. A
probe that fails (a crash, a timeout, an invalid result, a placement the host cannot
give) is a line with its status and cause, and the sweep goes on.

The report (results/ceiling.py) pairs each cell's repetition with its batch's probe:
the library's share of the ceiling, per pair, with its spread.
"""
from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from testbed.bench import command, validate
from testbed.bench.ceiling_cmd import join_probe_lines, probe_argv
from testbed.records import run_writer
from testbed.sweep import placement, process
from testbed.sweep.config_ceiling import PROCESS_MODELS, TRANSPORTS
from testbed.sweep.plan import Cell

SCHEMA = "testbed.ceiling-probe/1"
PROBE_BINARY = "ceiling_probe"     # built beside the bench binaries of every library build
STDERR_TAIL_CHARS = 2000


def bounds(exp, cell: Cell) -> bool:
    """Whether this cell's batches get a probe."""
    spec = exp.ceiling
    return (spec is not None and cell.kind == "bench" and cell.transport in TRANSPORTS
            and cell.msg_size in spec.sizes and cell.process_model in PROCESS_MODELS)


def done(run_dir: Path) -> set[tuple[str, int]]:
    """(block, repetition) of every probe already written (ok or not: a failed probe
    is recorded like a failed cell, not retried on resume)."""
    return {(ln.get("block"), ln.get("repetition")) for ln in run_writer.lines(run_dir, "ceiling")}


def position(n_cells: int, repetition: int) -> int:
    """Where the probe goes among a batch's n cells: before cell k, k moving by one
    per repetition (0, 1, ..., n, 0, ...), so it is not always first or last."""
    return repetition % (n_cells + 1)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _options(exp, cell: Cell, pins: placement.Pins) -> dict:
    spec = exp.ceiling
    return {"sizes": cell.msg_size, "mode": exp.mode, "bytes": spec.bytes, "lat_count": spec.lat_count,
            "write_sizes": ",".join(map(str, spec.write_sizes)), "io_waits": ",".join(spec.io_waits),
            "source_messages": spec.source_messages if spec.source_messages != 1 else None,
            "timeout_ms": exp.bench_timeout_ms, "pin_sender": pins.sender, "pin_receiver": pins.receiver}


def _parse(out: process.Outcome) -> tuple[dict | None, str]:
    if out.code != 0:
        return None, ""
    line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    try:
        return json.loads(line), ""
    except json.JSONDecodeError:
        return None, f"not one JSON line on stdout: {line[:200]!r}"


def _status(outs: dict[str, process.Outcome]) -> tuple[str, str]:
    for side, out in outs.items():
        if out.killed == "timeout":
            return "timeout", f"{side}: killed at the cell timeout"
    for side, out in outs.items():
        if out.code != 0:
            why = out.killed or f"exit {out.code}"
            return "failed", f"{side}: {why}: {out.stderr.strip()[-300:]}"
    return "ok", ""


def _run(argvs: dict[str, list[str]], exp, workdir: Path) -> dict[str, process.Outcome]:
    """Both roles supervised together (a dead receiver ends its sender), the cells' timeout."""
    procs = [process.Proc(argv, dict(os.environ), workdir) for argv in argvs.values()]
    return dict(zip(argvs, process.supervise(procs, exp.timeout_s), strict=True))


def measure(exp, cell: Cell, repetition: int, cell_ids: list[str], binary: Path, cpus: list[int],
            workdir: Path) -> dict:
    """Run the probe for `cell`'s block at `repetition`; one ceiling.jsonl line, never
    an exception for anything the probe or the host does."""
    line = {"schema": SCHEMA, "block": cell.block_id, "repetition": repetition, "cell_ids": cell_ids,
            "transport": cell.transport, "msg_size": cell.msg_size, "placement": cell.placement,
            "process_model": cell.process_model, "started_at": _now(), "status": "failed", "failure": "",
            "wall_seconds": 0.0, "command": None, "pins": None, "result": None, "stderr_tail": ""}
    try:
        pins = placement.pins_for(cell.placement, cpus)
    except ValueError as exc:
        return {**line, "failure": f"placement: {exc}"}
    if not binary.exists():
        return {**line, "failure": f"{PROBE_BINARY} missing: {binary}"}
    options = _options(exp, cell, pins)
    if cell.process_model == "one-process":
        argvs = {"both": probe_argv(binary, transports=cell.transport, **options)}
    else:
        ep = command.local_endpoints(cell.transport)
        argvs = {"receiver": probe_argv(binary, role="receiver", bind=ep.bind, **options),
                 "sender": probe_argv(binary, role="sender", connect=ep.connect, **options)}
    outs = _run(argvs, exp, workdir)
    status, failure = _status(outs)
    parsed = {side: _parse(out) for side, out in outs.items()}
    bad = next((f"{side}: {why}" for side, (_, why) in parsed.items() if why), "")
    result = None
    if status == "ok" and not bad:
        result = parsed["both"][0] if "both" in parsed else \
            join_probe_lines(parsed["receiver"][0], parsed["sender"][0])
        problems = validate.ceiling_problems(result)
        bad = "invalid result: " + "; ".join(problems[:3]) if problems else ""
    if bad:
        status, failure, result = "failed", bad, None
    return {**line, "status": status, "failure": failure, "result": result, "pins": pins.as_dict(),
            "wall_seconds": round(max(o.seconds for o in outs.values()), 4),
            "command": argvs, "stderr_tail": "\n".join(f"[{s}] {o.stderr[-STDERR_TAIL_CHARS // 2:]}"
                                                       for s, o in outs.items() if o.stderr.strip())}


def append(run_dir: Path, line: dict) -> None:
    run_writer.append(run_dir, "ceiling", line)


def summarize(lines: list[dict]) -> dict:
    """For the manifest: probes run (the last line of a batch wins) and how they ended."""
    last = {(ln.get("block"), ln.get("repetition")): ln for ln in lines}
    statuses = [ln.get("status") for ln in last.values()]
    ok = statuses.count("ok")
    return {"probes": len(statuses), "ok": ok, "failed": len(statuses) - ok}
