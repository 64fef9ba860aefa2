"""The report's summary: one block per candidate (its comparisons with the reference),
one for configurations, one for A/A calibration. Markdown lines out; no I/O."""
from __future__ import annotations

import math

import pandas as pd

from testbed.records import counted, schema
from testbed.records.manifest import is_reference_name

from . import compare, fmt, report_counting
from .order import pattern_key, transport_key


def varying(cmp: pd.DataFrame) -> list[str]:
    """The where/how columns (placement, process model, link) that take more than one
    value in this analysis: only those are worth naming beside a cell."""
    return [c for c in compare.WHERE if cmp[c].nunique() > 1]

DECIDED = ("FAST", "SLOW", "SAME")
TOP = 5


def headline_metrics(cmp: pd.DataFrame) -> list[str]:
    """Throughput, p50 and p99 latency (the published reports' one latency where no p50
    exists): the tail is part of the answer, judged per repetition by the same test."""
    lat = "lat_p50_us" if (cmp["metric"] == "lat_p50_us").any() else "lat_mean_us"
    return [m for m in ("throughput_msgs", lat, "lat_p99_us") if (cmp["metric"] == m).any()]


def _counts_row(label: str, g: pd.DataFrame, unplanned: bool = False) -> list[str]:
    """Verdict counts and the decided share of the planned comparisons (a comparison
    the adaptive loop never looked at has no verdict: counted apart, when any)."""
    c = g["verdict"].value_counts()
    decided = sum(int(c.get(v, 0)) for v in DECIDED)
    planned = len(g) - int(c.get(compare.NOT_PLANNED, 0))
    counts = [str(int(c.get(v, 0))) for v in compare.VERDICTS]
    extra = [str(int(c.get(compare.NOT_PLANNED, 0)))] if unplanned else []
    share = fmt.share(decided / planned) if planned else "-"
    return [label] + counts + extra + [share, str(planned)]


def _any_unplanned(g: pd.DataFrame) -> bool:
    return bool((g["verdict"] == compare.NOT_PLANNED).any())


def _counts_table(first: str, groups: list[tuple[str, pd.DataFrame]]) -> list[str]:
    unplanned = any(_any_unplanned(g) for _, g in groups)
    rows = [_counts_row(label, g, unplanned) for label, g in groups if len(g)]
    header = [first] + compare.VERDICTS + (["Not planned"] if unplanned else []) + ["Decided", "Comparisons"]
    return [fmt.md_table(header, rows), ""] + (_unplanned_note() if unplanned else [])


def _unplanned_note() -> list[str]:
    return ["Not planned: the adaptive loop stopped (time budget, failures, host-drift exclusions) before "
            "its first planned look at these comparisons, so no verdict of the calibrated procedure exists; "
            "they are left out of Decided and Comparisons.", ""]


def _breakdown(lib: pd.DataFrame, metrics: list[str]) -> list[str]:
    """Pattern x transport x metric counts, when the block spans more than one."""
    keys = ["pattern", "transport", "metric"]
    groups = sorted(lib[lib["metric"].isin(metrics)].groupby(keys),
                    key=lambda kv: (pattern_key(kv[0][0]), transport_key(kv[0][1]), metrics.index(kv[0][2])))
    if len(groups) <= len(metrics):
        return []
    unplanned = any(_any_unplanned(g) for _, g in groups)
    rows = [[p, t, schema.metric(m).label] + _counts_row("", g, unplanned)[1:] for (p, t, m), g in groups]
    header = (["Pattern", "Transport", "Metric"] + compare.VERDICTS + (["Not planned"] if unplanned else [])
              + ["Decided", "Comparisons"])
    return [fmt.md_table(header, rows), ""]


def where_text(r: dict, shown: list[str]) -> str:
    """'PAIR ipc 64 KiB split two-process' (the where-columns this report varies, then a
    configuration other than the default)."""
    parts = [r["transport"], schema.kib(r["msg_size"])] + [r[c] or "-" for c in shown]
    cfg = "" if r["config"] in ("", "default") else f" [{r['config']}]"
    return f"{r['pattern']} {' '.join(parts)}{cfg}"


