"""Pairs of cells -> a ratio, its interval and a verdict: FAST, SLOW, SAME or AMBIGUOUS.

Two kinds of pair, both oriented so that a positive diff means "candidate is better":
  library: a library against the reference library (libzmq) in the same configuration;
  config:  a configuration against the reference configuration (no override), same library.
A third kind, aa, is the reference against an alias of itself (the noise-floor
experiment): its differences are pure noise, and they set the smallest difference
other pairs must exceed to be called (the noise floor).

Latency is lower-is-better, so its ratio is inverted: +10% means 10% faster.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import schema, stats

DEFAULT_MIN_EFFECT = 0.03   # never call a difference below 3%, with or without a noise floor
POINT_THRESHOLD = 0.05      # published single figures: no interval, so demand a larger gap
ALPHA = 0.05
VERDICTS = ["FAST", "SLOW", "SAME", "AMBIGUOUS"]

SCOPE = ["source", "run_id", "experiment", "table"]
CELL = SCOPE + ["pattern", "transport", "msg_size", "io_threads", "config", "library", "metric"]

COLUMNS = ["kind", "source", "run_id", "experiment", "table", "pattern", "transport", "io_threads",
           "config", "msg_size", "metric", "library", "reference", "n_cand", "n_ref", "cand_median",
           "ref_median", "diff_pct", "ci_lo_pct", "ci_hi_pct", "p_value", "threshold_pct",
           "verdict", "basis"]


def is_reference_name(library: str) -> bool:
    return library.lower().startswith("libzmq")


def reference_library(libraries) -> str | None:
    refs = sorted((lib for lib in set(libraries) if is_reference_name(lib)), key=lambda s: (len(s), s))
    return refs[0] if refs else None


def _label(lib: dict) -> str | None:
    return lib.get("label") or lib.get("name")


def manifest_reference(manifest: dict) -> str | None:
    """The reference library's label as the runner recorded it, else by name."""
    if isinstance(manifest.get("reference"), str):
        return manifest["reference"]
    libs = [l for l in manifest.get("libraries") or [] if isinstance(l, dict)]
    return reference_library(n for n in map(_label, libs) if n)


def aa_aliases(manifest: dict) -> frozenset[str]:
    """Labels that are the reference build under another name (same build_id): the
    A/A pairs of a noise-floor experiment."""
    libs = [l for l in manifest.get("libraries") or [] if isinstance(l, dict)]
    ref = manifest_reference(manifest)
    ref_build = next((l.get("build_id") for l in libs if _label(l) == ref), None)
    if not ref_build:
        return frozenset()
    return frozenset(_label(l) for l in libs if _label(l) != ref and l.get("build_id") == ref_build)


def reference_config(cells: pd.DataFrame) -> str | None:
    """The configuration whose parameter overrides are a subset of every other's
    (the 'no override' run), if exactly one such configuration exists."""
    params = [c for c in cells.columns if c.startswith(schema.PARAM_PREFIX)]
    configs = sorted(cells["config"].unique())
    if len(configs) < 2:
        return None
    sets = {}
    for cfg in configs:
        sub = cells[cells["config"] == cfg]
        sets[cfg] = {(p, v) for p in params for v in sub[p].unique() if v not in ("", "unset")}
    roots = [c for c in configs if all(sets[c] <= sets[o] for o in configs)]
    roots = [c for c in roots if not any(sets[c] == sets[o] for o in configs if o != c)]
    return roots[0] if len(roots) == 1 else None


