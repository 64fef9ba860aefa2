"""The report's instructions per message per cell (work.jsonl: callgrind, or perf where the
host counts instructions): every library in every configuration, each cell's own
measurement (results/load.py gives a cell no figure copied from another), and each
configuration against the no-override one of the same library and size. Work, not
speed. Markdown lines out; no I/O."""
from __future__ import annotations

import pandas as pd

from testbed.records import schema

from . import compare, fmt
from .order import pattern_key, transport_key

METRIC = "work_instructions_per_msg"
HEADER = ["Pattern", "Transport", "Size", "Library", "Config", "Instructions/msg", "x reference config"]


def lines(cells: pd.DataFrame | None, reference: str | None = None) -> list[str]:
    """The table, or nothing when the run measured no instructions per message.
    reference: the configuration the others are divided by where no configuration is
    the no-override one (security-cost: BENCH_SECURITY=null, its [answer]'s reference)."""
    rows = _rows(cells, reference)
    if not rows:
        return []
    return ["Instructions per message, each cell measured on its own runs ([perf].work_per_message: "
            "callgrind, or perf where the host counts instructions; work, not speed); x reference config "
            "= this configuration's figure over the no-override configuration's, same library and size.",
            "", fmt.md_table(HEADER, rows), ""]


def _rows(cells: pd.DataFrame | None, reference: str | None) -> list[list[str]]:
    if cells is None or cells.empty:
        return []
    own = cells[cells["metric"] == METRIC]
    if own.empty:
        return []
    ref = compare.reference_config(own) or reference
    keys = ["pattern", "transport", "msg_size", "library", "config"]
    value = own.groupby(keys)["median"].first()
    out = []
    for key in sorted(value.index, key=lambda k: (pattern_key(k[0]), transport_key(k[1]), *k[2:4],
                                                  k[4] != ref, k[4])):
        base = value.get(key[:4] + (ref,)) if ref is not None and key[4] != ref else None
        ratio = f"{value[key] / base:.2f}x" if base else "-"
        out.append([key[0], key[1], schema.kib(key[2]), key[3], key[4] or "-", f"{value[key]:,.0f}", ratio])
    return out
