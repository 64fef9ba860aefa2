"""Figures. The *_data functions return tidy frames (what is drawn); the draw_*
functions turn one of those into a matplotlib Figure; save() writes SVG with
every source of nondeterminism (dates, ids, software tags) fixed, so the same data
always gives the same bytes."""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from testbed.records import schema  # noqa: E402
from testbed.records.manifest import is_reference_name  # noqa: E402
from testbed.stats import stats  # noqa: E402

from .order import sort_transports  # noqa: E402

matplotlib.rcParams.update({
    "svg.hashsalt": "testbed", "svg.fonttype": "none", "font.family": "DejaVu Sans",
    "font.size": 9, "axes.titlesize": 10, "figure.dpi": 100, "axes.grid": True, "grid.alpha": 0.3,
})
MARK = {"FAST": "▲", "SLOW": "▼", "SAME": "=", "AMBIGUOUS": "?", "NOT PLANNED": "-"}
LIB_COLORS = ["#1f4e79", "#c0504d", "#4f9d2d", "#7f5fa8", "#d08a00"]


# --- data ------------------------------------------------------------------------------

def by_placement(frame: pd.DataFrame) -> pd.DataFrame:
    """A run over several placements draws one line per placement: the placement joins
    the configuration label (e.g. "split", "16 KiB · split"). One placement: unchanged."""
    if "placement" not in frame.columns or frame["placement"].nunique() < 2:
        return frame
    return frame.assign(config=[p if c in ("", "default") else f"{c} · {p}"
                                for c, p in zip(frame["config"], frame["placement"])])


