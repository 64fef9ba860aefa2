"""The host ceiling (ceiling.json, testbed.ceiling/1 or /2) as a share per cell, and the cells
where a library beat it. A ceiling is an upper bound: a library above 100% means the
probe did not bound that cell (another process model, placement, size or buffer
policy), so the report flags it instead of showing a share above one as if it meant
something."""
from __future__ import annotations

import json
import math
from pathlib import Path

SCHEMAS = ("testbed.ceiling/1", "testbed.ceiling/2")


def read(run_dir: Path) -> dict | None:
    """(transport, msg_size) -> {bytes_per_sec, p50, process_model}; the file is optional.
    Version 2 states the process model the probe ran under (the same for every row);
    version 1 does not, so its rows bound every cell."""
    path = Path(run_dir) / "ceiling.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if data.get("schema") not in SCHEMAS:
        return None
    model = str(data.get("process_model") or "") if data["schema"] != SCHEMAS[0] else ""
    out = {}
    for r in data.get("rows", []):
        thr, lat = r.get("throughput") or {}, r.get("latency") or {}
        out[(r["transport"], int(r["msg_size"]))] = {"bytes_per_sec": thr.get("bytes_per_sec"),
                                                     "p50": lat.get("p50"), "process_model": model}
    return out


def _row(ceiling: dict, cell: dict) -> dict | None:
    """The probe row bounding this cell: same transport and size, and the same process
    model when both name one (a one-process probe does not bound two-process cells)."""
    row = ceiling.get((cell["transport"], int(cell["msg_size"])))
    model = cell.get("process_model")
    return None if row and row["process_model"] and model and row["process_model"] != model else row


def share(ceiling: dict | None, cell: dict, metric: str, value: float) -> float:
    """value as a fraction of the ceiling (throughput: bytes/s over the probe's; p50
    latency: the probe's over the value, so 1.0 is as fast as the raw path). NaN when
    there is no ceiling for this cell and metric."""
    row = _row(ceiling, cell) if ceiling else None
    if not row or value is None or math.isnan(value) or value <= 0:
        return math.nan
    if metric == "throughput_msgs" and row.get("bytes_per_sec"):
        return value * cell["msg_size"] / row["bytes_per_sec"]
    if metric == "lat_p50_us" and row.get("p50"):
        return row["p50"] / value
    return math.nan


def broken(ceiling: dict | None, comparisons) -> list[dict]:
    """Every (cell, library) whose median exceeds the ceiling: {where..., library, share}."""
    out, seen = [], set()
    if not ceiling:
        return out
    for r in comparisons.to_dict("records"):
        for lib, value in ((r["reference"], r["ref_median"]), (r["library"], r["cand_median"])):
            s = share(ceiling, r, r["metric"], value)
            key = tuple(r[c] for c in ("pattern", "transport", "msg_size", "config", "placement",
                                       "process_model", "link")) + (lib, r["metric"])
            if s > 1 and key not in seen:
                seen.add(key)
                out.append({"pattern": r["pattern"], "transport": r["transport"], "msg_size": r["msg_size"],
                            "config": r["config"], "library": lib, "metric": r["metric"], "share": s})
    return sorted(out, key=lambda x: (x["pattern"], x["transport"], x["msg_size"], x["config"], x["library"],
                                      x["metric"]))
