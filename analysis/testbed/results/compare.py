"""Pairs of cells -> a ratio, its interval and a verdict: FAST, SLOW, SAME or AMBIGUOUS.

Three kinds of pair, all oriented so that a positive diff means "candidate is better":
  library: a library against the reference library (libzmq) in the same configuration;
  config:  a configuration against the reference configuration (no override), same library;
  aa:      the reference against an alias of itself (same build): pure noise, so every
           FAST or SLOW among them is a false call; the report counts them (calibration).

The verdict of a run's cells comes from decide.decide_repetitions() on the
repetitions: paired (repetition i of the candidate against repetition i of the
reference, run back to back in the interleaved schedule: libraries always, the
configurations of a workload point in runs that interleave them in blocks) when enough
repetitions pair up, else the two-sample test; the `test` column says which decided.
An adaptive run's verdict is the one of its last planned look, on the repetitions the
loop had then; a comparison it never looked at is NOT PLANNED (no verdict). Published
reports kept one figure per cell: a mean +/- std of n runs gives a Welch interval
(basis `summary`), judged by the same rule; a bare figure (basis `point`) has no
interval, so it can never be SAME and is FAST/SLOW only beyond POINT_THRESHOLD.

Latency is lower-is-better, so its diff is inverted: +10% means 10% faster.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as sps

from testbed.records import configs, counted, schema
from testbed.records.manifest import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    LookPlan,
    RunManifest,
    reference_library,
)
from testbed.stats import decide, stats

POINT_THRESHOLD = 0.05      # published single figures: no interval, so demand a larger gap
VERDICTS = list(decide.VERDICTS)
# A comparison an adaptive loop never looked at (it stopped before its first planned
# look): no verdict of the calibrated procedure exists, so none is shown or counted.
NOT_PLANNED = "NOT PLANNED"

SCOPE = ["source", "run_id", "experiment", "table"]
WHERE = ["placement", "process_model", "link"]   # where and how the cell ran
CELL = SCOPE + ["pattern", "transport", "msg_size", "io_threads", "config"] + WHERE + ["library", "metric"]

COLUMNS = ["kind", "source", "run_id", "experiment", "table", "pattern", "transport", "io_threads", "config",
           *WHERE, "msg_size", "metric", "library", "reference", "reference_of", "n_cand", "n_ref",
           "cand_median", "ref_median", "diff_pct", "ci_lo_pct", "ci_hi_pct", "p_value", "mde_pct", "verdict",
           "basis", "test", "stop_reason", "q_value"]
PAIRED, UNPAIRED = "paired", "unpaired"   # the test column of a comparison judged on repetitions

def reference_config(cells: pd.DataFrame) -> str | None:
    """The 'no override' configuration of these cells (records.configs: the rule the
    sweep's adaptive loop pairs configurations by)."""
    params = [c for c in cells.columns if c.startswith(schema.PARAM_PREFIX)]
    sets = {}
    for cfg, sub in cells.groupby("config", sort=True):
        sets[cfg] = configs.overrides((p, v) for p in params for v in sub[p].unique())
    return configs.reference_config(sets)


def cell_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and metric: the repetitions' values (sorted) and their summary."""
    ok = df[(df["status"] == "ok") & (df["metric"] != "")].copy()
    # Published tables may not say how many IO threads were used: 0 stands for unknown.
    ok["io_threads"] = ok["io_threads"].fillna(0).astype(int)
    ok["v"] = ok["value_precise"].where(ok["value_precise"].notna(), ok["value"])
    params = [c for c in ok.columns if c.startswith(schema.PARAM_PREFIX)]
    ok = ok.sort_values(CELL + ["v"], kind="mergesort")
    agg = {"v": list, "repetition": list, "spread": "first", "n_summarized": "first",
           "stop_reason": _last_nonempty, **{p: "first" for p in params}}
    cells = ok.groupby(CELL, sort=True).agg(agg).reset_index()
    cells["values"] = [np.asarray(v, dtype=float) for v in cells.pop("v")]
    cells["reps"] = [_by_repetition(src, r, v) for src, r, v in
                     zip(cells["source"], cells.pop("repetition"), cells["values"], strict=True)]
    summaries = [stats.summarize(v) for v in cells["values"]]
    for name in ("n", "median", "q1", "q3", "cv"):
        cells[name] = [getattr(x, name) for x in summaries]
    cells["n_summarized"] = cells["n_summarized"].fillna(1).astype(int)
    return cells


def _by_repetition(source: str, reps: list, values: np.ndarray) -> dict | None:
    """repetition index -> value for a run's cell (the key pairs it with the other
    library's same repetition); None where indices are missing or repeated (published
    tables: one figure per cell), so the cell is never paired."""
    if source != "run" or any(pd.isna(r) for r in reps) or len(set(reps)) != len(reps):
        return None
    return {int(r): float(v) for r, v in zip(reps, values, strict=True)}


def _last_nonempty(values) -> str:
    found = [v for v in values if v]
    return found[-1] if found else ""


def _key_text(*parts) -> str:
    return "|".join(str(p) for p in parts)


def _oriented(ratio: float, lo: float, hi: float, higher: bool) -> tuple[float, float, float]:
    """candidate/reference -> (diff, lo, hi) in %, positive = candidate better."""
    if not higher:
        ratio, lo, hi = 1 / ratio, 1 / hi, 1 / lo
    return 100 * (ratio - 1), 100 * (lo - 1), 100 * (hi - 1)


def _from_repetitions(cand: dict, ref: dict, higher: bool, margin: float, confidence: float, key: str,
                      pairable: bool) -> dict:
    try:
        d = _decide(cand, ref, higher, margin, confidence, stats.seed_for(key), pairable)
    except decide.TooFewSamples:
        need = decide.min_samples(confidence)
        return {"verdict": "AMBIGUOUS", "basis": f"n<{need}", **_point_diff(cand, ref, higher)}
    except ValueError:  # a zero or negative figure: no ratio to judge
        return {"verdict": "AMBIGUOUS", "basis": "invalid values", **_point_diff(cand, ref, higher)}
    diff, lo, hi = _oriented(d.ratio, d.low, d.high, higher)
    return {"diff_pct": diff, "ci_lo_pct": lo, "ci_hi_pct": hi, "p_value": d.p_value, "mde_pct": 100 * d.mde,
            "verdict": d.verdict, "basis": "interval",
            "test": PAIRED if d.method == decide.PAIRED_METHOD else UNPAIRED}


def _decide(cand: dict, ref: dict, higher: bool, margin: float, confidence: float, seed: int, pairable: bool):
    """Paired where both cells carry repetition indices (decide_repetitions falls back
    to the two-sample test below the paired minimum), two-sample otherwise."""
    if pairable and cand.get("reps") and ref.get("reps"):
        return decide.decide_repetitions(ref["reps"], cand["reps"], higher_is_better=higher, margin=margin,
                                         confidence=confidence, seed=seed)
    return decide.decide(ref["values"], cand["values"], higher_is_better=higher, margin=margin,
                         confidence=confidence, seed=seed)


def _point_diff(cand: dict, ref: dict, higher: bool) -> dict:
    ratio = cand["median"] / ref["median"] if ref["median"] else math.nan
    diff = 100 * ((ratio if higher else 1 / ratio) - 1) if ratio else math.nan
    return {"diff_pct": diff, "ci_lo_pct": math.nan, "ci_hi_pct": math.nan, "p_value": math.nan,
            "mde_pct": math.nan}


def _from_summaries(cand: dict, ref: dict, higher: bool, margin: float) -> dict:
    ratio, lo, hi, p, mde = stats.summary_ratio(cand["median"], cand["spread"], cand["n_summarized"],
                                                ref["median"], ref["spread"], ref["n_summarized"])
    diff, lo_pct, hi_pct = _oriented(ratio, lo, hi, higher)
    if lo <= 0:  # the interval reaches a non-positive ratio: nothing to judge
        return {"diff_pct": diff, "ci_lo_pct": math.nan, "ci_hi_pct": math.nan, "p_value": p,
                "mde_pct": 100 * mde, "verdict": "AMBIGUOUS", "basis": "summary"}
    return {"diff_pct": diff, "ci_lo_pct": lo_pct, "ci_hi_pct": hi_pct, "p_value": p, "mde_pct": 100 * mde,
            "verdict": decide.verdict(lo, hi, higher_is_better=higher, margin=margin), "basis": "summary"}


def _from_points(cand: dict, ref: dict, higher: bool) -> dict:
    out = _point_diff(cand, ref, higher)
    diff = out["diff_pct"] / 100
    verdict = "FAST" if diff > POINT_THRESHOLD else "SLOW" if diff < -POINT_THRESHOLD else "AMBIGUOUS"
    return {**out, "verdict": verdict, "basis": "point"}


def _summarized(cell: dict) -> bool:
    return cell["n"] == 1 and cell["n_summarized"] > 1 and not math.isnan(cell["spread"])


def planned(cand: dict, ref: dict, looks: LookPlan | None) -> tuple[dict, dict] | None:
    """The two cells cut to the repetitions of the loop's last look (None: it never
    looked). Without a plan (fixed designs, published tables) the cells as they are."""
    stop = cand.get("stop_reason") or ref.get("stop_reason") or ""
    if looks is None or not stop or not cand.get("reps") or not ref.get("reps"):
        return cand, ref
    shared = sorted(set(cand["reps"]) & set(ref["reps"]))
    last = looks.last_look(len(shared), stop)
    if last is None:
        return None
    if last == len(shared):
        return cand, ref
    cut = shared[last - 1]
    return _cut(cand, cut), _cut(ref, cut)


def _cut(cell: dict, cut: int) -> dict:
    reps = {r: v for r, v in cell["reps"].items() if r <= cut}
    values = np.sort(np.asarray(list(reps.values()), dtype=float))
    return {**cell, "reps": reps, "values": values, "n": len(values),
            "median": float(np.median(values)) if len(values) else math.nan}


def compare_pair(cand: dict, ref: dict, margin: float = DEFAULT_MARGIN,
                 confidence: float = DEFAULT_CONFIDENCE, pairable: bool = True,
                 looks: LookPlan | None = None) -> dict:
    """Diff, interval and verdict of one pair of cells (rows of cell_table).
    pairable: the two cells' repetitions of one index ran back to back (library and
    A/A pairs; configurations of a run whose blocks interleave them).
    looks: the adaptive design's plan: the verdict is the one of the loop's last look,
    on the repetitions it had; NOT PLANNED where it never looked."""
    higher = schema.metric(cand["metric"]).higher_is_better
    key = _key_text(*(cand[c] for c in CELL), ref["library"], ref["config"])
    out = {"n_cand": cand["n"], "n_ref": ref["n"], "cand_median": cand["median"], "ref_median": ref["median"],
           "stop_reason": cand["stop_reason"] or ref["stop_reason"]}
    published = str(cand["source"]).startswith("published")
    if published and _summarized(cand) and _summarized(ref):
        return {**out, **_from_summaries(cand, ref, higher, margin)}
    if published and cand["n"] == 1 and ref["n"] == 1:
        return {**out, **_from_points(cand, ref, higher)}
    cut = planned(cand, ref, looks)
    if cut is None:
        return {**out, "verdict": NOT_PLANNED, "basis": "not planned", **_point_diff(cand, ref, higher)}
    cand, ref = cut
    out.update(n_cand=cand["n"], n_ref=ref["n"])
    return {**out, **_from_repetitions(cand, ref, higher, margin, confidence, key, pairable)}


def _pairs(sc: pd.DataFrame, ref_lib: str | None, aliases: frozenset[str]):
    """(kind, candidate row, reference row, what the reference names) for every pair in
    one scope. The last is the field the two rows differ in, so the `reference` column
    says which: "library" (a library pair, or an A/A pair of the reference and its
    alias) or "config" (a configuration pair, or an A/A pair of two configurations that
    override nothing measurable)."""
    ref_cfg = reference_config(sc)
    index = {tuple(r[c] for c in CELL): r for r in sc.to_dict("records")}
    lib_at, cfg_at = CELL.index("library"), CELL.index("config")
    for key, cand in sorted(index.items()):
        if ref_lib and cand["library"] != ref_lib:
            ref = index.get(key[:lib_at] + (ref_lib,) + key[lib_at + 1:])
            if ref is not None:
                yield ("aa" if cand["library"] in aliases else "library"), cand, ref, "library"
        if ref_cfg and cand["config"] != ref_cfg:
            ref = index.get(key[:cfg_at] + (ref_cfg,) + key[cfg_at + 1:])
            if ref is not None:
                kind = "aa" if configs.aa_pair(_overrides(cand), _overrides(ref)) else "config"
                yield kind, cand, ref, "config"


def _overrides(cell: dict) -> frozenset:
    return configs.overrides((k, v) for k, v in cell.items() if k.startswith(schema.PARAM_PREFIX))


def compare(df: pd.DataFrame, aliases: frozenset[str] = frozenset(), margin: float = DEFAULT_MARGIN,
            metrics=None, reference: str | None = None, confidence: float = DEFAULT_CONFIDENCE,
            paired_configurations: bool = False, looks: LookPlan | None = None,
            config_margin: float | None = None, overall_confidence: float | None = None) -> pd.DataFrame:
    """Every library pair and configuration pair in the tidy table `df`, each verdict
    at `confidence` with SAME inside +/-margin (+/-config_margin for configuration
    pairs, where the run declared one). paired_configurations: the run ran the
    configurations of a workload point back to back (pair them by repetition); looks:
    its adaptive plan (only the verdicts of planned looks count). The counting runs'
    table (counted.COUNTING_TABLE) is a fixed design judged once, outside the loop's
    looks: at `overall_confidence` (the run's own) where given."""
    cells = cell_table(df)
    if cells.empty:
        return pd.DataFrame(columns=COLUMNS)
    cells = cells[cells["metric"].isin(list(metrics or schema.COMPARED_METRICS))]
    rows = []
    for scope, sc in cells.groupby(SCOPE, sort=True):
        if "lat_p50_us" in set(sc["metric"]):  # percentiles measured: the mean adds nothing
            sc = sc[sc["metric"] != "lat_mean_us"]
        counting = scope[SCOPE.index("table")] == counted.COUNTING_TABLE
        conf = (overall_confidence or confidence) if counting else confidence
        scope_looks = None if counting else looks
        ref_lib = reference if reference in set(sc["library"]) else reference_library(sc["library"])
        for kind, cand, ref, reference_of in _pairs(sc, ref_lib, aliases):
            ident = {c: cand[c] for c in CELL if c != "library"}
            across_configs = reference_of == "config"  # config pairs, and A/A configurations
            rows.append({**ident, "kind": kind, "library": cand["library"], "reference": ref[reference_of],
                         "reference_of": reference_of,
                         **compare_pair(cand, ref, decide.margin_for(kind, margin, config_margin), conf,
                                        pairable=not across_configs or paired_configurations,
                                        looks=scope_looks)})
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["q_value"] = q_values(out)
    order = ["kind", "source", "run_id", "table", "pattern", "transport", "io_threads", "config", *WHERE,
             "library", "metric", "msg_size"]
    return out.sort_values(order, kind="mergesort").reset_index(drop=True)


def q_values(cmp: pd.DataFrame) -> pd.Series:
    """Benjamini-Hochberg q-values of the comparisons judged on an interval, over each
    run (or published table) and kind of pair: the smallest false-discovery rate at
    which the comparison would count as a discovery. From each comparison's own p (at
    its last look; a p of a stopped adaptive loop is nominal, not corrected for the
    looks). NaN where there is no p."""
    out = pd.Series(np.nan, index=cmp.index, dtype=float)
    judged = cmp[(cmp["basis"] == "interval") & cmp["p_value"].notna()]
    for _, g in judged.groupby(["source", "run_id", "table", "kind"], sort=False):
        out.loc[g.index] = sps.false_discovery_control(g["p_value"].clip(0, 1).to_numpy(), method="bh")
    return out


def compare_run(df: pd.DataFrame, m: RunManifest) -> pd.DataFrame:
    """Compare a run's cells: its reference, A/A aliases, margin and confidence (the
    design's per-look confidence, as the sweep judged) from its manifest."""
    if not isinstance(m, RunManifest):
        raise TypeError(f"compare_run takes a RunManifest (RunDir.manifest), not {type(m).__name__}")
    return compare(df, m.aa_aliases, m.margin, reference=m.reference_label, confidence=m.confidence,
                   paired_configurations=m.paired_configurations, looks=m.looks,
                   config_margin=m.config_margin, overall_confidence=m.overall_confidence)


CALIBRATED_METRICS = ("throughput_msgs", "lat_p50_us")


def calibration(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Per metric: how many A/A comparisons there are, how many could be judged on
    repetitions (enough of them), and how many of those were called FAST or SLOW
    (false calls: both sides are one build). rate = false calls / judged."""
    aa = comparisons[comparisons["kind"] == "aa"]
    rows = []
    for metric in CALIBRATED_METRICS:
        g = aa[aa["metric"] == metric]
        judged = g[g["basis"] == "interval"]
        false = int(judged["verdict"].isin(["FAST", "SLOW"]).sum())
        rows.append({"metric": metric, "comparisons": len(g), "judged": len(judged), "false_calls": false,
                     "rate": false / len(judged) if len(judged) else math.nan})
    return pd.DataFrame(rows, columns=["metric", "comparisons", "judged", "false_calls", "rate"])


def side_by_side(a: pd.DataFrame, b: pd.DataFrame, label_a: str, label_b: str,
                 metric: str = "throughput_msgs", config_map: dict | None = None) -> pd.DataFrame:
    """Library comparisons of two analyses (two runs, or a run and a published report)
    joined on pattern, transport, size and configuration: did the verdict hold?
    config_map renames b's configurations onto a's (e.g. {"baseline": "no batch"})."""
    keys = ["pattern", "transport", "msg_size", "config"]
    cols = ["diff_pct", "ci_lo_pct", "ci_hi_pct", "verdict", "basis"]
    sel = []
    for df, label, mapping in ((a, label_a, None), (b, label_b, config_map)):
        d = df[(df["kind"] == "library") & (df["metric"] == metric)].copy()
        if mapping:
            d["config"] = d["config"].map(lambda c, mapping=mapping: mapping.get(c, c))
        sel.append(d[keys + cols].rename(columns={c: f"{c}_{label}" for c in cols}))
    out = sel[0].merge(sel[1], on=keys, how="inner")
    out["agree"] = out[f"verdict_{label_a}"] == out[f"verdict_{label_b}"]
    return out.sort_values(keys).reset_index(drop=True)