def cell_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and metric: the repetitions' values (sorted) and their summary."""
    ok = df[(df["status"] == "ok") & (df["metric"] != "")].copy()
    # Published tables may not say how many IO threads were used: 0 stands for unknown.
    ok["io_threads"] = ok["io_threads"].fillna(0).astype(int)
    ok["v"] = ok["value_precise"].where(ok["value_precise"].notna(), ok["value"])
    params = [c for c in ok.columns if c.startswith(schema.PARAM_PREFIX)]
    ok = ok.sort_values(CELL + ["v"], kind="mergesort")
    agg = {"v": list, "spread": "first", "n_summarized": "first", **{p: "first" for p in params}}
    cells = ok.groupby(CELL, sort=True).agg(agg).reset_index()
    cells["values"] = [np.asarray(v, dtype=float) for v in cells.pop("v")]
    summaries = [stats.summarize(v) for v in cells["values"]]
    for name in ("n", "median", "q1", "q3", "cv"):
        cells[name] = [getattr(x, name) for x in summaries]
    cells["n_summarized"] = cells["n_summarized"].fillna(1).astype(int)
    return cells


def _key_text(*parts) -> str:
    return "|".join(str(p) for p in parts)


def _verdict(diff: float, lo: float, hi: float, p: float, t: float) -> str:
    """FAST/SLOW: the interval excludes no-change, Mann-Whitney agrees, and the gain is
    beyond the threshold. SAME: the gain is within the threshold and the interval rules
    out anything beyond twice the threshold (with 5 runs the interval of a median is
    wide; demanding it inside +/-t would call even A/A runs ambiguous). Otherwise the
    data cannot tell: AMBIGUOUS."""
    if lo > 0 and p < ALPHA and diff > t:
        return "FAST"
    if hi < 0 and p < ALPHA and diff < -t:
        return "SLOW"
    if abs(diff) <= t and -2 * t <= lo and hi <= 2 * t:
        return "SAME"
    return "AMBIGUOUS"


def compare_pair(cand: dict, ref: dict) -> dict:
    """Diff and interval of one pair of cells (rows of cell_table); no verdict yet."""
    higher = schema.metric(cand["metric"]).higher_is_better
    key = _key_text(*(cand[c] for c in CELL), ref["library"], ref["config"])
    out = {"n_cand": cand["n"], "n_ref": ref["n"], "cand_median": cand["median"], "ref_median": ref["median"]}
    both_summarized = cand["n"] == 1 and ref["n"] == 1 and cand["n_summarized"] > 1 and ref["n_summarized"] > 1 \
        and not math.isnan(cand["spread"]) and not math.isnan(ref["spread"])
    if cand["n"] >= 3 and ref["n"] >= 3:
        ratio, lo, hi = stats.bootstrap_ratio(cand["values"], ref["values"], key)
        p = stats.mann_whitney_p(cand["values"], ref["values"])
        basis = "interval"
    elif both_summarized:
        ratio, lo, hi, p = stats.summary_ratio(cand["median"], cand["spread"], cand["n_summarized"],
                                               ref["median"], ref["spread"], ref["n_summarized"])
        basis = "summary"
    else:
        ratio = cand["median"] / ref["median"]
        lo = hi = p = math.nan
        basis = "point"
    if not higher:  # lower is better: invert so that > 1 means faster
        ratio, lo, hi = 1 / ratio, (1 / hi if hi else math.nan), (1 / lo if lo else math.nan)
    diff = ratio - 1
    out.update(diff_pct=100 * diff, ci_lo_pct=100 * (lo - 1), ci_hi_pct=100 * (hi - 1), p_value=p, basis=basis)
    return out


def verdict(row, threshold: float) -> tuple[str, float]:
    """(verdict, threshold used) of one comparison row."""
    diff = row["diff_pct"] / 100
    if row["basis"] == "point":
        t = max(threshold, POINT_THRESHOLD)
        return ("FAST" if diff > t else "SLOW" if diff < -t else "SAME"), t
    return _verdict(diff, row["ci_lo_pct"] / 100, row["ci_hi_pct"] / 100, row["p_value"], threshold), threshold


def apply_verdicts(comparisons: pd.DataFrame, noise_floor: dict | None = None,
                   min_effect: float = DEFAULT_MIN_EFFECT) -> pd.DataFrame:
    out = comparisons.copy()
    res = [verdict(r, _threshold(noise_floor, r["transport"], r["metric"], min_effect))
           for r in out.to_dict("records")]
    out["verdict"] = [v for v, _ in res]
    out["threshold_pct"] = [100 * t for _, t in res]
    return out