def size_series_data(cells: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Median per (pattern, transport, config, library, size) with a 95% bootstrap
    band of the median when the cell has repetitions (NaN band otherwise)."""
    sel = by_placement(cells[cells["metric"] == metric])
    rows = []
    for r in sel.to_dict("records"):
        lo = hi = math.nan
        if r["n"] >= 3:
            lo, hi = stats.bootstrap_median(
                r["values"],
                f"band|{r['pattern']}|{r['transport']}|{r['config']}|{r['library']}|{r['msg_size']}|{metric}",
            )
        rows.append({k: r[k] for k in ("pattern", "transport", "config", "library", "msg_size")}
                    | {"metric": metric, "median": r["median"], "lo": lo, "hi": hi})
    # numeric columns even when empty: concatenated with an empty frame, object columns
    # would reach matplotlib's isfinite (a run with only mean latencies did).
    return pd.DataFrame(
        rows,
        columns=["pattern", "transport", "config", "library", "msg_size", "metric", "median", "lo", "hi"],
    ).astype({"msg_size": "int64", "median": float, "lo": float, "hi": float})


def heatmap_data(comparisons: pd.DataFrame, inflections: pd.DataFrame, metric: str = "throughput_msgs"):
    """Cells (row label x size: diff, verdict) and crossover markers per row."""
    sel = comparisons[
        (comparisons["metric"] == metric)
        & comparisons["kind"].isin(["library", "config", "aa"])
        & ~((comparisons["kind"] == "config") & comparisons["library"].map(is_reference_name).astype(bool))
    ]
    sel = by_placement(sel)
    sel = sel.assign(row=[_row_label(r) for r in sel.to_dict("records")])
    cells = sel[["pattern", "transport", "row", "kind", "msg_size", "diff_pct", "verdict"]].reset_index(
        drop=True
    )
    marks = []
    if inflections is not None and not inflections.empty:
        for r in inflections[(inflections["metric"] == metric) & (inflections["status"] == "flip")].to_dict(
            "records"
        ):
            marks.append({"pattern": r["pattern"], "transport": r["transport"], "row": _row_label(r),
                          "crossover": r["crossover"]})
    return cells, pd.DataFrame(marks, columns=["pattern", "transport", "row", "crossover"])


def _row_label(r: dict) -> str:
    if r["kind"] == "config":
        return f"{r['library']}: {r['config']} vs {r['reference']}"
    cfg = "" if r["config"] in ("", "default") else f" [{r['config']}]"
    return f"{r['library']} vs {r['reference']}{cfg}"


# --- drawing ---------------------------------------------------------------------------

def _transports(df):
    return sort_transports(df["transport"].unique())


def _size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([schema.kib(s).replace(" ", "") for s in sizes], rotation=35 if len(sizes) > 4 else 0,
                       ha="right" if len(sizes) > 4 else "center")
    ax.minorticks_off()


def relative_data(comparisons: pd.DataFrame, metric: str = "throughput_msgs") -> pd.DataFrame:
    """Each candidate against the reference library, in %, with its 95% interval."""
    sel = by_placement(
        comparisons[(comparisons["metric"] == metric) & comparisons["kind"].isin(["library", "aa"])]
    )
    return pd.DataFrame({"pattern": sel["pattern"], "transport": sel["transport"], "config": sel["config"],
                         "library": sel["library"], "msg_size": sel["msg_size"], "median": sel["diff_pct"],
                         "lo": sel["ci_lo_pct"], "hi": sel["ci_hi_pct"]})


def draw_size_series(data: pd.DataFrame, pattern: str, ylabel: str, title: str, log_y: bool = False,
                     relative: pd.DataFrame | None = None):
    """Top row: the measure per library and configuration, log x. Optional bottom row:
    each candidate relative to the reference, where a 20% gap is visible at a glance."""
    d = data[data["pattern"] == pattern]
    transports = _transports(d)
    rel = relative[relative["pattern"] == pattern] if relative is not None else None
    nrows = 2 if rel is not None and not rel.empty else 1
    fig, axes = plt.subplots(nrows, len(transports), figsize=(max(7.0, 4.2 * len(transports) + 0.6),
                                                              3.0 * nrows + 1.0), squeeze=False, sharex="col")
    libs = sorted(d["library"].unique(), key=lambda s: (not is_reference_name(s), s))
    configs = sorted(d["config"].unique())
    styles = ["-", "--", ":", "-."]
    for ax, transport in zip(axes[0], transports):
        t = d[d["transport"] == transport]
        sizes = sorted(t["msg_size"].unique())
        for i, lib in enumerate(libs):
            for j, cfg in enumerate(configs):
                s = t[(t["library"] == lib) & (t["config"] == cfg)].sort_values("msg_size")
                if s.empty:
                    continue
                color = LIB_COLORS[i % len(LIB_COLORS)]
                label = lib if len(configs) == 1 else f"{lib} [{cfg}]"
                ax.plot(s["msg_size"], s["median"], styles[j % len(styles)], marker="o", ms=3, color=color,
                        label=label, lw=1.4)
                if s["lo"].notna().any():
                    ax.fill_between(s["msg_size"], s["lo"], s["hi"], color=color, alpha=0.15, lw=0)
        _size_axis(ax, sizes)
        ax.set_yscale("log" if log_y else "linear")
        ax.set_title(f"{pattern} · {transport}")
        ax.set_xlabel("message size" if nrows == 1 else "")
        ax.set_ylabel(ylabel)
    if nrows == 2:
        for k, transport in enumerate(transports):
            ax = axes[1][k]
            t = rel[rel["transport"] == transport]
            ax.axhline(0, color="black", lw=0.8)
            for i, lib in enumerate(libs):
                for j, cfg in enumerate(configs):
                    s = t[(t["library"] == lib) & (t["config"] == cfg)].sort_values("msg_size")
                    if s.empty:
                        continue
                    color = LIB_COLORS[i % len(LIB_COLORS)]
                    ax.plot(
                        s["msg_size"],
                        s["median"],
                        styles[j % len(styles)],
                        marker="o",
                        ms=3,
                        color=color,
                        lw=1.4,
                    )
                    if s["lo"].notna().any():
                        ax.fill_between(s["msg_size"], s["lo"], s["hi"], color=color, alpha=0.15, lw=0)
            _size_axis(ax, sorted(d[d["transport"] == transport]["msg_size"].unique()))
            ax.set_xlabel("message size")
            ax.set_ylabel("vs reference (%)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    ncol = min(len(labels), 3 if len(transports) == 1 else 4)
    nlines = (len(labels) + ncol - 1) // ncol
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.035 * nlines * 4 / (3.0 * nrows + 1.0) + 0.02, 1, 0.95))
    return fig


def draw_heatmap(cells: pd.DataFrame, marks: pd.DataFrame, pattern: str, clip: float = 40.0):
    d = cells[cells["pattern"] == pattern]
    transports = _transports(d)
    rows = sorted(d["row"].unique(), key=lambda r: (": " in r, r))
    sizes = sorted(d["msg_size"].unique())
    fig, axes = plt.subplots(1, len(transports), figsize=(1.0 * len(sizes) * len(transports) + 2.8,
                                                           0.45 * len(rows) + 1.6), squeeze=False)
    cmap = plt.get_cmap("RdBu")
    for k, (ax, transport) in enumerate(zip(axes[0], transports)):
        t = d[d["transport"] == transport]
        grid = np.full((len(rows), len(sizes)), np.nan)
        for r in t.to_dict("records"):
            i, j = rows.index(r["row"]), sizes.index(r["msg_size"])
            grid[i, j] = r["diff_pct"]
            txt = f"{r['diff_pct']:+.0f}%\n{MARK[r['verdict']]}"
            weak = r["verdict"] in ("SAME", "AMBIGUOUS", "NOT PLANNED")
            dark = abs(r["diff_pct"]) > 0.6 * clip  # white on the saturated cells
            ax.text(j, i, txt, ha="center", va="center", fontsize=7,
                    color="white" if dark else "#555555" if weak else "black",
                    fontweight="normal" if weak else "bold")
        ax.imshow(np.clip(grid, -clip, clip), cmap=cmap, vmin=-clip, vmax=clip, aspect="auto")
        for m in marks[(marks["pattern"] == pattern) & (marks["transport"] == transport)].to_dict("records"):
            if m["row"] in rows:
                x = np.interp(math.log2(m["crossover"]), [math.log2(s) for s in sizes], range(len(sizes)))
                i = rows.index(m["row"])
                # a marker on the row's lower edge: visible, and clear of the cell text
                ax.plot([x], [i + 0.38], marker="^", ms=7, color="black", mec="white", mew=0.8)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels([schema.kib(s).replace(" ", "") for s in sizes])
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows if k == 0 else [])
        ax.grid(False)
        ax.set_title(f"{pattern} · {transport}")
    fig.suptitle("Throughput diff % (blue: candidate faster). ▲ FAST ▼ SLOW = SAME ? AMBIGUOUS; "
                 "black triangle: estimated crossover", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return fig


def save(fig, base: Path) -> list[Path]:
    """base.svg, byte-stable. One format only: the reports link the SVG, and a PNG beside
    each doubled what a clone of reports/ carries (issue 43.6); the notebooks draw their
    own PNGs in memory (explore.png)."""
    base = Path(base)
    base.parent.mkdir(parents=True, exist_ok=True)
    svg = base.with_suffix(".svg")
    fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return [svg]


def figure_specs(cells: pd.DataFrame, comparisons: pd.DataFrame, inflections: pd.DataFrame):
    """Every figure of a report, in its order, not yet drawn: (pattern, caption, file stem,
    draw) where draw() makes the Figure. Drawing is most of a report's time; a report
    whose figures are not wanted (render_all(draw=False)) still names them all."""
    thr = size_series_data(cells, "throughput_msgs")
    lat_metric = "lat_p50_us" if (cells["metric"] == "lat_p50_us").any() else "lat_mean_us"
    lat = pd.concat([size_series_data(cells, m) for m in (lat_metric, "lat_p99_us")])
    hm_cells, hm_marks = heatmap_data(comparisons, inflections)
    for pattern in sorted(cells["pattern"].unique()):
        slug = pattern.lower()
        if not thr[thr["pattern"] == pattern].empty:
            yield pattern, "throughput vs size", f"{slug}-throughput", lambda p=pattern: draw_size_series(
                thr,
                p,
                "msg/s",
                f"{p}: throughput (median, 95% band)",
                log_y=True,
                relative=relative_data(comparisons),
            )
        if not hm_cells[hm_cells["pattern"] == pattern].empty:
            yield pattern, "diff % heatmap", f"{slug}-heatmap", \
                lambda p=pattern: draw_heatmap(hm_cells, hm_marks, p)
        lat_rows = lat[lat["pattern"] == pattern]
        if not lat_rows.empty:
            lat_rows = lat_rows.assign(library=[f"{lib} {schema.metric(m).label.replace('Latency ', '')}"
                                                for lib, m in zip(lat_rows["library"], lat_rows["metric"])])
            yield pattern, "latency", f"{slug}-latency", lambda p=pattern, rows=lat_rows: draw_size_series(
                rows,
                p,
                "us",
                f"{p}: latency "
                f"({'RTT/2 p50 and p99' if lat_metric == 'lat_p50_us' else 'as published'})",
                log_y=True,
            )


def figures(cells: pd.DataFrame, comparisons: pd.DataFrame, inflections: pd.DataFrame):
    """Every figure of a report, drawn, in its order: (pattern, caption, file stem, Figure)."""
    for pattern, caption, stem, draw in figure_specs(cells, comparisons, inflections):
        yield pattern, caption, stem, draw()


def render_all(cells: pd.DataFrame, comparisons: pd.DataFrame, inflections: pd.DataFrame, out_dir: Path,
               prefix: str = "", draw: bool = True) -> dict[str, list[tuple[str, Path]]]:
    """Every figure of a report, saved, by pattern: [(caption, svg path)]. draw=False
    names the same paths and writes nothing (a report checked for its text only)."""
    out: dict[str, list[tuple[str, Path]]] = {}
    for pattern in sorted(cells["pattern"].unique()):
        out.setdefault(pattern, [])
    for pattern, caption, stem, make in figure_specs(cells, comparisons, inflections):
        base = Path(out_dir) / f"{prefix}{stem}"
        out[pattern].append((caption, save(make(), base)[0] if draw else base.with_suffix(".svg")))
    return out
