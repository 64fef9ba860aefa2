"""A run's answer to its experiment's question: the comparisons its toml's [answer]
declares (records/answer_spec.py), counted, and the one sentence that says them.

The report writes it first (report.md's "Answer"), the index and the experiment READMEs
copy it (answer_blocks.py): one computation, so no copy can disagree with another.
Pure: comparisons and cells in, text out.
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from types import SimpleNamespace

import pandas as pd

from testbed.records import answer_spec, counted, schema
from testbed.records.answer_spec import AnswerSpec, Comparison, Quote
from testbed.records.manifest import RunManifest

from . import compare, fmt
from .order import pattern_key, transport_key

KIND_OF = {"libraries": "library", "configurations": "config", "aa": "aa"}
COUNTED = ("FAST", "SLOW", "SAME", "AMBIGUOUS")
SHORT = {"throughput_msgs": "throughput", "lat_p50_us": "p50", "lat_p99_us": "p99",
         "lat_mean_us": "mean latency", "startup_s": "whole-process time",
         **{m.name: m.short for m in counted.METRICS + counted.SHOWN}}


@dataclass(frozen=True)
class Row:
    label: str
    metric: str
    counts: dict
    lo: float = math.nan    # the range of the diffs (%, positive = candidate better)
    hi: float = math.nan
    gmean: float = math.nan  # geometric mean of the ratios (> 1 = candidate better)
    planned: int = 0         # comparisons behind gmean

    @property
    def n(self) -> int:     # planned comparisons: those with a verdict
        return sum(self.counts.get(v, 0) for v in COUNTED)

    def text(self) -> str:
        c = self.counts
        parts = [f"{c.get('FAST', 0)} FAST", f"{c.get('SLOW', 0)} SLOW"]
        parts += [f"{c[v]} {v}" for v in ("SAME", "AMBIGUOUS") if c.get(v)]
        out = f"{SHORT.get(self.metric, self.metric)} {', '.join(parts)} of {self.n}"
        return out + (f" ({c[compare.NOT_PLANNED]} not planned)" if c.get(compare.NOT_PLANNED) else "")

    def gmean_text(self) -> str:
        what = SHORT.get(self.metric, self.metric)
        return f"{what} {self.gmean:.2f}x of {self.planned}" if self.planned else f"{what} not measured"


@dataclass(frozen=True)
class Result:
    """One declared comparison on one run."""
    name: str
    kind: str
    title: str
    margin: float
    rows: tuple[Row, ...] = ()
    spread: tuple[tuple[str, str, str, int, float], ...] = ()   # label, metric, library, cells, median CV
    aa: dict = field(default_factory=dict)

    def total(self, verdict: str) -> int:
        return sum(r.counts.get(verdict, 0) for r in self.rows)

    def counts_text(self) -> str:
        if self.kind == "spread":
            return self.spread_text()
        return self._per_label(Row.text)

    def geomean_text(self) -> str:
        """Per by-group and metric, the geometric mean of the candidate's ratios (oriented so
        that above 1 is better: throughput cand/ref, latency ref/cand) over its planned
        comparisons: the one figure a sweep of cells is often summarised by."""
        return self._per_label(Row.gmean_text)

    def _per_label(self, text_of) -> str:
        """One clause per by-group ("label: metric ..., metric ..."), in the rows' order."""
        if not self.rows:
            return "no such comparison in this run"
        out, labels = [], list(dict.fromkeys(r.label for r in self.rows))
        for label in labels:
            body = ", ".join(text_of(r) for r in self.rows if r.label == label)
            out.append(f"{label}: {body}" if label else body)
        return "; ".join(out)

    def spread_text(self) -> str:
        by_label: dict[str, list[str]] = {}
        for label, metric, lib, _, cv in self.spread:
            by_label.setdefault(f"{label} {SHORT.get(metric, metric)}".strip(), []).append(f"{lib} {cv:.1f}%")
        return "; ".join(f"{k}: {', '.join(v)}" for k, v in by_label.items()) or "no cell with 2 repetitions"

    def best(self) -> str:
        """The by-group with the lowest median CV of the first metric, over its libraries."""
        if not self.spread:
            return "none (no cell with 2 repetitions)"
        first = self.spread[0][1]
        groups: dict[str, list[float]] = {}
        for label, metric, _, _, cv in self.spread:
            if metric == first:
                groups.setdefault(label, []).append(cv)
        label, cvs = min(groups.items(), key=lambda kv: (max(kv[1]), kv[0]))
        what = SHORT.get(first, first)
        return f"{label or 'every cell'} (median within-cell CV of {what} at most {max(cvs):.1f}%)"

    def fields(self) -> SimpleNamespace:
        lo = [r.lo for r in self.rows if not math.isnan(r.lo)]
        hi = [r.hi for r in self.rows if not math.isnan(r.hi)]
        return SimpleNamespace(
            **{v: self.total(v) for v in COUNTED}, not_planned=self.total(compare.NOT_PLANNED),
            n=sum(r.n for r in self.rows) if self.kind != "spread" else len(self.spread),
            counts=self.counts_text(), margin=f"+/-{100 * self.margin:g}%",
            range=f"{min(lo):+.1f}% to {max(hi):+.1f}%" if lo else "no diff measured",
            geomean=self.geomean_text() if self.kind != "spread" else "",
            best=self.best() if self.kind == "spread" else "", rows=self.spread_text(),
            false_calls=self.aa.get("false_calls", 0), judged=self.aa.get("judged", 0),
            rate=f"{100 * self.aa['rate']:.1f}%" if self.aa.get("judged") else "not measured")