def _extremes(lib: pd.DataFrame, shown: list[str]) -> list[str]:
    lines = []
    for title, verdict, ascending in (("Biggest wins", "FAST", False), ("Biggest losses", "SLOW", True)):
        sub = lib[lib["verdict"] == verdict].sort_values(
            ["diff_pct", "pattern", "transport", "msg_size"], ascending=[ascending, True, True, True])
        lines += [f"{title} ({verdict}):", ""]
        for r in sub.head(TOP).to_dict("records"):
            lines.append(f"- {where_text(r, shown)}, {schema.metric(r['metric']).label.lower()}: "
                         f"{fmt.pct(r['diff_pct'], 1)} {fmt.interval(r['ci_lo_pct'], r['ci_hi_pct'])}"
                         + (f" ({r['test']})" if isinstance(r.get("test"), str) and r["test"] else ""))
        lines += (["- none"] if sub.empty else []) + [""]
    return lines


def candidate_blocks(cmp: pd.DataFrame) -> list[str]:
    """One block per candidate library against the reference library."""
    lib = cmp[cmp["kind"] == "library"]
    metrics = headline_metrics(cmp)
    lines = []
    for (cand, ref), g in sorted(lib.groupby(["library", "reference"])):
        lines += [f"### {cand} vs {ref}", ""]
        lines += _counts_table("Metric", [(schema.metric(m).label, g[g["metric"] == m]) for m in metrics])
        lines += test_lines(g[g["metric"].isin(metrics)])
        lines += _breakdown(g, metrics)
        lines += _extremes(g[g["metric"].isin(metrics)], varying(cmp))
    return lines


def test_lines(g: pd.DataFrame) -> list[str]:
    """Which test judged the comparisons made on repetitions, and how many each decided."""
    judged = g[g["test"].isin([compare.PAIRED, compare.UNPAIRED])] if "test" in g else g.iloc[:0]
    if judged.empty:
        return []
    parts = []
    for test, name in ((compare.PAIRED, "paired (Wilcoxon signed-rank on per-repetition log ratios)"),
                       (compare.UNPAIRED, "unpaired (Mann-Whitney)")):
        t = judged[judged["test"] == test]
        if len(t):
            parts.append(f"{name}: {len(t)} judged, {int(t['verdict'].isin(DECIDED).sum())} decided")
    return ["Tests: " + "; ".join(parts) + ".", ""]


def config_block(cmp: pd.DataFrame, answers: bool = True) -> list[str]:
    """Each configuration against the no-override one, per library and headline metric."""
    metrics = headline_metrics(cmp)
    cfg = cmp[(cmp["kind"] == "config") & cmp["metric"].isin(metrics)
              & ~cmp["library"].map(is_reference_name)]
    if cfg.empty:
        return []
    groups = [(f"{lib}: {c} vs {ref}, {schema.metric(m).label.lower()}", g) for (m, lib, c, ref), g in
              sorted(cfg.groupby(["metric", "library", "config", "reference"]),
                     key=lambda kv: (metrics.index(kv[0][0]), kv[0][1:]))]
    return (["### Configurations", ""] + _counts_table("Pair", groups) + test_lines(cfg)
            + (equivalence_bounds(cmp) if answers else []))


def equivalence_bounds(cmp: pd.DataFrame) -> list[str]:
    """An answer even where a verdict is not: per configuration, library and metric, the
    largest upper end of the interval over the sizes, i.e. "at no size is it more than X%
    better than the reference configuration" at the run's confidence (X < 0: worse
    everywhere by at least -X%)."""
    metrics = headline_metrics(cmp) + [m for m in counted.JUDGED if (cmp["metric"] == m).any()]
    cfg = cmp[(cmp["kind"] == "config") & cmp["metric"].isin(metrics) & cmp["ci_hi_pct"].notna()
              & ~cmp["library"].map(is_reference_name)]
    if cfg.empty:
        return []
    rows = []
    for (m, lib, c, ref), g in sorted(cfg.groupby(["metric", "library", "config", "reference"]),
                                      key=lambda kv: (metrics.index(kv[0][0]), kv[0][1:])):
        worst = g.loc[g["ci_hi_pct"].idxmax()]
        sizes = len(g)
        rows.append([f"{lib}: {c} vs {ref}", schema.metric(m).label, fmt.pct(worst["ci_hi_pct"], 1),
                     schema.kib(worst["msg_size"]), f"{sizes}"])
    return ["Equivalence bounds: at no size measured is the configuration better than its reference by more "
            "than the bound (the upper end of its interval, largest over the sizes; a negative bound means "
            "worse at every size by at least that much).", "",
            fmt.md_table(["Pair", "Metric", "At most better by", "At size", "Sizes"], rows), ""]


