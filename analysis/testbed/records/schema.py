"""The tidy table's columns, metrics and version, and the migrations between versions.

One row per repetition x metric (docs/data-formats.md section 5). Stored tables carry
their version so an old CSV or parquet file is migrated on read instead of being
misread. Add a column: bump VERSION, add a migration that fills it for old tables.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from testbed.records import counted

VERSION = 3
TAG = f"testbed.tidy/{VERSION}"

# Version 3 added placement, process_model and link (where and how the two sides ran:
# they tell cells apart, so they are identity) and stop_reason (why an adaptive cell
# stopped repeating).
IDENTITY = [
    "run_id", "experiment", "cell_id", "repetition", "library", "pattern",
    "transport", "msg_size", "io_threads", "config", "placement", "process_model", "link", "status",
]
# After the param_* columns. Version 2 added everything after "source": published
# reports carry provenance and summaries (mean +/- std of n runs) instead of raw runs.
TAIL = ["metric", "value", "unit", "source", "provenance", "table", "spread", "n_summarized", "value_precise",
        "stop_reason"]

PARAM_PREFIX = "param_"
INTEGER = ["repetition", "msg_size", "io_threads", "n_summarized"]
FLOAT = ["value", "spread", "value_precise"]
NUMERIC = INTEGER + FLOAT


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    higher_is_better: bool
    label: str


METRICS: dict[str, Metric] = {m.name: m for m in [
    Metric("throughput_msgs", "msg/s", True, "Throughput"),
    Metric("throughput_mbps", "MB/s", True, "Bandwidth"),
    Metric("sender_msgs", "msg/s", True, "Sender rate"),
    Metric("lat_p50_us", "us", False, "Latency p50"),
    Metric("lat_p90_us", "us", False, "Latency p90"),
    Metric("lat_p99_us", "us", False, "Latency p99"),
    Metric("lat_p999_us", "us", False, "Latency p99.9"),
    Metric("lat_max_us", "us", False, "Latency max"),
    # Published reports state one latency figure per cell without naming the
    # statistic; the old harnesses used libzmq's perf tools, which print an average.
    Metric("lat_mean_us", "us", False, "Latency"),
    Metric("startup_s", "s", False, "Startup"),
    Metric("cv_throughput_pct", "%", False, "Throughput CV"),
    Metric("cv_latency_pct", "%", False, "Latency CV"),
    # Work, not speed: what one message costs the whole process (data-formats §5).
    Metric("work_instructions_per_msg", "instr/msg", False, "Instructions per message"),
    Metric("work_cycles_per_msg", "cycles/msg", False, "Cycles per message"),
    # Counted work of arms runs, per run and cell (records/counted.py): judged like the timings.
    *(Metric(m.name, m.unit, m.higher_is_better, m.label) for m in counted.METRICS + counted.SHOWN),
]}
WORK_METRICS = ["work_instructions_per_msg", "work_cycles_per_msg"]

# What the reports compare, in this order: the timings, then counted work (a second judge).
COMPARED_METRICS = ["throughput_msgs", "lat_p50_us", "lat_p99_us", "lat_mean_us", "startup_s",
                    *counted.JUDGED]


def metric(name: str) -> Metric:
    """Known metrics, plus perf_<event> counters (lower is better: less work)."""
    if name in METRICS:
        return METRICS[name]
    if name.startswith("perf_"):
        return Metric(name, "", False, name)
    raise KeyError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))} and perf_<event>")


def columns(df: pd.DataFrame) -> list[str]:
    params = sorted(c for c in df.columns if c.startswith(PARAM_PREFIX))
    return IDENTITY + params + TAIL


def _v1_to_v2(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["provenance"] = ""
    df["table"] = ""
    df["spread"] = np.nan
    df["n_summarized"] = 1
    df["value_precise"] = np.nan
    return df


def _v2_to_v3(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for col in ("placement", "process_model", "link", "stop_reason"):
        df[col] = ""
    return df


# from-version -> function producing the next version.
MIGRATIONS = {1: _v1_to_v2, 2: _v2_to_v3}


def migrate(df: pd.DataFrame, version: int) -> pd.DataFrame:
    if version > VERSION:
        raise ValueError(f"tidy table version {version} is newer than this code understands ({VERSION})")
    while version < VERSION:
        df = MIGRATIONS[version](df)
        version += 1
    return df


def conform(df: pd.DataFrame) -> pd.DataFrame:
    """Fixed column order and dtypes, rows sorted: equal data gives equal files."""
    missing = [c for c in IDENTITY + TAIL if c not in df.columns]
    if missing:
        raise ValueError(f"tidy table lacks columns: {', '.join(missing)}")
    df = df[columns(df)].copy()
    for col in INTEGER:
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    for col in FLOAT:
        df[col] = pd.to_numeric(df[col]).astype("float64")
    text = [c for c in df.columns if c not in NUMERIC]
    for col in text:
        df[col] = df[col].fillna("").astype(str)
    order = ["source", "provenance", "experiment", "run_id", "pattern", "transport", "config",
             "placement", "process_model", "link", "io_threads", "msg_size", "library", "metric", "table",
             "repetition"]
    return df.sort_values(order, kind="mergesort").reset_index(drop=True)


def kib(size: int | float) -> str:
    """64 -> '64 B', 1024 -> '1 KiB', 98304 -> '96 KiB'."""
    size = float(size)
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            v = size / scale
            return f"{v:.0f} {unit}" if v == round(v) else f"{v:.1f} {unit}"
    return f"{size:.0f} B"
