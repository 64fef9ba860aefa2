"""speed.jsonl, the host speed reference of a run (docs/data-formats.md §4), as its
writer (sweep/speedref.py, which times the workload) and its readers (the report, the
loop's resume) both see it: the file's name, the exclusion it marks, and what a run's
lines add up to. Kept apart from the measurement so the analysis reads it without
importing the sweep."""
from __future__ import annotations

import statistics

from testbed.records import store

WORKLOAD = "blake2b-64KiB"
FILE_NAME = store.SPEED_NAME  # one line per pair in the run directory (docs/data-formats.md §4)
HOST_DRIFT = "host-drift"   # the exclusion a drifted pair is marked with


def seconds_of(line: dict) -> float:
    """Wall time the pair's two reference measurements took (it counts toward the budget)."""
    return sum(p.get("total_ms", 0.0) for side in ("before", "after")
               for p in (line.get(side) or {}).get("per_cpu", [])) / 1000


def excluded_pairs(lines: list[dict]) -> set[tuple[str, int]]:
    """(group, repetition) of every pair marked host-drift; the last line of a pair wins
    (a resumed pair is measured again)."""
    last = {(ln.get("group"), ln.get("repetition")): ln for ln in lines}
    return {k for k, ln in last.items() if ln.get("exclusion") == HOST_DRIFT}


def latest_pairs(lines: list[dict]) -> list[dict]:
    """One line per pair (the last written wins), in the order the pairs were run."""
    last = {(ln.get("group"), ln.get("repetition")): ln for ln in lines}
    return sorted(last.values(), key=lambda ln: str(ln.get("started_at", "")))


def summarize(lines: list[dict]) -> dict:
    """The host's speed across the run: the reference's median, min, max and CV over
    every measurement (before and after each pair), and how many pairs were excluded."""
    pairs = latest_pairs(lines)
    values = [ln[side]["ms"] for ln in pairs for side in ("before", "after") if ln.get(side)]
    if not values:
        return {"pairs": 0, "measurements": 0, "excluded": 0}
    mean = statistics.fmean(values)
    cv = statistics.pstdev(values) / mean if len(values) > 1 and mean > 0 else 0.0
    drifts = [ln.get("drift", 0.0) for ln in pairs]
    return {"pairs": len(pairs), "measurements": len(values),
            "median_ms": round(statistics.median(values), 4),
            "min_ms": round(min(values), 4), "max_ms": round(max(values), 4), "cv": round(cv, 6),
            "max_drift": round(max(drifts), 6), "median_cpu_ms": _median_cpu_ms(pairs),
            "excluded": sum(ln.get("exclusion") == HOST_DRIFT for ln in pairs)}


def _median_cpu_ms(pairs: list[dict]) -> float | None:
    """Median thread CPU time of the measurements: near the wall figure when the CPU
    itself is slow, far below it when other work shared the CPU."""
    cpu = [p["cpu_ms"] for ln in pairs for side in ("before", "after")
           for p in (ln.get(side) or {}).get("per_cpu", []) if isinstance(p.get("cpu_ms"), (int, float))]
    return round(statistics.median(cpu), 4) if cpu else None
