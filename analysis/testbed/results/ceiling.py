"""The host ceiling (ceiling.json, testbed.ceiling/1 or /2) as a share per cell, and the cells
where a library beat it. A ceiling is an upper bound: a library above 100% means the
probe did not bound that cell (another process model, placement, size or buffer
policy), so the report flags it instead of showing a share above one as if it meant
something."""
from __future__ import annotations

import math

from testbed.records import run_dir

SCHEMAS = run_dir.CEILING_SCHEMAS


def table(data: dict | None) -> dict | None:
    """(transport, msg_size) -> {bytes_per_sec, p50, process_model}, from ceiling.json's
    contents (RunDir.host_ceiling; None: the run has none, the file is optional).
    Version 2 states the process model the probe ran under (the same for every row);
    version 1 does not, so its rows bound every cell."""
    if data is None:
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


def where(r: dict) -> str:
    """Placement, process model and IO threads of a comparison row, as one label."""
    place = " ".join(str(r.get(k) or "") for k in ("placement", "process_model")).strip()
    return f"{place} io{r['io_threads']}"


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


# --- the ceiling measured inside the run (ceiling.jsonl, sweep/ceiling.py) -----------------

SHARED_METRICS = ("throughput_msgs", "lat_p50_us")
KEYS = ["pattern", "transport", "msg_size", "io_threads", "config", "placement", "process_model", "link",
        "library", "metric"]


def latest_probes(lines: list[dict]) -> list[dict]:
    """One line per (block, repetition) of ceiling.jsonl's lines (RunDir.ceiling_probes),
    the last written winning (a resumed batch may have probed again); torn or broken
    lines were skipped like the sweep skips them."""
    last = {}
    for ln in lines:
        if isinstance(ln, dict):
            last[(ln.get("block"), ln.get("repetition"))] = ln
    return list(last.values())


def probe_figures(line: dict) -> dict:
    """{bytes_per_sec, p50} of the probe row matching the line's transport and size."""
    for row in (line.get("result") or {}).get("rows", []):
        if row.get("transport") == line.get("transport") and row.get("msg_size") == line.get("msg_size"):
            thr, lat = row.get("throughput") or {}, row.get("latency") or {}
            return {"bytes_per_sec": thr.get("bytes_per_sec"), "p50": lat.get("p50")}
    return {}


def _pair_share(metric: str, value: float, size: int, probe: dict) -> float:
    if metric == "throughput_msgs" and probe.get("bytes_per_sec"):
        return value * size / probe["bytes_per_sec"]
    if metric == "lat_p50_us" and probe.get("p50") and value > 0:
        return probe["p50"] / value
    return math.nan


def shares(probe_lines: list[dict], df) -> dict | None:
    """Each library's share of the ceiling probed in the same batches, from ceiling.jsonl's
    lines (RunDir.ceiling_probes): per cell and metric, the share of every repetition
    whose batch has an ok probe (the cell's value over that probe's), summarised as
    median, min and max, with the probe's own median and range. None when the run
    probed nothing; {"cells": {}, ...} when every probe failed (the failures are still
    reported)."""
    lines = latest_probes(probe_lines)
    if not lines:
        return None
    probes = {}
    for ln in lines:
        if ln.get("status") == "ok":
            figures = probe_figures(ln)
            for cid in ln.get("cell_ids", []):
                probes[(cid, ln["repetition"])] = figures
    ok = df[(df["status"] == "ok") & df["metric"].isin(SHARED_METRICS)]
    found: dict[tuple, list[tuple[float, float]]] = {}
    for r in ok.to_dict("records"):
        probe = probes.get((r["cell_id"], int(r["repetition"])))
        if probe is None:
            continue
        s = _pair_share(r["metric"], r["value"], int(r["msg_size"]), probe)
        bound = probe.get("bytes_per_sec") if r["metric"] == "throughput_msgs" else probe.get("p50")
        if not math.isnan(s):
            found.setdefault(cell_key(r, r["library"]), []).append((s, bound))
    cells = {}
    for key, pairs in found.items():
        shares, bound = sorted(p[0] for p in pairs), sorted(p[1] for p in pairs)
        cells[key] = {"share": _median(shares), "lo": shares[0], "hi": shares[-1], "n": len(shares),
                      "ceiling": _median(bound), "ceiling_lo": bound[0], "ceiling_hi": bound[-1]}
    failed = [ln for ln in lines if ln.get("status") != "ok"]
    sources = sorted({source_messages(ln) for ln in lines if ln.get("status") == "ok"})
    return {"cells": cells, "probes": len(lines), "failed": failed, "source_messages": sources}


def source_messages(line: dict) -> int:
    """How many message-sized source buffers the probe's sender cycled through (1 when
    the probe predates the option: it always wrote from one buffer)."""
    settings = (line.get("result") or {}).get("settings") or {}
    return int(settings.get("source_messages", 1))


def _median(values: list[float]) -> float:
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def run_share(shares: dict | None, row: dict, library: str) -> dict | None:
    """The in-run share entry of a comparison row's cell for `library`, if any."""
    if not shares:
        return None
    return shares["cells"].get(cell_key(row, library))


def cell_key(row: dict, library: str) -> tuple:
    """KEYS of a tidy row or a comparison row, in one type each (ints stay ints)."""
    return tuple(int(row[k]) if k in ("msg_size", "io_threads")
                 else str(library if k == "library" else row[k]) for k in KEYS)
