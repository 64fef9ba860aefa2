"""Raw run directory (manifest.json + results.jsonl or results.parquet, data-formats
section 4) -> tidy table,
and reading/writing tidy tables as CSV or parquet with their schema version."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from testbed.records import counted, schema, store
from testbed.records.manifest import RunManifest

from . import host_speed

CELL_SCHEMA = "testbed.cell/1"
HOST_DRIFT = host_speed.speedref.HOST_DRIFT  # tidy status of a pair the host's speed moved under
WORK_FILE = store.WORK_NAME  # the sweep's work-per-message records, one per cell

# bench JSON field -> tidy metric (data-formats section 3 -> section 5)
THROUGHPUT_FIELDS = {"msgs_per_sec": "throughput_msgs", "mb_per_sec": "throughput_mbps",
                     "sender_msgs_per_sec": "sender_msgs"}
LATENCY_FIELDS = {"p50": "lat_p50_us", "p90": "lat_p90_us", "p99": "lat_p99_us",
                  "p999": "lat_p999_us", "max": "lat_max_us", "mean": "lat_mean_us"}


class RunDirError(ValueError):
    pass


def read_manifest(run_dir: Path) -> dict:
    path = Path(run_dir) / store.MANIFEST_NAME
    if not path.is_file():
        raise RunDirError(
            f"{run_dir}: no manifest.json (a run directory holds manifest.json and results.jsonl "
            "or results.parquet)"
        )
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def read_cells(run_dir: Path) -> list[dict]:
    """Every cell attempt: results.parquet when the run was compacted, else each line of
    results.jsonl. A torn last line (run interrupted mid-write) is skipped with a
    warning; a bad line anywhere else is an error, since it means corruption."""
    path = store.results_file(run_dir)
    if not path.is_file():
        raise RunDirError(f"{run_dir}: no {store.RESULTS_NAME} or {store.PARQUET_NAME}")
    if path.name == store.PARQUET_NAME:
        return _unique(_checked(path, store.read_run(run_dir)[0]))
    lines = path.read_text().splitlines()
    cells = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            cell = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                print(f"warning: {path}:{number}: torn last line skipped (interrupted run?)", file=sys.stderr)
                continue
            raise RunDirError(f"{path}:{number}: not valid JSON") from None
        if cell.get("schema") != CELL_SCHEMA:
            raise RunDirError(f"{path}:{number}: schema {cell.get('schema')!r}, expected {CELL_SCHEMA!r}")
        cells.append(cell)
    return _unique(cells)


def _checked(path: Path, cells: list[dict]) -> list[dict]:
    for number, cell in enumerate(cells, 1):
        if cell.get("schema") != CELL_SCHEMA:
            raise RunDirError(f"{path}: record {number}: schema {cell.get('schema')!r}, "
                              f"expected {CELL_SCHEMA!r}")
    return cells


def _unique(cells: list[dict]) -> list[dict]:
    # A merged or resumed run may repeat an attempt: the last line wins.
    unique = {(c["cell_id"], c["repetition"]): c for c in cells}
    return list(unique.values())


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


def read_work(run_dir: Path) -> dict[str, dict]:
    """cell_id -> work per message as the sweep measured it (work.jsonl: a pair of extra
    throughput-only runs per cell, N and 2N messages). Absent file: no work figures; a
    torn line (interrupted run) is skipped like a torn result line."""
    path = Path(run_dir) / WORK_FILE
    if not path.is_file():
        return {}
    out = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rec = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            print(f"warning: {path}:{number}: not valid JSON, skipped", file=sys.stderr)
            continue
        if isinstance(rec, dict) and rec.get("status") == "ok" and rec.get("cell_id"):
            out[rec["cell_id"]] = rec
    return out


def _work(cell: dict, work: dict[str, dict]) -> list[tuple[str, float, str]]:
    """Work per message of a cell: its work.jsonl record, else a `work` object on the
    line. Never derived from the timed runs' counters: those include start-up,
    connection and teardown, which the sweep's N/2N pair cancels."""
    given = work.get(cell["cell_id"]) or cell.get("work") or {}
    out = []
    for event in ("instructions", "cycles"):
        value = given.get(f"{event}_per_msg")
        if isinstance(value, (int, float)) and value > 0:
            name = f"work_{event}_per_msg"
            out.append((name, float(value), schema.METRICS[name].unit))
    return out


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


def load_run(run_dir: Path) -> pd.DataFrame:
    """One row per repetition x metric. A failed or timed-out attempt keeps one row with
    an empty metric and no value, so reports can list it."""
    run_dir = Path(run_dir)
    manifest = RunManifest.read(read_manifest(run_dir), run_dir)
    run_id, experiment = manifest.run_id, manifest.experiment_name
    stops, work = manifest.stop_reasons(), read_work(run_dir)
    drifted = host_speed.excluded(run_dir)
    rows = []
    for cell in read_cells(run_dir):
        ident = {
            "run_id": run_id, "experiment": experiment, "cell_id": cell["cell_id"],
            "repetition": cell["repetition"], "library": cell["library"], "pattern": cell["pattern"],
            "transport": cell["transport"], "msg_size": cell["msg_size"],
            "io_threads": cell.get("io_threads", 1), "config": cell.get("config") or "",
            **_cell_attributes(cell), "status": cell.get("status", "ok"),
        }
        # A pair is a repetition of a block (older runs: of a configuration group)
        block = cell.get("block") or cell.get("group")
        if ident["status"] == "ok" and (block, cell["repetition"]) in drifted:
            ident["status"] = HOST_DRIFT  # measured, kept, and left out of every verdict
        ident.update({schema.PARAM_PREFIX + k: str(v) for k, v in (cell.get("params") or {}).items()})
        common = {"source": "run", "provenance": f"{experiment}/{run_id}", "table": "",
                  "spread": np.nan, "n_summarized": 1, "value_precise": np.nan,
                  "stop_reason": stops.get(str(block), "") or stops.get(str(cell.get("group")), "")
                  or str(cell.get("stop_reason") or "")}
        metrics = _metrics(cell) + _work(cell, work) if ident["status"] in ("ok", HOST_DRIFT) else []
        if not metrics:
            rows.append({**ident, "metric": "", "value": np.nan, "unit": "", **common})
        for name, value, unit in metrics:
            rows.append({**ident, "metric": name, "value": value, "unit": unit, **common})
    if not rows:
        raise RunDirError(f"{store.results_file(run_dir)}: holds no cells")
    return schema.conform(pd.DataFrame(rows))


def failed_attempts(df: pd.DataFrame) -> pd.DataFrame:
    cols = ["pattern", "transport", "msg_size", "config", "library", "repetition", "status"]
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


def read_tidy(path: Path) -> pd.DataFrame:
    path = Path(path)
    if path.is_dir():
        return load_run(path)
    if path.suffix == ".parquet":
        return read_parquet(path)
    if path.suffix == ".csv":
        return read_csv(path)
    raise ValueError(f"{path}: expected a run directory, a .csv or a .parquet tidy table")