def counted_block(cmp: pd.DataFrame, cells: pd.DataFrame | None = None,
                  counting: dict | None = None, work: list[str] = ()) -> list[str]:
    """Counted work per message (arms runs, or a blocks run's counting runs) judged like
    the timings, where the two judges disagree (both decided, opposite directions), the
    counting runs' system calls per arm, or why none were counted (report_counting.py),
    and `work`: the instructions per message of every cell (report_work.py)."""
    cw = cmp[cmp["metric"].isin(counted.JUDGED) & cmp["kind"].isin(["library", "config"])
             & ~((cmp["kind"] == "config") & cmp["library"].map(is_reference_name))]
    if cw.empty:
        extra = report_counting.lines(cells, counting) + list(work)
        return ["### Counted work (a second judge)", "", *extra] if extra else []
    groups = [(f"{'library' if k == 'library' else 'configuration'}: {schema.metric(m).label.lower()}", g)
              for (k, m), g in sorted(cw.groupby(["kind", "metric"]),
                                      key=lambda kv: (kv[0][0], counted.JUDGED.index(kv[0][1])))]
    lines = ["### Counted work (a second judge)", "",
             "What one message cost in work, counted per run and arm (records/counted.py): judged per run, "
             "paired, by the same test as the timings. Lower is better except bytes per data call.", ""]
    lines += _counts_table("Comparisons", groups)
    lines += report_counting.lines(cells, counting)
    lines += list(work)
    lines += judges_disagree(cmp)
    return lines


def judges_disagree(cmp: pd.DataFrame) -> list[str]:
    """Comparisons whose throughput verdict and counted-work verdict are both FAST/SLOW
    in opposite directions, and how many agree. The counted-work judge: system calls per
    message where counting runs counted them (the cause batching changes), context
    switches (counted.HEADLINE) beside them; else context switches."""
    keys = ["kind", "run_id", "pattern", "transport", "io_threads", "config", "msg_size", "library",
            "reference", *compare.WHERE]
    syscalls = counted.TRACEPOINT[0]
    judge_metric = syscalls if (cmp["metric"] == syscalls).any() else counted.HEADLINE
    thr = cmp[cmp["metric"] == "throughput_msgs"].set_index(keys)["verdict"]
    cw = cmp[cmp["metric"] == judge_metric].set_index(keys)["verdict"]
    both = pd.concat([thr.rename("time"), cw.rename("work")], axis=1, join="inner")
    if both.empty:
        return []
    beside = judge_metric != counted.HEADLINE
    if beside:
        switches = cmp[cmp["metric"] == counted.HEADLINE].set_index(keys)["verdict"].rename("switches")
        both = both.join(switches, how="left")
    calls = both[both["time"].isin(["FAST", "SLOW"]) & both["work"].isin(["FAST", "SLOW"])]
    disagree = calls[calls["time"] != calls["work"]]
    judge = schema.metric(judge_metric).label.lower()
    also = f", {schema.metric(counted.HEADLINE).label.lower()} beside it" if beside else ""
    lines = [f"The two judges (throughput; {judge}{also}): {len(both)} comparisons have both, "
             f"{len(calls)} decided FAST/SLOW by both, agreeing on {len(calls) - len(disagree)}, "
             f"disagreeing on {len(disagree)}.", ""]
    if len(disagree):
        rows = [[k[0], f"{k[2]} {k[3]} {schema.kib(k[6])}", k[5], k[7], k[8], r["time"], r["work"]]
                + ([r["switches"] if isinstance(r["switches"], str) else "-"] if beside else [])
                for k, r in disagree.reset_index().set_index(keys).iterrows()]
        lines += [fmt.md_table(["Kind", "Cell", "Config", "Library", "Reference", "Throughput",
                                schema.metric(judge_metric).label,
                                *([schema.metric(counted.HEADLINE).label] if beside else [])], rows), ""]
    return lines


def calibration_block(cmp: pd.DataFrame, referenced: pd.DataFrame | None,
                      referenced_name: str | None) -> list[str]:
    """How many A/A comparisons the run holds and how many were called FAST or SLOW."""
    lines = ["### A/A calibration", ""]
    own = compare.calibration(cmp)
    if own["comparisons"].sum():  # A/A pairs exist, judged or not
        lines += _calibration_lines("This run", own)
    else:
        lines += ["This run holds no A/A comparison (no alias of the reference build): its false-call rate "
                  "is not measured here.", ""]
    if referenced is not None:
        lines += _calibration_lines(f"The referenced A/A run `{referenced_name}`",
                                    compare.calibration(referenced))
    return lines


