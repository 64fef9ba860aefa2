"""The counting runs' part of the report's "Counted work (a second judge)": system
calls per message and bytes per data call per arm, from the runs that counted the
syscall tracepoints ([run].counting_runs; records/counting_runs.py), or why they were
not counted. Never a zero for what was not counted. Markdown lines out; no I/O."""
from __future__ import annotations

import pandas as pd

from testbed.records import counted, schema
from testbed.records.counting_runs import not_counted

from . import compare, fmt
from .order import pattern_key, transport_key

SYSCALLS, BYTES = counted.TRACEPOINT
SWITCHES = "cw_context_switches_per_msg"  # in the counting table of blocks runs only (counted.py)


def context(design: dict, records: list[dict]) -> dict | None:
    """What the report needs to know of a run's counting runs (`design`: the manifest's):
    None for runs from before counting runs existed (their manifest does not say), else
    how many per block were declared and why no system call was counted ("" when some were)."""
    declared = design.get("counting_runs")
    if declared is None:
        return None
    blocks = design.get("layout") == "blocks"
    why = ""
    if declared and blocks and not records:  # runs from before blocks had counting runs
        why = "the run ran as blocks, and counting runs are arms runs"
    elif declared:
        why = not_counted(records)
    return {"declared": int(declared), "why_not": why, "blocks": blocks}


NOT_DECLARED = ("System calls per message and bytes per data call: not counted. This run declared no "
                "counting runs (`[run].counting_runs = 0`), and timed runs never count the syscall "
                "tracepoints (they slow every call).")
HEADER = ["Pattern", "Transport", "Size", "Library", "Config", "System calls/msg", "x reference",
          "Bytes/data call", "Runs"]


def lines(cells: pd.DataFrame | None, counting: dict | None) -> list[str]:
    if counting is None:
        return []
    if not counting["declared"]:
        return [NOT_DECLARED, ""]
    if counting["why_not"]:
        return [f"System calls per message and bytes per data call: NOT counted: {counting['why_not']}.", ""]
    rows = _rows(cells, counting.get("reference"))
    if not rows:
        return []
    switches = len(rows[0]) > len(HEADER)  # a blocks run's counting runs count them (counted.py)
    head = HEADER[:-1] + (["Context switches/msg"] if switches else []) + HEADER[-1:]
    if counting.get("blocks"):
        where = (f"Per cell, from its own counting runs ({counting['declared']} one-arm arms runs per cell: "
                 "the run ran as blocks, each cell in a process of its own; syscall tracepoints counted, "
                 "their times never judged; context switches counted in the same runs, under the "
                 "tracepoints)")
    else:
        where = (f"Per arm, from the counting runs ({counting['declared']} per block, syscall tracepoints "
                 "counted, their times never judged)")
    return [f"{where}: the median over the runs; x reference = this configuration's median over the "
            "no-override configuration's, same library and size.", "", fmt.md_table(head, rows), ""]


def _rows(cells: pd.DataFrame | None, reference: str | None) -> list[list[str]]:
    if cells is None or cells.empty:
        return []
    own = cells[(cells["table"] == counted.COUNTING_TABLE)
                & cells["metric"].isin(counted.TRACEPOINT + (SWITCHES,))]
    if own.empty:
        return []
    switches = (own["metric"] == SWITCHES).any()
    ref = compare.reference_config(own) or reference
    keys = ["pattern", "transport", "msg_size", "library", "config"]
    wide = own.pivot_table(index=keys, columns="metric", values="median", aggfunc="first")
    runs = own[own["metric"] == SYSCALLS].set_index(keys)["n"]
    out = []
    for key in sorted(wide.index, key=lambda k: (pattern_key(k[0]), transport_key(k[1]), *k[2:4],
                                                 k[4] != ref, k[4])):
        syscalls, per_byte = wide.loc[key].get(SYSCALLS), wide.loc[key].get(BYTES)
        base_key = key[:4] + (ref,)
        base = wide.loc[base_key].get(SYSCALLS) if ref is not None and base_key in wide.index else None
        ratio = f"{syscalls / base:.2f}x" if base and key[4] != ref and pd.notna(syscalls) else "-"
        row = [key[0], key[1], schema.kib(key[2]), key[3], key[4] or "-", _g(syscalls), ratio, _g(per_byte)]
        row += [_g(wide.loc[key].get(SWITCHES))] if switches else []
        out.append(row + [str(int(runs.get(key, 0)))])
    return out


def _g(v) -> str:
    return "-" if v is None or pd.isna(v) else f"{v:.3g}"
