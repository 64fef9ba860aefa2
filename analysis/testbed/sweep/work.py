"""Work per message: instructions (and cycles where counted) a library spends per
message, a deterministic second metric beside the timing verdicts. It is work, not
speed: fewer instructions need not mean faster, so reports label it as such.

Method, detected once per run: `perf stat -e instructions,cycles` where the host
counts hardware events; otherwise callgrind's instruction count (valgrind; no cycles).
Either way it is measured on extra, unrecorded throughput-only runs, never on the
timed repetitions: one pair of runs per cell and library, with N and 2N messages, and
per message = (X(2N) - X(N)) / N, so start-up, connect and teardown cancel out. In a
two-process cell both processes are counted (summed). Under callgrind a run is ~50x
slower, so N is kept small (MAX_BYTES_CALLGRIND of payload).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from testbed.records import run_writer
from testbed.sweep import perf as perfmod

EVENTS = ("instructions", "cycles")
MAX_BYTES_CALLGRIND = 4 * 1024 * 1024
MIN_MESSAGES, MAX_MESSAGES_CALLGRIND = 200, 20000
CALLGRIND_TIMEOUT_FACTOR = 20      # the cell timeout, stretched for valgrind's slowdown


@dataclass
class CallgrindSetup:
    """Counts instructions with valgrind --tool=callgrind; the same interface as PerfSetup."""
    available: bool = True
    reason: str = ""
    events: list[str] = field(default_factory=lambda: ["instructions"])
    signals_in_stderr = False  # valgrind dies of its client's signal itself
    follows_exec = False       # valgrind stops instrumenting at an exec (taskset -> bench)

    def prefix(self, out_file: Path) -> list[str]:
        return ["valgrind", "--tool=callgrind", "--quiet", f"--callgrind-out-file={out_file}", "--"]

    def read(self, out_file: Path) -> dict:
        try:
            text = out_file.read_text(errors="replace")
        except OSError as exc:
            return {"available": False, "reason": f"callgrind output missing: {exc}", "events": {}}
        m = re.search(r"^(?:summary|totals):\s*(\d+)", text, flags=re.M)
        if not m:
            return {"available": False, "reason": "callgrind wrote no totals", "events": {}}
        return {"available": True, "events": {"instructions": {"value": float(m.group(1)), "unit": ""}}}


@dataclass
class WorkSetup:
    method: str | None        # "perf" | "callgrind" | None
    reason: str               # why this method (or why none)
    counter: object = None    # PerfSetup or CallgrindSetup

    def as_manifest(self) -> dict:
        events = list(getattr(self.counter, "events", []))
        return {"method": self.method, "reason": self.reason, "events": events}


def detect(enabled: bool = True, perf: str = "perf", arms: bool = False) -> WorkSetup:
    """How work per message is counted. arms: always callgrind (one arms run per block,
    its slices dumped per arm: sweep/work_arms.py); hardware instructions, where the host
    counts them, come with every timed arms run's own counters."""
    if not enabled:
        return WorkSetup(None, "[perf].work_per_message = false")
    if arms:
        if shutil.which("valgrind") and valgrind_works():
            return WorkSetup("callgrind", "arms: one callgrind arms run per block, instructions per slice "
                             "and arm", CallgrindSetup())
        return WorkSetup(None, "arms: valgrind is not installed (or does not run here)")
    counted = perfmod.detect((), EVENTS, perf)
    if counted.available and set(counted.events) >= set(EVENTS):
        return WorkSetup("perf", "perf stat counts instructions and cycles on this host", counted)
    why = counted.reason or f"perf cannot count {', '.join(counted.unsupported)} here"
    if shutil.which("valgrind") and valgrind_works():
        return WorkSetup("callgrind", f"{why}; callgrind counts instructions instead (no cycles)",
                         CallgrindSetup())
    return WorkSetup(None, f"{why}, and valgrind is not installed")


def messages_for(method: str, msg_size: int, calibrated_count: int) -> int:
    """N of the N/2N pair: a quarter of the timed count under perf (native speed), a
    few MiB of payload under callgrind."""
    if method == "perf":
        return max(MIN_MESSAGES, calibrated_count // 4)
    return max(MIN_MESSAGES, min(MAX_MESSAGES_CALLGRIND, MAX_BYTES_CALLGRIND // max(msg_size, 1)))


def totals(record: dict) -> dict[str, float | None]:
    """Event totals over every process of a run record."""
    events = (record.get("perf") or {}).get("events") or {}
    return {e: (events.get(e) or {}).get("value") for e in EVENTS}


def per_message(small: dict, large: dict, n: int) -> dict[str, float | None]:
    out = {}
    for event in EVENTS:
        a, b = totals(small)[event], totals(large)[event]
        out[f"{event}_per_msg"] = round((b - a) / n, 1) if a is not None and b is not None else None
    return out


def record(cell, method: str, n: int, small: dict, large: dict) -> dict:
    ok = small["status"] == "ok" and large["status"] == "ok"
    failure = "; ".join(f"{r['count']} messages: {r['failure']}" for r in (small, large)
                        if r["status"] != "ok")
    return {"group": cell.group, "cell_id": cell.cell_id, "library": cell.library, "method": method,
            "messages": n, "status": "ok" if ok else "failed", "failure": failure,
            **(per_message(small, large, n) if ok else {f"{e}_per_msg": None for e in EVENTS}),
            "runs": [{"count": r["count"], "status": r["status"], "totals": totals(r),
                      "wall_seconds": r["wall_seconds"]} for r in (small, large)]}


def load(run_dir: Path) -> dict[str, dict]:
    """cell_id -> its work record (a torn line is ignored: that cell is measured again)."""
    return {rec["cell_id"]: rec for rec in run_writer.lines(run_dir, "work")}


def append(run_dir: Path, rec: dict) -> None:
    run_writer.append(run_dir, "work", rec)


def valgrind_works() -> bool:
    """valgrind can be installed yet unusable (e.g. in some containers)."""
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--quiet",
                               f"--callgrind-out-file={tmp}/cg.out", "true"], capture_output=True, timeout=60)
    return proc.returncode == 0