@dataclass(frozen=True)
class Answer:
    sentence: str
    results: tuple[Result, ...]
    quotes: dict
    source: str

    def markdown(self, heading: str = "## Answer", settings: str = "") -> list[str]:
        lines = [heading, "", self.sentence, ""] + ([f"Settings, from the records: {settings}.", ""]
                                                   if settings else [])
        for r in self.results:
            lines += [f"**{r.title}**", ""] + table(r) + [""]
        where = f"`{self.source}`" if self.source else "no [answer] table (the default: every library pair)"
        lines += [f"Declared in {where}: the comparisons that answer the question and the sentence above, "
                  "each judged as the Summary's are.", ""]
        return lines


def table(r: Result) -> list[str]:
    """The rows of one result as a markdown table."""
    if r.kind == "spread":
        rows = [[label or "all", schema.metric(m).label, lib, str(n), f"{cv:.1f}%"]
                for label, m, lib, n, cv in r.spread]
        return [fmt.md_table(["Cells", "Metric", "Library", "Cells with n >= 2", "Median CV"], rows)] \
            if rows else ["No cell with 2 repetitions."]
    if not r.rows:
        return ["No such comparison in this run."]
    rows = []
    for row in r.rows:
        c = row.counts
        span = f"{row.lo:+.1f}% to {row.hi:+.1f}%" if not math.isnan(row.lo) else "-"
        rows.append([row.label or "all", schema.metric(row.metric).label]
                    + [str(c.get(v, 0)) for v in COUNTED]
                    + [str(c.get(compare.NOT_PLANNED, 0)), str(row.n), span])
    out = [fmt.md_table(["Comparisons", "Metric", *COUNTED, "Not planned", "Of", "Diff range"], rows)]
    if r.kind == "aa" and r.aa.get("judged"):
        out += ["", f"False calls (FAST or SLOW of one build against itself): {r.aa['false_calls']} of "
                    f"{r.aa['judged']} judged ({100 * r.aa['rate']:.1f}%)."]
    return out


# --- computing ---------------------------------------------------------------------------

def _natural(value) -> tuple:
    text = str(value)
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text) if t)


def _sort_key(fieldname: str, value):
    if fieldname == "pattern":
        return pattern_key(str(value))
    if fieldname == "transport":
        return transport_key(str(value))
    if fieldname in ("msg_size", "io_threads"):
        return (float(value) if pd.notna(value) else -1.0, "")
    return _natural(value)


def _label(fieldname: str, value) -> str:
    if fieldname == "msg_size":
        return schema.kib(value)
    if fieldname == "io_threads":
        return f"{int(value)} IO thread{'s' if int(value) != 1 else ''}"
    if fieldname == "placement" and not value:
        return "unpinned"
    return str(value)


