"""Flamegraphs for the cells selected by [[perf.record]]: one extra, unmeasured run per
library under `perf record`, rendered to SVG, and an index putting the libraries of
one configuration side by side."""
from __future__ import annotations

import html
from pathlib import Path

from testbed.records import run_writer
from testbed.sweep import execute, placement
from testbed.sweep import perf as perfmod
from testbed.sweep.config import Experiment
from testbed.sweep.plan import Cell


def record(cell: Cell, lib, exp: Experiment, run_dir: Path, counts: execute.Counts, cpus: list[int]) -> dict:
    """Profile one run of `cell` with its counts and placement, in one process (a
    two-process cell's roles are the same code, profiled together)."""
    stem = f"{cell.group}-{cell.library}".replace("/", "_")
    try:
        pins = placement.pins_for(cell.placement, cpus)
    except ValueError:
        pins = placement.Pins()
    extra = {"pin_sender": pins.sender, "pin_receiver": pins.receiver} if pins.sender else {}
    argv = execute.bench_argv(lib.bench_binary(cell.pattern), cell, exp, counts, **extra)
    info = perfmod.record_flamegraph(argv, execute.cell_env(cell.params), run_writer.flamegraphs_dir(run_dir),
                                     stem, exp.timeout_s)
    return {"group": cell.group, "cell_id": cell.cell_id, "library": cell.library,
            "pattern": cell.pattern, "transport": cell.transport, "msg_size": cell.msg_size,
            "config": cell.config, **info}


def write_index(run_dir: Path, entries: list[dict]) -> Path:
    """index.html: one row per configuration, one column per library."""
    libs = list(dict.fromkeys(e["library"] for e in entries))
    groups: dict[str, dict] = {}
    for e in entries:
        groups.setdefault(e["group"], {})[e["library"]] = e
    rows = []
    for by_lib in groups.values():
        first = next(iter(by_lib.values()))
        title = html.escape(f"{first['pattern']} {first['transport']} {first['msg_size']} B "
                            f"{first['config']}")
        cells = []
        for lib in libs:
            e = by_lib.get(lib)
            if e and e.get("svg"):
                svg = html.escape(e["svg"])
                cells.append(f'<td><object data="{svg}" type="image/svg+xml" width="100%"></object></td>')
            else:
                cells.append(f"<td>{html.escape((e or {}).get('error', 'not recorded'))}</td>")
        rows.append(f"<tr><th colspan={len(libs)}>{title}</th></tr><tr>{''.join(cells)}</tr>")
    head = "".join(f"<th>{html.escape(lib)}</th>" for lib in libs)
    page = ("<!doctype html><meta charset=utf-8><title>flamegraphs</title>"
            f"<table style='width:100%;table-layout:fixed'><tr>{head}</tr>{''.join(rows)}</table>\n")
    out = run_writer.flamegraphs_dir(run_dir) / "index.html"
    out.parent.mkdir(exist_ok=True)
    out.write_text(page)
    return out
