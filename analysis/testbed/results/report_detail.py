"""The report's per-pattern detail: one table per transport and configuration (and
placement, process model or link where the run varies them), one row per size and
metric with the interval, verdict, MDE and n of each comparison, the share of the
host ceiling, the adaptive stop reason and the work per message beside them."""
from __future__ import annotations

import pandas as pd

from testbed.records import schema

from . import ceiling as ceil
from . import compare, fmt, report_ceiling
from .order import sort_patterns, transport_key
from .report_summary import varying

GROUP = ["transport", "io_threads", "config", *compare.WHERE, "library", "reference"]


def work_lookup(cells: pd.DataFrame) -> dict:
    """(cell identity without library, library, metric) -> median work per message."""
    work = cells[cells["metric"].isin(schema.WORK_METRICS)]
    keys = [c for c in compare.CELL if c not in ("library", "metric")]
    return {(tuple(r[k] for k in keys), r["library"], r["metric"]): r["median"]
            for r in work.to_dict("records")}


def _work_text(work: dict, r: dict, metric: str) -> str:
    keys = tuple(r[k] for k in compare.CELL if k not in ("library", "metric"))
    ref, cand = work.get((keys, r["reference"], metric)), work.get((keys, r["library"], metric))
    if ref is None or cand is None:
        return "-"
    return f"{ref:,.0f} / {cand:,.0f} ({cand / ref:.2f}x)"


def _ceiling_text(ctx: dict, r: dict) -> str:
    """The in-run probe's shares where this cell has one, else the run's ceiling.json."""
    in_run = [ceil.run_share(ctx.get("ceiling_run"), r, lib) for lib in (r["reference"], r["library"])]
    if any(in_run):
        return " / ".join(report_ceiling.share_text(e) for e in in_run)
    ceiling = ctx.get("ceiling")
    shares = [ceil.share(ceiling, r, r["metric"], v) for v in (r["ref_median"], r["cand_median"])]
    if all(s != s for s in shares):  # both NaN
        return "-"
    return " / ".join(fmt.share(s) + (" BROKEN" if s > 1 else "") for s in shares)


def _verdict_text(r: dict) -> str:
    if r["basis"] == "not planned":
        return "not planned"
    return r["verdict"] + ("" if r["basis"] == "interval" else f" ({r['basis']})")


def _columns(ctx: dict, cmp: pd.DataFrame, work: dict) -> list[tuple[str, callable]]:
    """(header, cell text) for the optional columns this report shows."""
    cols = []
    if ctx.get("ceiling") or (ctx.get("ceiling_run") or {}).get("cells"):
        cols.append(("% of ceiling (ref / cand)", lambda r: _ceiling_text(ctx, r)))
    if "test" in cmp and cmp["test"].isin([compare.PAIRED, compare.UNPAIRED]).any():
        cols.append(("Test", lambda r: r["test"] if isinstance(r["test"], str) and r["test"] else "-"))
    if "q_value" in cmp and cmp["q_value"].notna().any():
        cols.append(("q (BH)", lambda r: f"{r['q_value']:.3g}" if pd.notna(r["q_value"]) else "-"))
    if (cmp["stop_reason"] != "").any():
        cols.append(("Stop", lambda r: r["stop_reason"] or "-"))
    for metric, head in (("work_instructions_per_msg", "Instructions/msg ref / cand"),
                         ("work_cycles_per_msg", "Cycles/msg ref / cand")):
        if any(k[2] == metric for k in work):
            def text(r, m=metric):
                return _work_text(work, r, m) if r["metric"] == "throughput_msgs" else "-"
            cols.append((f"{head} (work per message, not speed)", text))
    return cols


def _row(r: dict, extra) -> list[str]:
    m = schema.metric(r["metric"])
    diff = fmt.pct(r["diff_pct"]) + ("" if m.higher_is_better else " (inv)")
    return [schema.kib(r["msg_size"]), m.label, fmt.value(r["ref_median"], r["metric"]),
            fmt.value(r["cand_median"], r["metric"]), diff, fmt.interval(r["ci_lo_pct"], r["ci_hi_pct"]),
            _verdict_text(r), fmt.pct(r["mde_pct"], 1).lstrip("+"), f"{r['n_ref']}/{r['n_cand']}"] \
        + [f(r) for _, f in extra]


def _heading(key: dict, shown: list[str]) -> str:
    extra = "" if key["config"] in ("", "default") else f" · {key['config']}"
    extra += f" · {key['io_threads']} IO threads" if key["io_threads"] else ""
    extra += "".join(f" · {c.replace('_', ' ')} {key[c] or '-'}" for c in shown)
    head = f"### Transport: {key['transport']}{extra}"
    return head + ("" if key["library"] == "zlink" else f" · {key['library']} vs {key['reference']}")


def _metric_order(s: pd.Series) -> pd.Series:
    """Sort key: sizes as they are, metrics in the report's order."""
    if s.name != "metric":
        return s
    return s.map(lambda v: schema.COMPARED_METRICS.index(v) if v in schema.COMPARED_METRICS else 99)


def detail(cmp: pd.DataFrame, cells: pd.DataFrame, figs: dict, out_dir, ctx: dict) -> list[str]:
    lines = []
    lib = cmp[cmp["kind"].isin(["library", "aa"])]
    shown, work = varying(cmp), work_lookup(cells)
    extra = _columns(ctx, lib, work)
    level = f"{100 * ctx.get('confidence', 0.95):.4g}%"
    header = ["Size", "Metric", "", "", "Diff (%)", f"{level} CI (%)", "Verdict", "MDE (%)", "n (ref/cand)"]
    for pattern in sort_patterns(set(lib["pattern"]) | set(figs)):
        lines += [f"## PATTERN: {pattern}", ""]
        for caption, svg in figs.get(pattern, []):
            lines += [f"![{pattern} {caption}]({svg.relative_to(out_dir).as_posix()})", ""]
        p = lib[lib["pattern"] == pattern]
        for key_t, g in sorted(p.groupby(GROUP), key=lambda kv: (transport_key(kv[0][0]),) + kv[0][1:]):
            key = dict(zip(GROUP, key_t))
            ordered = g.sort_values(["msg_size", "metric"], key=_metric_order)
            rows = [_row(r, extra) for r in ordered.to_dict("records")]
            head = header[:2] + [key["reference"], key["library"]] + header[4:] + [h for h, _ in extra]
            lines += [_heading(key, shown), "", fmt.md_table(head, rows), ""]
    return lines


def broken_ceiling(ctx: dict, cmp: pd.DataFrame) -> list[str]:
    """Cells above the run's ceiling.json (the in-run probe's are in report_ceiling)."""
    found = ceil.broken(ctx.get("ceiling"), cmp[cmp["kind"].isin(["library", "aa"])])
    if not found:
        return []
    rows = [[b["pattern"], b["transport"], schema.kib(b["msg_size"]), b["config"] or "-", b["library"],
             schema.metric(b["metric"]).label, fmt.share(b["share"])] for b in found]
    return ["## Broken ceiling", "",
            f"In {len(found)} cells a library went beyond the host ceiling measured for this run: the probe "
            "did not bound those cells (another process model, placement, message size or buffer policy), "
            "so their shares of the ceiling are not a bound and are marked BROKEN below.", "",
            fmt.md_table(["Pattern", "Transport", "Size", "Config", "Library", "Metric", "% of ceiling"],
                         rows), ""]