def select(frame: pd.DataFrame, where: dict, library: str | None) -> pd.DataFrame:
    """The rows matching every `where` field (compared as text) and the candidate `library`."""
    keep = pd.Series(True, index=frame.index)
    for key, values in where.items():
        keep &= frame[key].astype(str).isin([str(v) for v in values])
    if library is not None:
        keep &= frame["library"] == library
    return frame[keep]


def _counts(comparisons: Comparison, cmp: pd.DataFrame) -> tuple[Row, ...]:
    sel = select(cmp[(cmp["kind"] == KIND_OF[comparisons.kind]) & cmp["metric"].isin(comparisons.metrics)],
                 comparisons.where, comparisons.library)
    if sel.empty:
        return ()
    by = list(comparisons.by)
    pairs = sel[["library", "reference"]].drop_duplicates()
    if len(pairs) > 1 and "library" not in by:
        by = ["library", *by]   # two candidates: never pool them
    keys = [*by, "reference"] if comparisons.kind == "configurations" and "config" in by else by
    rows = []
    groups = sel.groupby(keys, sort=False, dropna=False) if keys else [((), sel)]
    ordered = sorted(groups, key=lambda kv: tuple(_sort_key(f, v) for f, v in zip(keys, _tuple(kv[0]),
                                                                                  strict=True)))
    for values, g in ordered:
        named = dict(zip(keys, _tuple(values), strict=True))
        label = " ".join(_label(f, named[f]) for f in by if f in named)
        if comparisons.kind == "configurations" and "config" in named:
            label = label.replace(str(named["config"]), f"{named['config']} vs {named['reference']}", 1)
        for metric in comparisons.metrics:
            m = g[g["metric"] == metric]
            if m.empty:
                continue
            counts = {str(k): int(v) for k, v in m["verdict"].value_counts().items()}
            planned = m[m["verdict"] != compare.NOT_PLANNED]["diff_pct"].dropna()
            ratios = [r for r in 1 + planned / 100 if r > 0]   # a ratio of 0 has no logarithm
            rows.append(Row(label, metric, counts, float(planned.min()) if len(planned) else math.nan,
                            float(planned.max()) if len(planned) else math.nan,
                            statistics.geometric_mean(ratios) if ratios else math.nan, len(ratios)))
    return tuple(rows)


def _tuple(values) -> tuple:
    return values if isinstance(values, tuple) else (values,)


def _aa(rows: tuple[Row, ...], cmp: pd.DataFrame, c: Comparison) -> dict:
    sel = select(cmp[(cmp["kind"] == "aa") & cmp["metric"].isin(c.metrics)], c.where, c.library)
    judged = sel[sel["basis"] == "interval"]
    false = int(judged["verdict"].isin(["FAST", "SLOW"]).sum())
    return {"false_calls": false, "judged": len(judged), "rate": false / len(judged) if len(judged) else 0.0}


def _spread(c: Comparison, cells: pd.DataFrame) -> tuple:
    sel = select(cells[cells["metric"].isin(c.metrics) & (cells["n"] >= 2)], c.where, c.library)
    out = []
    by = list(c.by)
    for metric in c.metrics:
        m = sel[sel["metric"] == metric]
        keys = [*by, "library"]
        for values, g in sorted(m.groupby(keys, sort=False, dropna=False),
                                key=lambda kv: tuple(_sort_key(f, v) for f, v in zip(keys, _tuple(kv[0]),
                                                                                     strict=True))):
            named = dict(zip(keys, _tuple(values), strict=True))
            cv = g["cv"].dropna()
            if len(cv):
                out.append((" ".join(_label(f, named[f]) for f in by), metric, str(named["library"]), len(cv),
                            100 * float(cv.median())))
    return tuple(out)


