"""A run directory (records.run_dir.RunDir, data-formats section 4) -> tidy table,
and reading/writing tidy tables as CSV or parquet with their schema version."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from testbed.records import counted, run_dir, schema
from testbed.records import speed_reference as speedref
from testbed.records.run_dir import RunDir

CELL_SCHEMA = run_dir.CELL_SCHEMA
HOST_DRIFT = speedref.HOST_DRIFT  # tidy status of a pair the host's speed moved under

# bench JSON field -> tidy metric (data-formats section 3 -> section 5)
THROUGHPUT_FIELDS = {"msgs_per_sec": "throughput_msgs", "mb_per_sec": "throughput_mbps",
                     "sender_msgs_per_sec": "sender_msgs"}
LATENCY_FIELDS = {"p50": "lat_p50_us", "p90": "lat_p90_us", "p99": "lat_p99_us",
                  "p999": "lat_p999_us", "max": "lat_max_us", "mean": "lat_mean_us"}


RunDirError = run_dir.RunDirError   # not a run directory, or an unreadable one


def _metrics(cell: dict) -> list[tuple[str, float, str]]:
    result = cell.get("result") or {}
    out = []
    if result.get("schema") == "testbed.hyperfine/1":  # kind "startup": whole-process time
        if result.get("median") is not None:
            out.append(("startup_s", float(result["median"]), "s"))
        return out
    thr = result.get("throughput") or {}
    for field, name in THROUGHPUT_FIELDS.items():
        if thr.get(field) is not None:
            out.append((name, float(thr[field]), schema.METRICS[name].unit))
    lat = result.get("latency") or {}
    for field, name in LATENCY_FIELDS.items():
        if lat.get(field) is not None:
            out.append((name, float(lat[field]), "us"))
    out += [(name, value, schema.METRICS[name].unit) for name, value in counted.values(result).items()]
    counters = _perf_counters(cell)
    return out + [
        ("perf_" + event.replace("-", "_"), value, unit) for event, (value, unit) in sorted(counters.items())
    ]


def _perf_counters(cell: dict) -> dict[str, tuple[float, str]]:
    perf = cell.get("perf") or {}
    if not perf.get("available"):
        return {}
    return {event: (float(rec["value"]), rec.get("unit", ""))
            for event, rec in (perf.get("events") or {}).items()
            if isinstance(rec, dict) and isinstance(rec.get("value"), (int, float))}


def _work(cell: dict, work: dict[str, dict], config_of: dict[str, str]) -> list[tuple[str, float, str]]:
    """Work per message of a cell: its work.jsonl record, else a `work` object on the
    line. Never derived from the timed runs' counters: those include start-up,
    connection and teardown, which the sweep's N/2N pair cancels. Never another
    configuration's (config_of: cell id -> configuration): see _copied_across_configs."""
    given = work.get(cell["cell_id"]) or cell.get("work") or {}
    if given.get("cell_id", cell["cell_id"]) != cell["cell_id"] \
            or _copied_across_configs(given, work, config_of):
        return []
    out = []
    for event in ("instructions", "cycles"):
        value = given.get(f"{event}_per_msg")
        if isinstance(value, (int, float)) and value > 0:
            name = f"work_{event}_per_msg"
            out.append((name, float(value), schema.METRICS[name].unit))
    return out


def _copied_across_configs(given: dict, work: dict[str, dict], config_of: dict[str, str]) -> bool:
    """Is this work record (`same_build_as`: written by the runner until 2026-12-02, which
    measured once per library build and copied) another configuration's measurement?
    A copy onto an A/A alias of the same build in the same configuration is the same
    measurement; a copy onto another configuration is not (security-cost 57a5's CURVE
    figures were NULL's), so it gives nothing."""
    source = given.get("same_build_as")
    if not source:
        return False
    measured = [r for r in work.values() if r.get("library") == source
                and r.get("group") == given.get("group") and not r.get("same_build_as")]
    mine = config_of.get(given.get("cell_id"))
    return not measured or any(config_of.get(r.get("cell_id")) != mine for r in measured)


def _label(value) -> str:
    """A cell attribute as text: a string as it is, a dict as sorted key=value pairs."""
    if isinstance(value, dict):
        return " ".join(f"{k}={value[k]}" for k in sorted(value))
    return "" if value is None else str(value)


def _process_model(cell: dict, result: dict) -> str:
    declared = cell.get("process_model") or (result.get("settings") or {}).get("process_model") or ""
    # Bench JSON before the two-process work described its one model in prose.
    return "one-process" if str(declared).startswith("one process") else _label(declared)


def _cell_attributes(cell: dict) -> dict:
    """Where and how the cell ran (the declared placement, else the bench's record of it)."""
    result = cell.get("result") or {}
    return {"placement": _label(cell.get("placement") or result.get("placement")),
            "process_model": _process_model(cell, result), "link": _label(cell.get("link"))}


def load_run(run: Path | RunDir) -> pd.DataFrame:
    """One row per repetition x metric. A failed or timed-out attempt keeps one row with
    an empty metric and no value, so reports can list it. A counting run's records
    (RunDir.counting_cells) give rows of table `counting` with the metrics only they
    count (counted.TRACEPOINT), never a time: their times are perturbed by the counting."""
    run = RunDir.open(run)
    manifest = run.manifest
    counting = run.counting_cells()
    metrics = counted.from_counting_runs((manifest.design or {}).get("layout"))
    rows = _timed_rows(run, manifest, skip=metrics if counting else ())
    rows += _counting_rows(counting, manifest, metrics)
    if not rows:
        raise RunDirError(f"{run.records_file()}: holds no cells")
    return schema.conform(pd.DataFrame(rows))