def _threshold(noise_floor: dict | None, transport: str, metric: str, min_effect: float) -> float:
    floor = (noise_floor or {}).get((transport, metric), 0.0)
    return max(min_effect, floor)


def compare(df: pd.DataFrame, aliases: frozenset[str] = frozenset(), noise_floor: dict | None = None,
            min_effect: float = DEFAULT_MIN_EFFECT, metrics=None, reference: str | None = None) -> pd.DataFrame:
    """Every library pair and configuration pair in the tidy table `df`."""
    cells = cell_table(df)
    if cells.empty:
        return pd.DataFrame(columns=COLUMNS)
    metrics = list(metrics or schema.COMPARED_METRICS)
    cells = cells[cells["metric"].isin(metrics)]
    rows = []
    for scope, sc in cells.groupby(SCOPE, sort=True):
        if "lat_p50_us" in set(sc["metric"]):  # percentiles measured: the mean adds nothing
            sc = sc[sc["metric"] != "lat_mean_us"]
        ref_lib = reference if reference in set(sc["library"]) else reference_library(sc["library"])
        ref_cfg = reference_config(sc)
        index = {tuple(r[c] for c in CELL): r for r in sc.to_dict("records")}
        for key, cand in sorted(index.items()):
            (_, _, _, _, pattern, transport, size, io, config, library, metric) = key
            base = dict(zip(SCOPE, scope), pattern=pattern, transport=transport, io_threads=io,
                        msg_size=size, metric=metric)
            if ref_lib and library != ref_lib:
                ref = index.get(key[:9] + (ref_lib, metric))
                if ref is not None:
                    kind = "aa" if library in aliases else "library"
                    rows.append({**base, "kind": kind, "config": config, "library": library,
                                 "reference": ref_lib, **compare_pair(cand, ref)})
            if ref_cfg and config != ref_cfg:
                ref = index.get(key[:8] + (ref_cfg, library, metric))
                if ref is not None:
                    rows.append({**base, "kind": "config", "config": config, "library": library,
                                 "reference": ref_cfg, **compare_pair(cand, ref)})
    out = apply_verdicts(pd.DataFrame(rows, columns=COLUMNS), noise_floor, min_effect)
    return out.sort_values(["kind", "source", "run_id", "table", "pattern", "transport", "io_threads",
                            "config", "library", "metric", "msg_size"], kind="mergesort").reset_index(drop=True)


def noise_floor(comparisons: pd.DataFrame) -> dict:
    """(transport, metric) -> the largest |diff| the A/A pairs showed. A difference of
    that size happened between two identical libraries, so it proves nothing."""
    aa = comparisons[comparisons["kind"] == "aa"]
    return {k: float(g["diff_pct"].abs().max()) / 100 for k, g in aa.groupby(["transport", "metric"])}


def compare_run(df: pd.DataFrame, manifest: dict, extra_floor: dict | None = None,
                min_effect: float = DEFAULT_MIN_EFFECT) -> tuple[pd.DataFrame, dict]:
    """Compare a run, using the noise floor of its own A/A pairs and of a referenced
    noise-floor run (extra_floor), whichever is larger per transport and metric."""
    first = compare(df, aa_aliases(manifest), None, min_effect, reference=manifest_reference(manifest))
    floor = dict(extra_floor or {})
    for k, v in noise_floor(first).items():
        floor[k] = max(floor.get(k, 0.0), v)
    return apply_verdicts(first, floor, min_effect), floor


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
            d["config"] = d["config"].map(lambda c: mapping.get(c, c))
        sel.append(d[keys + cols].rename(columns={c: f"{c}_{label}" for c in cols}))
    out = sel[0].merge(sel[1], on=keys, how="inner")
    out["agree"] = out[f"verdict_{label_a}"] == out[f"verdict_{label_b}"]
    return out.sort_values(keys).reset_index(drop=True)
