"""Run one cell: the bench binary (or hyperfine around it) under `perf stat`,
with the cell's environment, optional CPU pinning and a hard timeout.

Whatever goes wrong (crash, hang, non-zero exit, garbage on stdout, a failed
verification) becomes a result line with a status and the stderr tail; it never
stops the sweep.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from testbed.sweep import perf as perfmod
from testbed.sweep.config import UNSET, Experiment
from testbed.sweep.plan import Cell

CELL_SCHEMA = "testbed.cell/1"
BENCH_SCHEMA = "testbed.bench/1"
STDERR_TAIL_CHARS = 2000
# Variables a developer's shell may carry that would change a measurement; the
# runner sets exactly the cell's values and removes the rest.
SCRUBBED_PREFIXES = ("ZMQ_ASIO_", "BENCH_", "ZLINK_")


def cell_env(params: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
    for name, value in params.items():
        env.pop(name, None)
        if value != UNSET:
            env[name] = value
    return env


def bench_argv(binary: Path, cell: Cell, exp: Experiment) -> list[str]:
    return [str(binary), "--transport", cell.transport, "--size", str(cell.msg_size),
            "--count", str(cell.count), "--lat-count", str(cell.lat_count),
            "--warmup", str(exp.warmup), "--io-threads", str(cell.io_threads),
            "--hwm", str(exp.hwm), "--timeout-ms", str(exp.bench_timeout_ms), "--mode", exp.mode]


def _pin_prefix(pin: str | None) -> list[str]:
    return ["taskset", "-c", pin] if pin else []


def _run(argv: list[str], env: dict, timeout_s: float, workdir: Path):
    """Run in its own process group; returns (exit_code|None on timeout, stdout, stderr, seconds)."""
    with tempfile.TemporaryFile(dir=workdir) as out, tempfile.TemporaryFile(dir=workdir) as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc)
            code = None
        except BaseException:  # Ctrl-C: take the benchmark down with us, then re-raise
            _kill(proc)
            raise
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        return code, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"), seconds


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def signal_seen_by_perf(stderr: str, argv0: str) -> int | None:
    """`perf stat` exits 0 when its workload dies of a signal and only prints
    psignal's "<argv0>: <description>" on stderr; recover the signal number from it."""
    descriptions = {}
    for sig in signal.Signals:
        text = signal.strsignal(sig)
        if text:
            descriptions[text] = sig.value
    for line in stderr.splitlines()[-5:]:
        if line.startswith(argv0 + ": "):
            sig = descriptions.get(line[len(argv0) + 2:].strip())
            if sig:
                return sig
    return None


def parse_bench_stdout(stdout: str, cell: Cell) -> tuple[dict | None, str]:
    """(result, "") or (None, why it is malformed)."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        return None, f"malformed output: expected one JSON line on stdout, got {len(lines)} lines"
    try:
        result = json.loads(lines[0])
    except json.JSONDecodeError as exc:
        return None, f"malformed output: not JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(result, dict) or result.get("schema") != BENCH_SCHEMA:
        return None, f"malformed output: schema is not {BENCH_SCHEMA}"
    for key, want in (("pattern", cell.pattern), ("transport", cell.transport), ("msg_size", cell.msg_size)):
        if result.get(key) != want:
            return None, f"malformed output: {key} is {result.get(key)!r}, expected {want!r}"
    verify = result.get("verify") or {}
    if verify.get("ok") is False:
        return result, f"verification failed: {verify}"
    return result, ""


def _status(code: int | None, problem: str) -> tuple[str, str]:
    if code is None:
        return "timeout", "cell timeout"
    if code == 3:
        return "timeout", "bench reported a timeout (exit 3: no peer or no progress)"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return "failed", f"killed by signal {name}"
    if code != 0:
        known = {2: "bad arguments (exit 2)", 4: "verification failed (exit 4)"}
        return "failed", known.get(code, f"exit {code}")
    if problem:
        return "failed", problem
    return "ok", ""


def run_cell(cell: Cell, rep: int, binary: Path, build_id: str, exp: Experiment,
             perf: perfmod.PerfSetup, workdir: Path, role: str) -> dict:
    env = cell_env(cell.params)
    bench = bench_argv(binary, cell, exp)
    hyperfine_json = workdir / f"hyperfine-{cell.cell_id}-{rep}.json"
    if cell.kind == "startup":
        target = ["hyperfine", "--style", "none", "--shell=none", "--warmup", "1",
                  "--runs", str(exp.hyperfine_runs), "--export-json", str(hyperfine_json),
                  shlex.join(_pin_prefix(exp.pin) + bench)]
    else:
        target = _pin_prefix(exp.pin) + bench
    perf_file = workdir / f"perf-{cell.cell_id}-{rep}.csv"
    perf_file.unlink(missing_ok=True)
    argv = perfmod.stat_prefix(perf, perf_file) + target
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if not binary.exists():
        code, stdout, stderr, seconds = 127, "", f"bench binary missing: {binary}", 0.0
    else:
        code, stdout, stderr, seconds = _run(argv, env, exp.timeout_s, workdir)
        if code == 0 and perf.available:
            sig = signal_seen_by_perf(stderr, target[0])
            code = -sig if sig else code
    if cell.kind == "startup":
        result, problem = _hyperfine_result(hyperfine_json, code)
    else:
        result, problem = parse_bench_stdout(stdout, cell) if code == 0 else (None, "")
    status, failure = _status(code, problem)
    if code == 127 and not binary.exists():
        failure = f"bench binary missing: {binary}"
    record = {
        "schema": CELL_SCHEMA, "cell_id": cell.cell_id, "repetition": rep,
        "library": cell.library, "pattern": cell.pattern, "transport": cell.transport,
        "msg_size": cell.msg_size, "io_threads": cell.io_threads, "params": cell.params,
        "config": cell.config, "status": status, "exit_code": code,
        "stderr_tail": stderr[-STDERR_TAIL_CHARS:], "wall_seconds": round(seconds, 4),
        "started_at": started, "result": result if status == "ok" else None,
        "perf": perfmod.cell_perf(perf, perf_file),
        # Additive fields (docs/data-formats.md §4 allows adding):
        "library_name": cell.library_name, "build_id": build_id, "role": role,
        "group": cell.group, "kind": cell.kind, "count": cell.count, "lat_count": cell.lat_count,
        "failure": failure, "command": argv,
    }
    perf_file.unlink(missing_ok=True)
    hyperfine_json.unlink(missing_ok=True)
    return record


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
