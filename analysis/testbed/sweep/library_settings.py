"""What each library ran with: the settings an experiment declared (HWM, IO threads,
socket buffers, with the reason for any deviation from the libraries' defaults) and
what every bench run read back from the library itself (`settings.library_reports`),
so the manifest and the report header state them instead of assuming them. PUB at a
finite HWM drops by design: its delivered share is summarised here too.
"""
from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from testbed.sweep.config import Experiment

# Keys of a bench result's settings.library_reports (bench/common/report.cpp).
REPORTED = ("sndhwm", "rcvhwm", "sndbuf", "rcvbuf", "io_threads")


def declared(exp: Experiment) -> dict:
    return {
        "hwm": "library default" if exp.hwm is None else exp.hwm,
        "hwm_reason": exp.hwm_reason,
        "io_threads": list(exp.io_threads),
        "io_threads_reason": exp.io_threads_reason,
        "sndbuf": "not set (OS default)", "rcvbuf": "not set (OS default)",
    }


def observed(records: list[dict]) -> dict:
    """Per library label: the distinct values each library reported for each setting,
    and for lossy cells (PUB at a finite HWM) the loss fraction over its runs."""
    out: dict[str, dict] = {}
    for r in records:
        result = r.get("result") or {}
        reports = (result.get("settings") or {}).get("library_reports")
        if r.get("status") != "ok" or not isinstance(reports, dict):
            continue
        entry = out.setdefault(str(r.get("library")), {k: [] for k in REPORTED} | {"loss": []})
        for key in REPORTED:
            value = reports.get(key)
            if value is not None and value not in entry[key]:
                entry[key].append(value)
        thr = result.get("throughput") or {}
        if thr.get("delivery") == "lossy" and isinstance(thr.get("loss"), (int, float)):
            entry["loss"].append(float(thr["loss"]))
    for entry in out.values():
        for key in REPORTED:
            entry[key].sort()
        losses = entry.pop("loss")
        entry["lossy_runs"] = len(losses)
        if losses:
            entry["loss_median"] = round(statistics.median(losses), 4)
            entry["loss_range"] = [round(min(losses), 4), round(max(losses), 4)]
    return out
