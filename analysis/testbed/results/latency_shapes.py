"""The shape behind a latency call: for every latency comparison a run called SLOW, both
libraries' round trips of that cell pooled over its repetitions (the bench's histograms
merged, testbed.bench.latency_histogram), as quantiles and as distribution curves.

Why: a p50 or p99 call is one point of a distribution. Where the round trips fall in
two modes (on this guest: a wake-up from halt or none, profiling page
2026-12-04-ipc-split-modes), a library can lose at the median while most of its
distribution is ahead; a shift of the whole curve is a different finding. The report
shows which one it is instead of leaving it to a profiling page.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from testbed.bench import latency_histogram
from testbed.bench.latency_histogram import Histogram
from testbed.records import schema
from testbed.records.run_dir import RunDir

from . import fmt, report_summary

# What identifies one cell's round trips in the tidy table (io_threads included: a run
# that sweeps it has one cell per value).
POOL_KEYS = ["pattern", "transport", "msg_size", "io_threads", "config", "placement", "process_model", "link",
             "library"]
LATENCY_METRICS = ("lat_p50_us", "lat_p99_us")
QUANTILES = (0.10, 0.25, 0.50, 0.75, 0.90, 0.99)
MAX_PANELS = 12  # a figure of more panels is unreadable; the table keeps every cell
STEM = "latency-shapes"


def pooled(run: RunDir, tidy: pd.DataFrame, wanted: set[tuple] | None = None) -> dict[tuple, list]:
    """POOL_KEYS values -> [(histogram, the repetition's own p99)] over the usable
    repetitions (status ok) of that cell; only the keys in `wanted` when given. Empty
    for runs from before the histograms (2026-11-27)."""
    if tidy.empty or wanted == set():
        return {}
    usable = set(map(tuple, tidy.loc[tidy["status"] == "ok", ["cell_id", "repetition"]]
                     .drop_duplicates().itertuples(index=False)))
    keys = tidy.drop_duplicates(["cell_id", "repetition"]).set_index(["cell_id", "repetition"])
    pools: dict[tuple, list] = {}
    for cell in run.cells():
        key = (cell["cell_id"], cell["repetition"])
        if key not in usable:
            continue
        row = keys.loc[key]
        group = tuple(_plain(row[k]) for k in POOL_KEYS)
        if wanted is not None and group not in wanted:
            continue
        hist = latency_histogram.of_result(cell.get("result"))
        if hist is not None:
            pools.setdefault(group, []).append((hist, (cell["result"].get("latency") or {}).get("p99")))
    return pools


def slow_calls(cmp: pd.DataFrame) -> pd.DataFrame:
    """The library comparisons of a latency metric called SLOW, worst first."""
    if cmp.empty:
        return cmp
    sel = cmp[(cmp["kind"] == "library") & cmp["metric"].isin(LATENCY_METRICS) & (cmp["verdict"] == "SLOW")]
    return sel.sort_values(["diff_pct", "pattern", "transport", "msg_size"])


def _plain(v):
    """A key value as both tables hold it (a missing one, NaN, would never compare equal)."""
    return None if v is None or (isinstance(v, float) and v != v) else v


def _cell_key(r: dict, library: str) -> tuple:
    return tuple(library if k == "library" else _plain(r[k]) for k in POOL_KEYS)


def wanted_keys(cmp: pd.DataFrame) -> set[tuple]:
    """The pools the section needs: both sides of every SLOW latency call."""
    return {_cell_key(r, lib) for r in slow_calls(cmp).to_dict("records")
            for lib in (r["reference"], r["library"])}


def merged(pools: dict[tuple, list]) -> dict[tuple, Histogram]:
    return {k: latency_histogram.merge([h for h, _ in v]) for k, v in pools.items() if v}


def _label(r: dict, shown: list[str]) -> str:
    return f"{report_summary.where_text(r, shown)} io{r['io_threads']}"


def _cells(calls: pd.DataFrame) -> list[dict]:
    """One entry per cell and pair of libraries (a cell SLOW at p50 and p99 is shown
    once), the calls it carries."""
    cells: dict[tuple, dict] = {}
    for r in calls.to_dict("records"):
        key = (_cell_key(r, ""), r["reference"], r["library"])
        entry = cells.setdefault(key, {"row": r, "calls": []})
        entry["calls"].append(f"{schema.metric(r['metric']).label.lower()} {fmt.pct(r['diff_pct'], 1)} "
                              f"{fmt.interval(r['ci_lo_pct'], r['ci_hi_pct'])}")
    return list(cells.values())


def section(cmp: pd.DataFrame, hists: dict[tuple, Histogram], out_dir: Path, fig_rel: str,
            draw_figure: bool = True) -> list[str]:
    """The report's section; nothing when no latency comparison is SLOW, or when the run
    has no histogram for any of them (runs from before 2026-11-27). `hists`: merged() of
    pooled(..., wanted_keys(cmp)). draw_figure=False names the figure, draws nothing."""
    cells = _cells(slow_calls(cmp))
    if not cells or not any(h.total for h in hists.values()):
        return []
    shown = report_summary.varying(cmp)
    lines = ["## The latency calls against the candidate, shown whole", "",
             "For each cell with a latency comparison called SLOW: every round trip of the cell, both "
             "libraries, pooled over its usable repetitions (the bench's histograms merged; values are "
             "bucket midpoints, within 0.8%). A curve shifted as a whole is a slower path; curves that "
             "cross, or a step in one of them, are round trips falling into two modes in different "
             "proportions, and the call is about the proportions.", ""]
    header = ["Cell", "Called SLOW", "Library", "Round trips",
              *[f"p{100 * q:g} (us)" for q in QUANTILES]]
    rows, panels = [], []
    for entry in cells:
        r = entry["row"]
        sides = [(lib, hists.get(_cell_key(r, lib))) for lib in (r["reference"], r["library"])]
        for i, (lib, h) in enumerate(sides):
            first = [_label(r, shown), "; ".join(entry["calls"])] if i == 0 else ["", ""]
            if h is None or h.total == 0:
                rows.append([*first, lib, "no histogram", *["-"] * len(QUANTILES)])
                continue
            rows.append([*first, lib, f"{h.total:,}", *[f"{h.percentile(q) / 1000:,.1f}" for q in QUANTILES]])
        if all(h is not None and h.total for _, h in sides):
            panels.append((_label(r, shown), entry["calls"], sides))
    lines += [fmt.md_table(header, rows), ""]
    if panels:
        if draw_figure:
            from . import plots
            plots.save(draw(panels[:MAX_PANELS]), Path(out_dir) / fig_rel / STEM)
        more = f" (the first {MAX_PANELS} of {len(panels)} cells)" if len(panels) > MAX_PANELS else ""
        lines += [f"![Round-trip distributions of the cells with a SLOW latency call{more}]"
                  f"({fig_rel}/{STEM}.svg)", ""]
    return lines


def curve(h: Histogram) -> tuple[list[float], list[float]]:
    """(us, share of round trips at or below) at each non-empty bucket's midpoint."""
    xs, ys, seen = [], [], 0
    for i, n in enumerate(h.counts):
        if n:
            seen += n
            xs.append(h.representative(i) / 1000)
            ys.append(seen / h.total)
    return xs, ys


def draw(panels: list[tuple[str, list[str], list[tuple[str, Histogram]]]]):
    import matplotlib.pyplot as plt

    cols = min(3, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
    for ax, (label, calls, sides) in zip(axes.flat, panels, strict=False):
        for (lib, h), style in zip(sides, ("-", "--"), strict=True):
            xs, ys = curve(h)
            ax.step(xs, ys, where="post", linestyle=style, label=lib)
        ax.set_xscale("log")
        # Up to the slower side's p99.9: past it a few stray round trips would squeeze
        # the body of both curves into a corner (the table has the p99).
        ax.set_xlim(right=1.2 * max(h.percentile(0.999) for _, h in sides) / 1000)
        ax.set_ylim(0, 1)
        ax.axhline(0.5, color="grey", linewidth=0.6)
        ax.axhline(0.99, color="grey", linewidth=0.6, linestyle=":")
        ax.set_title(f"{label}\n{'; '.join(calls)}", fontsize=8)
        ax.set_xlabel("round trip / 2 (us, log)", fontsize=8)
        ax.set_ylabel("share at or below", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, loc="lower right")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig
