"""What the notebooks show, as functions: a run opened the way its report reads it, the
report's own sections (summary, verdict tables), its figures, one cell's repetitions
and pairs, the views behind a verdict (spread by placement, counters, host speed) and
two runs side by side. The notebooks only call these, so a notebook and the report of
the same run cannot disagree (tests/test_results_explore.py, test_results_notebooks.py).
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from testbed.bench import latency_histogram
from testbed.records import schema, speed_reference
from testbed.records.manifest import RunManifest
from testbed.records.run_dir import RunDir
from testbed.stats import decide

from . import (
    answer,
    compare,
    inflection,
    latency_shapes,
    load,
    plots,
    report,
    report_detail,
    report_summary,
    run_settings,
)

DECIDED = ("FAST", "SLOW")


@dataclass
class RunView:
    run_dir: Path
    manifest: RunManifest
    tidy: pd.DataFrame          # load.load_run
    comparisons: pd.DataFrame   # compare.compare_run, as the report
    context: dict               # report.run_inputs' context
    cells: pd.DataFrame = field(repr=False)   # compare.cell_table of every metric


def open_run(run_dir: Path) -> RunView:
    run = RunDir.open(run_dir)
    df, cmp, ctx = report.run_inputs(run)
    return RunView(run.path, run.manifest, df, cmp, ctx, compare.cell_table(df))


def open_any(path: Path) -> RunView:
    """A run directory, or a published seed's tidy CSV (comparisons and cells only: no
    manifest, no host speed)."""
    path = Path(path)
    if path.is_dir():
        return open_run(path)
    from . import runs
    cmp = runs.compare_any(path)
    df = load.read_csv(path)
    ctx = {"brief": [("source", f"published seed `{path.name}`")], "host_speed": [], "confidence": math.nan,
           "margin": math.nan, "published": True}
    return RunView(path, None, df, cmp, ctx, compare.cell_table(df))


def _compared_cells(view: RunView) -> pd.DataFrame:
    return view.cells[view.cells["metric"].isin(schema.COMPARED_METRICS)]


# --- the declared answer and what is behind it ---------------------------------------------

def answer_of(view: RunView) -> answer.Answer:
    """The run's answer as its report states it (answer.py over the experiment's [answer])."""
    return answer.compute(view.context["answer_spec"], view.comparisons, _compared_cells(view), view.manifest)


def answer_markdown(view: RunView) -> str:
    """The report's Answer section, verbatim."""
    settings = run_settings.line(view.context["settings"])
    return "\n".join(answer_of(view).markdown(settings=settings))


ROW_COLUMNS = ["pattern", "transport", "msg_size", "io_threads", "config", "placement", "process_model",
               "link", "library", "reference", "metric", "diff_pct", "ci_lo_pct", "ci_hi_pct", "verdict",
               "test"]


def answer_rows(view: RunView) -> dict[str, pd.DataFrame]:
    """Each declared comparison's individual comparisons: the rows its counts add up."""
    out = {}
    for c in view.context["answer_spec"].comparisons:
        if c.kind == "spread":
            out[c.name] = spread(view)
            continue
        cmp = view.comparisons
        if c.kind == "configurations" and c.reference is not None:
            cmp = answer.declared_config_pairs(_compared_cells(view), c.reference, view.manifest)
        sel = answer.select(cmp[(cmp["kind"] == answer.KIND_OF[c.kind]) & cmp["metric"].isin(c.metrics)],
                            c.where, c.library)
        out[c.name] = sel[ROW_COLUMNS].reset_index(drop=True)
    return out


def calibration(view: RunView) -> pd.DataFrame:
    """Per metric: A/A comparisons, judged, false calls, rate (the report's calibration block)."""
    return compare.calibration(view.comparisons)


def inflection_by_config(view: RunView) -> pd.DataFrame:
    """Where each configuration's gain over the reference configuration changes sign
    along message size, per pattern, transport and library (inflection.py): the
    analysis behind a "which static size" answer."""
    infl = inflection.inflections(view.comparisons)
    infl = infl[infl["kind"] == "config"]
    cols = ["pattern", "transport", "config", "reference", "library", "metric", "status", "n_decisive",
            "n_sizes", "sentence"]
    return infl[cols].reset_index(drop=True)


def config_by_size(view: RunView, metric: str = "throughput_msgs",
                   library: str | None = None) -> pd.DataFrame:
    """Each configuration's diff against the reference configuration, size by size
    (rows: pattern, transport, configuration; columns: sizes): the curve the inflection
    analysis reads, with each cell's verdict."""
    cfg = view.comparisons[(view.comparisons["kind"] == "config") & (view.comparisons["metric"] == metric)]
    if library is not None:
        cfg = cfg[cfg["library"] == library]
    if cfg.empty:
        return pd.DataFrame()
    text = cfg.assign(cell=[f"{d:+.1f}% {v}" for d, v in zip(cfg["diff_pct"], cfg["verdict"], strict=True)])
    return text.pivot_table(index=["library", "pattern", "transport", "config"], columns="msg_size",
                            values="cell", aggfunc="first")


# --- the report's own sections ---------------------------------------------------------

def brief(view: RunView) -> pd.DataFrame:
    return pd.DataFrame(view.context["brief"], columns=["", "value"]).set_index("")


def summary_markdown(view: RunView) -> str:
    """The report's summary section, verbatim."""
    return "\n".join(report.summary_lines(view.comparisons, view.context, _compared_cells(view)))


def detail_markdown(view: RunView) -> str:
    """The report's per-pattern verdict tables, verbatim (without the figure links)."""
    return "\n".join(report_detail.detail(view.comparisons, view.cells, {}, view.run_dir, view.context))


def verdicts(view: RunView, kinds=("library", "aa")) -> pd.DataFrame:
    """The comparisons behind the verdict tables, one row each, as a frame to filter."""
    cols = ["kind", "pattern", "transport", "config", *compare.WHERE, "msg_size", "metric", "library",
            "reference", "diff_pct", "ci_lo_pct", "ci_hi_pct", "verdict", "q_value", "test", "mde_pct",
            "n_ref", "n_cand", "stop_reason"]
    sel = view.comparisons[view.comparisons["kind"].isin(kinds)]
    return sel[cols].reset_index(drop=True)


def verdict_counts(view: RunView) -> pd.DataFrame:
    """FAST/SLOW/SAME/AMBIGUOUS per candidate, kind and metric, and NOT PLANNED where an
    adaptive loop never looked at a comparison (no verdict: the report leaves it out of
    its decided counts)."""
    sel = view.comparisons
    counts = sel.groupby(["kind", "library", "metric"])["verdict"].value_counts().unstack(fill_value=0)
    columns = list(compare.VERDICTS) + ([compare.NOT_PLANNED] if compare.NOT_PLANNED in counts else [])
    return counts.reindex(columns=columns, fill_value=0)


def figures(view: RunView, patterns=None):
    """(pattern, caption, Figure) of the report's figures, drawn by the same code."""
    cells = _compared_cells(view)
    infl = inflection.inflections(view.comparisons)
    for pattern, caption, _stem, fig in plots.figures(cells, view.comparisons, infl):
        if patterns is None or pattern in patterns:
            yield pattern, caption, fig


def png(fig, dpi: int = 72) -> bytes:
    """A figure as PNG bytes without a software tag (byte-stable), and closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    plots.plt.close(fig)
    return buf.getvalue()


def inflection_lines(view: RunView) -> list[str]:
    infl = inflection.inflections(view.comparisons)
    return list(infl["sentence"]) + inflection.policy_sentence(inflection.best_config(view.comparisons))


# --- one cell --------------------------------------------------------------------------

@dataclass
class Drill:
    comparison: dict        # the comparisons row (what the report shows)
    recomputed: dict        # compare.compare_pair on the cells again
    repetitions: pd.DataFrame  # repetition, reference, candidate, ratio (per pair where paired)


def pick_cell(view: RunView) -> dict:
    """The comparison a drill-down starts from: the first undecided comparison of a
    headline metric (the one a reader asks about), else the first one; of a library
    against the reference where the run has one, else of the A/A pair (an A/A run),
    else of a configuration. A run without throughput or p50 comparisons (a handshake
    run: connections per second) drills into its own metric."""
    headline = view.comparisons["metric"].isin(report_summary.headline_metrics(view.comparisons))
    cmp = view.comparisons[headline] if headline.any() else view.comparisons
    for kind in ("library", "aa", "config"):
        sel = cmp[cmp["kind"] == kind]
        if not sel.empty:
            undecided = sel[sel["verdict"] == "AMBIGUOUS"]
            return (undecided if not undecided.empty else sel).iloc[0].to_dict()
    raise ValueError(f"{view.run_dir}: no comparison to drill into")


def find(view: RunView, where: dict) -> dict:
    """The comparison row matching `where` (pattern, transport, msg_size, metric and,
    where needed, config, library, kind; kind defaults to library)."""
    where = {"kind": "library", **where}
    sel = view.comparisons
    for c, v in where.items():
        sel = sel[sel[c] == v]
    if len(sel) != 1:
        raise KeyError(f"{len(sel)} comparisons match {where}; add config or library")
    return sel.iloc[0].to_dict()


def drill_summary(d: Drill) -> pd.DataFrame:
    """The table's row and the recomputation side by side (they must be equal)."""
    cols = ["n_ref", "n_cand", "diff_pct", "ci_lo_pct", "ci_hi_pct", "p_value", "mde_pct", "verdict", "test"]
    return pd.DataFrame({"report": [d.comparison.get(c) for c in cols],
                         "recomputed": [d.recomputed.get(c) for c in cols]}, index=cols)


def drill(view: RunView, row: dict) -> Drill:
    """Every repetition of the two cells behind one comparison row, paired by
    repetition index where the run recorded it, and the comparison recomputed."""
    cand_key = {c: row[c] for c in compare.CELL if c not in ("library",)} | {"library": row["library"]}
    ref_key = dict(cand_key)
    ref_key[_reference_field(view, row)] = row["reference"]
    cand, ref = _cell(view, cand_key), _cell(view, ref_key)
    # paired and cut to the loop's last planned look exactly as compare_run judged the row
    paired_configs = view.manifest is not None and view.manifest.paired_configurations
    looks = view.manifest.looks if view.manifest is not None else None
    margin = decide.margin_for(row["kind"], view.context["margin"], view.context.get("config_margin"))
    recomputed = compare.compare_pair(cand, ref, margin, view.context["confidence"],
                                      pairable=row["kind"] != "config" or paired_configs, looks=looks)
    return Drill(row, recomputed, _repetitions(cand, ref))


def _reference_field(view: RunView, row: dict) -> str:
    """Which cell field the row's reference names: a configuration pair's (config, or an A/A
    pair of two contexts that differ only in a variable no library reads) or a library's
    (library, or an A/A alias). An A/A row says "aa" for both, so its reference decides."""
    if row["kind"] == "config":
        return "config"
    if row["kind"] == "aa" and row["reference"] not in set(view.cells["library"]) \
            and row["reference"] in set(view.cells["config"]):
        return "config"
    return "library"


def _cell(view: RunView, key: dict) -> dict:
    sel = view.cells
    for c, v in key.items():
        sel = sel[sel[c] == v]
    if len(sel) != 1:
        raise KeyError(f"{len(sel)} cells match {key}")
    return sel.iloc[0].to_dict()


def _repetitions(cand: dict, ref: dict) -> pd.DataFrame:
    if cand["reps"] and ref["reps"]:
        idx = sorted(set(cand["reps"]) | set(ref["reps"]))
        rows = [{"repetition": i, "reference": ref["reps"].get(i, math.nan),
                 "candidate": cand["reps"].get(i, math.nan)}
                for i in idx]
    else:
        n = max(len(cand["values"]), len(ref["values"]))
        pad = lambda v: list(v) + [math.nan] * (n - len(v))  # noqa: E731
        rows = [{"repetition": math.nan, "reference": r, "candidate": c}
                for r, c in zip(pad(ref["values"]), pad(cand["values"]))]
    out = pd.DataFrame(rows, columns=["repetition", "reference", "candidate"])
    out["ratio"] = out["candidate"] / out["reference"]
    return out


# --- why: the views behind a verdict ---------------------------------------------------

def spread(view: RunView) -> pd.DataFrame:
    """Median CV of the cells' repetitions per size, library and headline metric, and per
    placement, process model or link where the run varies them: which setting is quiet
    enough to decide (experiments/placement/README.md reads its result this way)."""
    metrics = report_summary.headline_metrics(view.comparisons)
    by = ["metric", "msg_size", *report_summary.varying(view.comparisons), "library"]
    sel = view.cells[view.cells["metric"].isin(metrics) & (view.cells["n"] >= 2)]
    if sel.empty:
        return pd.DataFrame(columns=by + ["cells", "median_cv_pct", "max_cv_pct"])
    g = sel.groupby(by)["cv"]
    return pd.DataFrame({"cells": g.size(), "median_cv_pct": 100 * g.median(), "max_cv_pct": 100 * g.max()}) \
        .reset_index()


def tail(view: RunView) -> pd.DataFrame:
    """Each cell's round trips pooled over its usable repetitions: the bench's latency
    histograms (testbed.bench.latency_histogram) merged, read at p50/p99/p99.9, beside
    the median and spread of the repetitions' own p99 (what the verdicts pair). A
    pooled p99 far above the repetitions' median says a few repetitions carry the tail.
    Empty for runs from before the histograms (2026-11-27)."""
    pooled = latency_shapes.pooled(RunDir.at(view.run_dir), view.tidy)
    rows = []
    for group, items in sorted(pooled.items(), key=lambda kv: tuple(map(str, kv[0]))):
        merged = latency_histogram.merge([h for h, _ in items])
        reps_p99 = pd.Series([p for _, p in items if p is not None], dtype=float)
        rows.append({**dict(zip(latency_shapes.POOL_KEYS, group, strict=True)), "repetitions": len(items),
                     "round_trips": merged.total,
                     **{f"pooled_{name}_us": merged.percentile(q) / 1000
                        for name, q in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999))},
                     "rep_p99_median_us": reps_p99.median(),
                     "rep_p99_cv_pct": (100 * reps_p99.std() / reps_p99.mean()
                                        if len(reps_p99) > 1 else math.nan)})
    return pd.DataFrame(rows, columns=[*latency_shapes.POOL_KEYS, "repetitions", "round_trips",
                                       "pooled_p50_us", "pooled_p99_us", "pooled_p999_us",
                                       "rep_p99_median_us", "rep_p99_cv_pct"])


def counters(view: RunView) -> pd.DataFrame:
    """Work per message (callgrind/perf: instructions, cycles) and perf counters per cell,
    each library's median and the candidate's ratio to the reference: work, not speed."""
    sel = view.cells[view.cells["metric"].isin(schema.WORK_METRICS)
                     | view.cells["metric"].str.startswith("perf_")]
    keys = ["pattern", "transport", "msg_size", "config", *report_summary.varying(view.comparisons), "metric"]
    if sel.empty:
        return pd.DataFrame(columns=keys)
    wide = sel.pivot_table(index=keys, columns="library", values="median", aggfunc="first")
    ref = view.manifest.reference_label
    if ref in wide.columns:
        for lib in [c for c in wide.columns if c != ref]:
            wide[f"{lib} / {ref}"] = wide[lib] / wide[ref]
    return wide.reset_index()


def host_speed(view: RunView) -> tuple[dict, pd.DataFrame]:
    """The host speed reference over the run: its summary (speed_reference.summarize, as the
    report's table) and the series its figure draws (host_speed.series)."""
    from . import host_speed as hs
    pairs = view.context["host_speed"]
    return speed_reference.summarize(pairs), hs.series(pairs)


def draw_host_speed(series: pd.DataFrame):
    from . import host_speed as hs
    return hs.draw(series)


def broken_ceiling_markdown(view: RunView) -> str:
    return "\n".join(report_detail.broken_ceiling(view.context, view.comparisons))


# --- two runs --------------------------------------------------------------------------

def run_facts(view: RunView) -> dict:
    """What differs between two runs besides the code: commit, host, load, host speed,
    the cells' median spread."""
    b = dict(view.context["brief"])
    s = speed_reference.summarize(view.context["host_speed"])
    cv = view.cells[(view.cells["metric"] == "throughput_msgs") & (view.cells["n"] >= 2)]["cv"]
    return {"run": view.run_dir.name, "commit": b.get("commit", "?"), "host": b.get("host", "?"),
            "load before / after": b.get("load before / after", "?"),
            "host speed median (ms)": s.get("median_ms", math.nan),
            "host speed CV (%)": 100 * s.get("cv", math.nan),
            "median CV of throughput cells (%)": 100 * float(cv.median()) if len(cv) else math.nan,
            "confidence": view.context["confidence"]}


