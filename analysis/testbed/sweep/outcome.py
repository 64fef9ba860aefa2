"""What a finished bench process means: its JSON line checked against the cell, its exit
status turned into `ok`/`failed`/`timeout` with a one-line cause, and the two role
lines of a two-process cell joined into one result (throughput timed at the
receiver, latency measured by the sender: docs/data-formats.md §3)."""
from __future__ import annotations

import json
import signal

from testbed.sweep.plan import Cell
from testbed.sweep.process import Outcome

BENCH_SCHEMA = "testbed.bench/1"
EXIT_MEANING = {1: "library or system error (exit 1)", 2: "bad arguments (exit 2)",
                3: "timeout (exit 3: no peer or no progress)", 4: "verification failed (exit 4)"}


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


def parse_bench_stdout(stdout: str, cell: Cell, role: str | None = None) -> tuple[dict | None, str]:
    """(result, "") or (result or None, why it is not acceptable)."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        return None, f"malformed output: expected one JSON line on stdout, got {len(lines)} lines"
    try:
        result = json.loads(lines[0])
    except json.JSONDecodeError as exc:
        return None, f"malformed output: not JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(result, dict) or result.get("schema") != BENCH_SCHEMA:
        return None, f"malformed output: schema is not {BENCH_SCHEMA}"
    expected = [("pattern", cell.pattern), ("transport", cell.transport), ("msg_size", cell.msg_size)]
    if role is not None:
        expected.append(("role", role))
    for key, want in expected:
        if result.get(key) != want:
            return None, f"malformed output: {key} is {result.get(key)!r}, expected {want!r}"
    verify = result.get("verify") or {}
    if verify.get("ok") is False:
        return result, f"verification failed: {verify}"
    return result, ""


def status_of(code: int | None, problem: str, killed: str = "") -> tuple[str, str]:
    """(status, failure) of one process."""
    if code is None:
        if killed == "peer failed":
            return "timeout", "killed after the other process of this cell failed"
        return "timeout", "cell timeout (no exit within [run].timeout_s; killed)"
    if code == 3:
        return "timeout", "bench reported a timeout (exit 3: no peer or no progress)"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return "failed", f"killed by signal {name}"
    if code != 0:
        return "failed", EXIT_MEANING.get(code, f"exit {code}")
    if problem:
        return "failed", problem
    return "ok", ""


def roles_status(per_role: dict[str, tuple[Outcome, str]]) -> tuple[str, str, int | None]:
    """(status, failure naming each role's problem, exit code) of a two-role cell. A role
    we killed because its peer failed says so; the cell is `failed` if any role failed,
    `timeout` if the only problems were timeouts."""
    statuses, causes, codes = [], [], []
    for side, (out, problem) in per_role.items():
        status, failure = status_of(out.code, problem, out.killed)
        if status != "ok":
            statuses.append(status)
            causes.append(f"{side}: {failure}")
            codes.append(out.code)
    if not causes:
        return "ok", "", 0
    code = next((c for c in codes if c), None)  # the first real exit status, else None (killed)
    return ("failed" if "failed" in statuses else "timeout"), "; ".join(causes), code