def _ident(cell: dict, run_id: str, experiment: str) -> dict:
    return {
        "run_id": run_id, "experiment": experiment, "cell_id": cell["cell_id"],
        "repetition": cell["repetition"], "library": cell["library"], "pattern": cell["pattern"],
        "transport": cell["transport"], "msg_size": cell["msg_size"],
        "io_threads": cell.get("io_threads", 1), "config": cell.get("config") or "",
        **_cell_attributes(cell), "status": cell.get("status", "ok"),
        **{schema.PARAM_PREFIX + k: str(v) for k, v in (cell.get("params") or {}).items()},
    }


def _counting_rows(cells: list[dict], manifest, metrics: tuple[str, ...]) -> list[dict]:
    """Rows of the counting runs, `metrics` only (counted.from_counting_runs): judged per
    counting run (its index is the repetition that pairs the arms of one run, or the
    one-arm runs of a blocks run), once, without the timed loop's looks."""
    run_id, experiment = manifest.run_id, manifest.experiment_name
    common = {"source": "run", "provenance": f"{experiment}/{run_id}", "table": counted.COUNTING_TABLE,
              "spread": np.nan, "n_summarized": 1, "value_precise": np.nan, "stop_reason": ""}
    rows = []
    for cell in cells:
        ident = _ident(cell, run_id, experiment)
        ok = ident["status"] == "ok"
        values = counted.values(cell.get("result"), only=metrics) if ok else {}
        if not values:
            rows.append({**ident, "metric": "", "value": np.nan, "unit": "", **common})
        for name, value in sorted(values.items()):
            unit = schema.METRICS[name].unit
            rows.append({**ident, "metric": name, "value": value, "unit": unit, **common})
    return rows


def _timed_rows(run: RunDir, manifest, skip: tuple[str, ...]) -> list[dict]:
    run_id, experiment = manifest.run_id, manifest.experiment_name
    stops, work = manifest.stop_reasons(), run.work()
    drifted = run.drifted_pairs()
    rows = []
    cells = run.cells()
    config_of = {c["cell_id"]: c.get("config") or "" for c in cells}
    for cell in cells:
        ident = _ident(cell, run_id, experiment)
        # A pair is a repetition of a block (older runs: of a configuration group)
        block = cell.get("block") or cell.get("group")
        if ident["status"] == "ok" and (block, cell["repetition"]) in drifted:
            ident["status"] = HOST_DRIFT  # measured, kept, and left out of every verdict
        common = {"source": "run", "provenance": f"{experiment}/{run_id}", "table": "",
                  "spread": np.nan, "n_summarized": 1, "value_precise": np.nan,
                  "stop_reason": stops.get(str(block), "") or stops.get(str(cell.get("group")), "")
                  or str(cell.get("stop_reason") or "")}
        metrics = _metrics(cell) + _work(cell, work, config_of) if ident["status"] in ("ok", HOST_DRIFT) \
            else []
        metrics = [m for m in metrics if m[0] not in skip]
        if not metrics:
            rows.append({**ident, "metric": "", "value": np.nan, "unit": "", **common})
        for name, value, unit in metrics:
            rows.append({**ident, "metric": name, "value": value, "unit": unit, **common})
    return rows


def failed_attempts(df: pd.DataFrame) -> pd.DataFrame:
    """Failed attempts; `table` tells a counting run's (counted.COUNTING_TABLE) from a timed one's."""
    cols = ["pattern", "transport", "msg_size", "config", "library", "repetition", "status", "table"]
    return df[~df["status"].isin(["ok", HOST_DRIFT])][cols].drop_duplicates().reset_index(drop=True)


def ok_metrics(df: pd.DataFrame) -> pd.DataFrame:
    return df[(df["status"] == "ok") & (df["metric"] != "")]


# --- tidy tables on disk -------------------------------------------------------------

def write_csv(df: pd.DataFrame, path: Path) -> None:
    """First line names the schema; floats in shortest round-trip form, so rewriting
    the same table gives the same bytes."""
    df = schema.conform(df)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = df.to_csv(index=False, lineterminator="\n")
    path.write_text(f"# {schema.TAG}\n{body}")


def read_csv(path: Path) -> pd.DataFrame:
    path = Path(path)
    with path.open() as fh:
        first = fh.readline().strip()
    version = 1
    if first.startswith("# testbed.tidy/"):
        version = int(first.rsplit("/", 1)[1])
    df = pd.read_csv(path, skiprows=1 if first.startswith("#") else 0, dtype=str,
                     keep_default_na=False)
    for col in schema.NUMERIC:
        if col in df.columns:
            df[col] = pd.to_numeric(df[col].replace("", np.nan))
    return schema.conform(schema.migrate(df, version))


def write_parquet(df: pd.DataFrame, path: Path) -> None:
    table = pa.Table.from_pandas(schema.conform(df), preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[b"testbed.schema"] = schema.TAG.encode()
    pq.write_table(table.replace_schema_metadata(meta), Path(path))


def read_parquet(path: Path) -> pd.DataFrame:
    table = pq.read_table(Path(path))
    tag = (table.schema.metadata or {}).get(b"testbed.schema", b"testbed.tidy/1").decode()
    return schema.conform(schema.migrate(table.to_pandas(), int(tag.rsplit("/", 1)[1])))


def read_tidy(path: Path | RunDir) -> pd.DataFrame:
    if isinstance(path, RunDir):
        return load_run(path)
    path = Path(path)
    if path.is_dir():
        return load_run(path)
    if path.suffix == ".parquet":
        return read_parquet(path)
    if path.suffix == ".csv":
        return read_csv(path)
    raise ValueError(f"{path}: expected a run directory, a .csv or a .parquet tidy table")
