"""Does the host speed reference's drift within a pair predict how far that pair strays?

A `speed_drift_tolerance` excludes every pair whose reference moved by more than the
tolerance between its start and its end (sweep/speedref.py). That is worth its cost
(the excluded pairs are measured again, or lost to the budget) only if drifted pairs
are noisier than the rest. This module measures it on a run's own data: for each
comparison (a library against the reference library in one configuration, or a
configuration against the default one for one library) and each repetition, the
deviation of that pair's log ratio from the comparison's median log ratio, grouped by
the pair's drift. Flat deviations across the drift bands mean the filter removes
pairs, not noise (issue 32: batch-sweep 9c7e, experiments/batch-sweep/README.md).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import compare

BANDS = (0.0, 0.01, 0.03, 0.05, 0.10, math.inf)   # drift band edges (0.05 = 5%)
METRICS = ("throughput_msgs", "lat_p50_us")
USABLE = ("ok", "host-drift")   # a drifted pair was measured; only the verdicts leave it out


def _drift_of(pairs: list[dict]) -> dict[tuple[str, int], float]:
    """(cell id, repetition) -> the drift of the pair it ran in."""
    out = {}
    for ln in pairs:
        for cid in ln.get("cell_ids") or []:
            out[(cid, int(ln["repetition"]))] = float(ln.get("drift", 0.0))
    return out


def deviations(df: pd.DataFrame, pairs: list[dict], reference_library: str) -> pd.DataFrame:
    """One row per (comparison, repetition): kind, metric, drift and deviation (absolute
    log-ratio distance from the comparison's median)."""
    drift = _drift_of(pairs)
    d = df[df["status"].isin(USABLE) & df["metric"].isin(METRICS)].copy()
    if d.empty:
        return pd.DataFrame(columns=["kind", "metric", "drift", "deviation"])
    d["drift"] = [drift.get((c, int(r)), np.nan) for c, r in zip(d["cell_id"], d["repetition"])]
    scope = ["pattern", "transport", "msg_size", "io_threads", "placement", "process_model", "link", "metric"]
    ref_config = compare.reference_config(d)
    rows = []
    for key, sc in d.groupby(scope, dropna=False):
        for kind, fixed, varied, ref in (("library", "config", "library", reference_library),
                                         ("config", "library", "config", ref_config)):
            for _, g in sc.groupby(fixed):
                wide = g.pivot_table(index="repetition", columns=varied, values="value", aggfunc="last")
                dr = g.groupby("repetition")["drift"].max()
                if ref not in wide:
                    continue
                for cand in (c for c in wide.columns if c != ref):
                    logr = np.log(wide[cand] / wide[ref]).dropna()
                    if len(logr) < 3:
                        continue
                    dev = (logr - logr.median()).abs()
                    rows += [{"kind": kind, "metric": key[-1], "drift": dr.get(rep, np.nan),
                              "deviation": v} for rep, v in dev.items()]
    return pd.DataFrame(rows, columns=["kind", "metric", "drift", "deviation"])


def by_band(dev: pd.DataFrame, bands=BANDS) -> pd.DataFrame:
    """Per kind, metric and drift band: pairs, median and 90th percentile deviation (%)."""
    d = dev.dropna(subset=["drift"]).copy()
    d["band"] = pd.cut(d["drift"], list(bands), right=False,
                       labels=[f"{100 * lo:g}-{100 * hi:g}%" for lo, hi in zip(bands, bands[1:])])
    out = (d.groupby(["kind", "metric", "band"], observed=True)["deviation"]
           .agg(pairs="count", median=lambda s: 100 * s.median(), p90=lambda s: 100 * s.quantile(0.9)))
    return out.reset_index()