def _title(c: Comparison, cmp: pd.DataFrame) -> str:
    sel = select(cmp[cmp["kind"] == KIND_OF.get(c.kind, "library")], c.where, c.library)
    pairs = sorted({(str(a), str(b)) for a, b in zip(sel["library"], sel["reference"], strict=True)})
    if c.kind == "configurations":
        libs = sorted({a for a, _ in pairs})
        return f"{', '.join(libs) or 'no library'}: each configuration against the reference configuration"
    if c.kind == "aa":
        return "A/A: " + (", ".join(f"{a} vs {b}" for a, b in pairs)
                          or "no alias of the reference in this run")
    if c.kind == "spread":
        return "Spread within cells (CV of each cell's repetitions), median per " + (", ".join(c.by) or "run")
    return ", ".join(f"{a} vs {b}" for a, b in pairs) or "no library pair in this run"


def declared_config_pairs(cells: pd.DataFrame, reference: str, judging: RunManifest) -> pd.DataFrame:
    """Configuration pairs against a declared reference configuration, judged as
    compare.compare judges its own (for runs whose configurations all override
    something, so compare finds no 'no override' one: security-cost's NULL and CURVE)."""
    margin = judging.config_margin if judging.config_margin is not None else judging.margin
    index = {tuple(r[k] for k in compare.CELL): r for r in cells.to_dict("records")}
    at = compare.CELL.index("config")
    rows = []
    for key, cand in sorted(index.items()):
        ref = index.get(key[:at] + (reference,) + key[at + 1:]) if cand["config"] != reference else None
        if ref is None:
            continue
        judged = compare.compare_pair(cand, ref, margin, judging.confidence,
                                      pairable=judging.paired_configurations, looks=judging.looks)
        rows.append({**{k: cand[k] for k in compare.CELL}, "kind": "config", "reference": reference,
                     **judged})
    return pd.DataFrame(rows, columns=compare.COLUMNS)


def _result(c: Comparison, cmp: pd.DataFrame, cells: pd.DataFrame, judging: RunManifest) -> Result:
    m = judging.config_margin if c.kind == "configurations" and judging.config_margin is not None \
        else judging.margin
    if c.kind == "spread":
        return Result(c.name, c.kind, _title(c, cmp), m, spread=_spread(c, cells))
    if c.kind == "configurations" and c.reference is not None:
        cmp = declared_config_pairs(cells[cells["metric"].isin(c.metrics)], c.reference, judging)
    rows = _counts(c, cmp)
    return Result(c.name, c.kind, _title(c, cmp), m, rows, aa=_aa(rows, cmp, c) if c.kind == "aa" else {})


def quote(q: Quote, cmp: pd.DataFrame) -> str:
    """One comparison as a figure: ratio, interval, verdict, and how many pairs."""
    sel = select(cmp[cmp["kind"].isin(["library"]) & (cmp["metric"] == q.metric)], q.where, q.library)
    if len(sel) != 1:
        return "not measured in this run" if sel.empty else f"{len(sel)} comparisons match (ambiguous quote)"
    r = sel.iloc[0]
    ratio = f" ({1 + r['diff_pct'] / 100:.2f}x)" if q.metric.startswith("throughput") else \
        (" (latency, positive = faster)" if q.metric.startswith("lat") else "")
    basis = f"{int(r['n_cand'])} pairs" if r.get("test") == compare.PAIRED else \
        f"n {int(r['n_ref'])}/{int(r['n_cand'])}"
    return (f"{fmt.pct(r['diff_pct'], 1)}{ratio} {fmt.interval(r['ci_lo_pct'], r['ci_hi_pct'])}, "
            f"{r['verdict']}, {basis}")


def compute(spec: AnswerSpec | None, cmp: pd.DataFrame, cells: pd.DataFrame, manifest: RunManifest) -> Answer:
    """The answer of one run: its comparisons (compare.compare_run), its cells
    (compare.cell_table) and its manifest (run id, profile, how its verdicts are judged)."""
    spec = spec or answer_spec.DEFAULT
    results = tuple(_result(c, cmp, cells, manifest) for c in spec.comparisons)
    quotes = {q.name: quote(q, cmp) for q in spec.quotes}
    values = {"run": manifest.run_id, "profile": manifest.profile, **quotes,
              **{r.name: r.fields() for r in results}}
    return Answer(spec.sentence.format(**values), results, quotes, spec.source)
