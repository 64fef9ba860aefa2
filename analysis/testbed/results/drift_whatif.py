"""What the host-drift filter did, or would have done, to a run's verdicts.

The filter (`[run].speed_drift_tolerance`) leaves out every repetition whose host speed
reference moved by more than the tolerance within it. Issue 41: it removed data, not
noise (batch-sweep's drift_noise found configuration deviations flat across drift
bands), so the sweep no longer filters by default; it still records the reference,
and the report shows what a filter would have changed: how many repetitions it drops
and which verdicts move. A run that did filter gets the other side: its verdicts
without the filter.
"""
from __future__ import annotations

import pandas as pd

from testbed.records import counted
from testbed.records import speed_reference as speedref

from . import compare, fmt

WHAT_IF = (0.05, 0.10)   # tolerances shown for a run that filtered nothing
KEYS = ["kind", "run_id", "table", "pattern", "transport", "io_threads", "config", *compare.WHERE, "msg_size",
        "library", "reference", "metric"]


def _unfiltered(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(status=df["status"].replace(speedref.HOST_DRIFT, "ok"))


def _filtered(df: pd.DataFrame, pairs: list[dict], tolerance: float) -> tuple[pd.DataFrame, int]:
    """df with every repetition of a pair that drifted beyond `tolerance` marked host-drift;
    and how many block repetitions that is."""
    drifted = {(cid, int(ln["repetition"])) for ln in pairs if float(ln.get("drift", 0.0)) > tolerance
               for cid in ln.get("cell_ids") or []}
    reps = sum(1 for ln in pairs if float(ln.get("drift", 0.0)) > tolerance)
    base = _unfiltered(df)
    # a counting run's repetition is its own index, not a timed pair's: no drift filter applies
    hit = [(c, int(r)) in drifted and t != counted.COUNTING_TABLE
           for c, r, t in zip(base["cell_id"], base["repetition"], base["table"], strict=True)]
    mask = pd.Series(hit, index=base.index) & (base["status"] == "ok")
    return base.assign(status=base["status"].where(~mask, speedref.HOST_DRIFT)), reps


def _changes(a: pd.DataFrame, b: pd.DataFrame) -> dict:
    joined = a[KEYS + ["verdict"]].merge(b[KEYS + ["verdict"]], on=KEYS, how="inner", suffixes=("", "_b"))
    decided = ("FAST", "SLOW", "SAME")
    return {"compared": len(joined), "changed": int((joined["verdict"] != joined["verdict_b"]).sum()),
            "decided_a": int(joined["verdict"].isin(decided).sum()),
            "decided_b": int(joined["verdict_b"].isin(decided).sum()),
            "flipped": int(((joined["verdict"] == "FAST") & (joined["verdict_b"] == "SLOW")
                            | (joined["verdict"] == "SLOW") & (joined["verdict_b"] == "FAST")).sum())}


def rows(df: pd.DataFrame, cmp: pd.DataFrame, manifest, pairs: list[dict]) -> list[dict]:
    """One row per alternative: the filter at a tolerance (for a run without one), or no
    filter (for a run that had one); each against the run's own verdicts."""
    if not pairs or manifest is None or df.empty:
        return []
    out = []
    total = len(pairs)
    if manifest.speed_tolerance is not None:
        alt = compare.compare_run(_unfiltered(df), manifest)
        dropped = sum(1 for ln in pairs if ln.get("exclusion") == speedref.HOST_DRIFT)
        out.append({"what": "without the filter", "repetitions": f"{dropped} of {total} put back",
                    **_changes(cmp, alt)})
        return out
    for tol in WHAT_IF:
        filtered, reps = _filtered(df, pairs, tol)
        alt = compare.compare_run(filtered, manifest) if reps else cmp
        out.append({"what": f"filter at {100 * tol:g}%", "repetitions": f"{reps} of {total} dropped",
                    **_changes(cmp, alt)})
    return out


def section(df: pd.DataFrame, cmp: pd.DataFrame, manifest, pairs: list[dict]) -> list[str]:
    found = rows(df, cmp, manifest, pairs)
    if not found:
        return []
    table = [[r["what"], r["repetitions"], str(r["compared"]), str(r["changed"]), str(r["flipped"]),
              f"{r['decided_a']} -> {r['decided_b']}"] for r in found]
    return ["### What a drift filter does to these verdicts", "",
            "The verdicts above, against the same run judged with the host-drift filter changed: how many "
            "block repetitions it drops (or puts back), how many verdicts change, how many flip between FAST "
            "and SLOW, and the decided count (FAST, SLOW or SAME) before -> after.", "",
            fmt.md_table(["Alternative", "Repetitions", "Comparisons", "Verdicts changed", "FAST<->SLOW",
                          "Decided"], table), ""]