def _calibration_lines(who: str, cal: pd.DataFrame) -> list[str]:
    total, n, false = (int(cal[c].sum()) for c in ("comparisons", "judged", "false_calls"))
    rate = false / n if n else math.nan
    if n:
        verdict = f"{false} were called FAST or SLOW ({fmt.share(rate)}): " \
                  + ("within" if rate <= 0.05 else "ABOVE") + " the nominal 5%."
    else:
        verdict = "none could be judged, so the false-call rate is not measured."
    rows = [[schema.metric(r["metric"]).label, str(r["comparisons"]), str(r["judged"]), str(r["false_calls"]),
             fmt.share(r["rate"])] for r in cal.to_dict("records") if r["comparisons"]]
    return [f"{who} holds {total} A/A comparisons (throughput and p50 latency), {n} with enough repetitions "
            f"to judge; {verdict}", "",
            fmt.md_table(["Metric", "A/A comparisons", "Judged", "Called FAST/SLOW", "False-call rate"],
                         rows), ""]


def _pct1(v) -> str:
    return f"{100 * float(v):.1f}%"


def spread_block(cells: pd.DataFrame | None) -> list[str]:
    """The median within-cell CV per library and headline metric: how repeatable one
    cell's repetitions were on this host under this run's placement (the instrument's
    own noise; the verdicts' intervals are built from it)."""
    if cells is None or cells.empty:
        return []
    rows = []
    for metric in ("throughput_msgs", "lat_p50_us"):
        m = cells[(cells["metric"] == metric) & (cells["n"] >= 2)]
        for lib, g in sorted(m.groupby("library")):
            cv = g["cv"].dropna()
            if len(cv):
                rows.append([schema.metric(metric).label, lib, str(len(cv)), _pct1(cv.median()),
                             f"{_pct1(cv.quantile(0.25))}-{_pct1(cv.quantile(0.75))}", _pct1(cv.max())])
    if not rows:
        return []
    return ["### Spread within cells", "",
            "CV of each cell's repetitions (std / mean), summarised over the cells with 2 or more:", "",
            fmt.md_table(["Metric", "Library", "Cells", "Median CV", "Quartiles", "Max"], rows), ""]


def error_budget(cmp: pd.DataFrame, confidence: float = 0.95) -> list[str]:
    """How many false calls this report should hold if nothing differed anywhere: the
    comparisons judged on an interval (planned ones only), each with a false-call rate
    of at most 1 - confidence (an adaptive comparison: over all its looks), and how many
    FAST/SLOW calls survive a Benjamini-Hochberg false-discovery rate of 5%."""
    judged = cmp[cmp["basis"].isin(["interval", "summary"])]
    if judged.empty:
        return []
    alpha = 1 - confidence
    rows = []
    for kind, label in (("library", "library"), ("config", "configuration"), ("aa", "A/A")):
        g = judged[judged["kind"] == kind]
        if g.empty:
            continue
        calls = g[g["verdict"].isin(["FAST", "SLOW"])]
        q = calls["q_value"] if "q_value" in calls else pd.Series(dtype=float)
        rows.append([label, str(len(g)), fmt.share(alpha), f"{alpha * len(g):.3g}", str(len(calls)),
                     str(int((q <= 0.05).sum()))])
    return ["### Error budget", "",
            f"Each comparison below is one test at {100 * confidence:.4g}% confidence (an adaptive "
            f"comparison over all its looks): if no comparison had any effect, about the expected number of "
            f"them would still be called FAST or SLOW. q (BH) is the Benjamini-Hochberg q-value of a "
            f"comparison's p over its run and kind (the p at its last look, not corrected for the "
            f"looks).", "",
            fmt.md_table(["Comparisons", "Judged", "False-call rate each", "Expected false calls (no effect)",
                          "Called FAST/SLOW", "of them q <= 0.05"], rows), ""]


def summary(cmp: pd.DataFrame, referenced: pd.DataFrame | None = None,
            referenced_name: str | None = None, published: bool = False,
            cells: pd.DataFrame | None = None, confidence: float = 0.95, answers: bool = False,
            counting: dict | None = None, work: list[str] = ()) -> list[str]:
    """answers: the issue-41 answers beside the verdicts (equivalence bounds, counted work):
    runs of the sweep that records its layout; earlier reports render as they were.
    counting: report_counting.context of the run (None: it predates counting runs);
    work: report_work.lines of the run's cells (instructions per message per cell)."""
    lines = ["## Summary", ""]
    body = candidate_blocks(cmp) + config_block(cmp, answers) \
        + (counted_block(cmp, cells, counting, work) if answers else []) \
        + error_budget(cmp, confidence)
    if not published:
        body += calibration_block(cmp, referenced, referenced_name)
        body += spread_block(cells)
    return lines + body if body else []
