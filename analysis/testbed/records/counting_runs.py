"""What the sweep and the analysis both know of counting runs ([run].counting_runs;
sweep/counting.py runs them): how their records are marked, which are recorded, and
why a run's counting runs gave no system calls. Their records live in counting.jsonl
(run_writer "counting"; RunDir.counting_cells), never in results.jsonl.
"""
from __future__ import annotations

from testbed.records import counted

PURPOSE = "counting"   # each record's `purpose`: its times are not for any verdict


def latest(records: list[dict]) -> list[dict]:
    """The last record per (cell, counting run): a resumed run may repeat an attempt, and
    the last line wins (as RunDir.cells for timed records)."""
    return list({(r["cell_id"], r["repetition"]): r for r in records}.values())


def done(records: list[dict]) -> set[tuple[str, int]]:
    """(cell id, counting run) of every recorded attempt, ok or not (as timed runs: a
    failed attempt is recorded, not retried)."""
    return {(r["cell_id"], r["repetition"]) for r in records if r.get("purpose") == PURPOSE}


def not_counted(records: list[dict]) -> str:
    """Why a run's counting runs gave no system calls ("" when some did): the bench's
    own reason (counters.unavailable), else what went wrong with the runs."""
    ok = [r for r in records if r.get("status") == "ok"]
    if any(counted.value(r.get("result"), "cw_syscalls_per_msg") is not None for r in ok):
        return ""
    if not records:
        return "no counting run was recorded"
    reasons = sorted({str(why) for r in ok
                      for event, why in (((r.get("result") or {}).get("counted") or {}).get("unavailable")
                                         or {}).items() if event.startswith("syscalls")})
    if reasons:
        return "the host could not count the syscall tracepoints: " + "; ".join(reasons)
    if not ok:
        causes = sorted({str(r.get("failure") or r.get("status")) for r in records})
        more = f", and {len(causes) - 1} other causes" if len(causes) > 1 else ""
        return f"every counting run failed ({causes[0]}{more})"
    return "the counting runs' counters hold no system calls"