def facts_side_by_side(a: RunView, b: RunView) -> pd.DataFrame:
    return pd.DataFrame({"a": _facts(a), "b": _facts(b)})


def _facts(view: RunView) -> dict:
    return run_facts(view) if view.manifest is not None else dict(view.context["brief"])


def replication(a: RunView, b: RunView, metric: str = "throughput_msgs") -> pd.DataFrame:
    """zlink-vs-reference comparisons of two runs joined cell by cell: replicated (same
    verdict), flipped (FAST in one, SLOW in the other) or changed (decided in one,
    not in the other, or SAME against AMBIGUOUS) or not planned (an adaptive loop never
    looked at it in one run: no verdict), with the reason the intervals give."""
    both = compare.side_by_side(a.comparisons, b.comparisons, "a", "b", metric=metric)
    if both.empty:
        return both.assign(status=pd.Series(dtype=str), reason=pd.Series(dtype=str))
    both["status"] = [_status(x, y) for x, y in zip(both["verdict_a"], both["verdict_b"])]
    both["reason"] = [_reason(r) for r in both.to_dict("records")]
    return both


def _status(x: str, y: str) -> str:
    if compare.NOT_PLANNED in (x, y):
        return "not planned"
    if x == y:
        return "replicated"
    if {x, y} == set(DECIDED):
        return "flipped"
    return "changed"


def _overlap(r: dict) -> bool | None:
    lo_a, hi_a, lo_b, hi_b = (r[k] for k in ("ci_lo_pct_a", "ci_hi_pct_a", "ci_lo_pct_b", "ci_hi_pct_b"))
    if any(v != v for v in (lo_a, hi_a, lo_b, hi_b)):
        return None
    return not (hi_a < lo_b or hi_b < lo_a)


def _reason(r: dict) -> str:
    if r["status"] == "replicated":
        return ""
    if r["status"] == "not planned":
        side = " and ".join(s for s in ("a", "b") if r[f"verdict_{s}"] == compare.NOT_PLANNED)
        return f"run {side}'s adaptive loop never looked at this comparison: no verdict to replicate"
    overlap = _overlap(r)
    if overlap is None:
        return "one side has no interval (too few repetitions)"
    width_a = r["ci_hi_pct_a"] - r["ci_lo_pct_a"]
    width_b = r["ci_hi_pct_b"] - r["ci_lo_pct_b"]
    if not overlap:
        return ("intervals disjoint: the ratio itself moved between the runs (code, host or placement), "
                "beyond either run's uncertainty")
    wider = "a" if width_a > width_b else "b"
    return (f"intervals overlap: both runs fit one ratio; run {wider}'s interval is wider "
            f"({width_a:.1f} vs {width_b:.1f} points), so an edge crossed the margin or no-change line")


STATUSES = ("replicated", "flipped", "changed", "not planned")


def replication_counts(table: pd.DataFrame) -> pd.DataFrame:
    """How many comparisons replicated, flipped, changed or lack a planned verdict in
    either run (each listed, 0 or not)."""
    counts = table["status"].value_counts() if not table.empty else pd.Series(dtype=int)
    return pd.DataFrame({"status": list(STATUSES), "comparisons": [int(counts.get(s, 0)) for s in STATUSES]})


def moved(table: pd.DataFrame) -> pd.DataFrame:
    """The comparisons that did not replicate: where, both verdicts and intervals, why."""
    cols = ["pattern", "transport", "msg_size", "config", "status", "verdict_a", "diff_pct_a", "ci_lo_pct_a",
            "ci_hi_pct_a", "verdict_b", "diff_pct_b", "ci_lo_pct_b", "ci_hi_pct_b", "reason"]
    if table.empty:
        return pd.DataFrame(columns=cols)
    return table[table["status"] != "replicated"][cols].reset_index(drop=True)

