"""Where does a configuration's gain over its reference change sign along message size?

Only decisive cells (FAST or SLOW) count: a SAME or AMBIGUOUS cell neither confirms
nor breaks a trend. A flip lies between the last decisive cell of one sign and the
next decisive cell of the other; the crossover estimate interpolates the two diffs
linearly on log2(size), the axis on which these curves are roughly straight.

Between the two decisive cells there may be sizes where the gain is too small to
call: `edge` is the first size after the last decisive cell of the old sign, so a
reader sees both "stops helping by" (edge) and "hurts from" (flip_to).
"""
from __future__ import annotations

import math

import pandas as pd

from testbed.records import counted, schema
from testbed.records.manifest import is_reference_name

SERIES = ["kind", "source", "run_id", "table", "pattern", "transport", "io_threads", "config",
          "library", "reference", "metric"]
SAME_EVERYWHERE = "same at every size"
COLUMNS = SERIES + ["status", "n_sizes", "n_decisive", "flip_from", "edge", "flip_to", "crossover",
                    "direction", "n_flips", "decided", "answer", "sentence"]
DECIDED_VERDICTS = ("FAST", "SLOW", "SAME")
# The judges a row can come from: time (throughput) and counted work (records/counted.py):
# system calls per message where counting runs counted them (the cause batching changes),
# context switches per message (every timed arms run's) beside them, or alone.
SYSCALLS = counted.TRACEPOINT[0]
JUDGES = {"throughput_msgs": "wall clock", counted.HEADLINE: "counted work", SYSCALLS: "system calls"}
SWITCHES_BESIDE = "context switches"  # counted.HEADLINE's label where system calls judge


def _crossover(a: int, da: float, b: int, db: float) -> float:
    la, lb = math.log2(a), math.log2(b)
    return 2 ** (la + da / (da - db) * (lb - la))


def describe(series: dict) -> str:
    """'static 64 KiB batching' for a batch override, 'zlink (baseline)' for a library pair."""
    if series["kind"] == "config":
        return f"{series['config']} over {series['reference']} ({series['library']})"
    cfg = "" if series["config"] in ("", "default") else f" with {series['config']}"
    return f"{series['library']}{cfg} over {series['reference']}"


def _sentence(series: dict, status: str, flips: list[tuple]) -> str:
    what = describe(series)
    where = f"on {series['transport']} {series['pattern']}"
    metric = schema.metric(series["metric"]).label.lower()
    if status == "no decisive cells":
        return f"{what} {where}: no size shows a decisive {metric} difference."
    if status == SAME_EVERYWHERE:
        return f"{what} {where}: SAME {metric} at every size, so no crossover (decided)."
    if status in ("always helps", "always hurts"):
        verb = "helps" if status == "always helps" else "hurts"
        return f"{what} {verb} at every decisive size {where} ({metric})."
    parts = []
    for a, edge, b, x, sign in flips:
        first, then = ("helps", "hurts") if sign > 0 else ("hurts", "helps")
        stop = "" if edge == b else f", stops {first[:-1]}ing by ~{schema.kib(edge)}"
        parts.append(f"{first} up to ~{schema.kib(a)}{stop} and {then} from ~{schema.kib(b)} "
                     f"(crossover ~{schema.kib(x)})")
    return f"{what} " + "; then ".join(parts) + f" {where} ({metric})."


def series_inflection(rows: pd.DataFrame) -> dict:
    """rows: one series' comparisons. Returns status, flip interval and sentence."""
    rows = rows.sort_values("msg_size")
    first = rows.iloc[0]
    series = {k: first[k] for k in SERIES}
    decisive = rows[rows["verdict"].isin(["FAST", "SLOW"])]
    sizes = [int(s) for s in rows["msg_size"]]
    flips = []
    prev = None
    for _, r in decisive.iterrows():
        if prev is not None and (prev["diff_pct"] > 0) != (r["diff_pct"] > 0):
            x = _crossover(int(prev["msg_size"]), prev["diff_pct"], int(r["msg_size"]), r["diff_pct"])
            a = int(prev["msg_size"])
            edge = sizes[sizes.index(a) + 1]
            flips.append((a, edge, int(r["msg_size"]), x, 1 if prev["diff_pct"] > 0 else -1))
        prev = r
    if decisive.empty and set(rows["verdict"]) == {"SAME"}:
        status = SAME_EVERYWHERE   # equivalence decided at every size: a decided "no crossover"
    elif decisive.empty:
        status = "no decisive cells"
    elif not flips:
        status = "always helps" if decisive["diff_pct"].iloc[0] > 0 else "always hurts"
    else:
        status = "flip"
    f0 = flips[0] if flips else (None, None, None, math.nan, 0)
    decided, answer = _answer(rows, flips)
    return {**series, "status": status, "n_sizes": len(rows), "n_decisive": len(decisive),
            "flip_from": f0[0], "edge": f0[1], "flip_to": f0[2], "crossover": f0[3],
            "direction": {1: "helps->hurts", -1: "hurts->helps", 0: ""}[f0[4]],
            "n_flips": len(flips), "decided": decided, "answer": answer,
            "sentence": _sentence(series, status, flips)}


def _answer(rows: pd.DataFrame, flips: list[tuple]) -> tuple[bool, str]:
    """(decided, answer) of one row: a crossover where two decisive cells of opposite
    sign bracket one (decided evidence of a sign change), a decided "none" where every
    size is decided (FAST, SLOW or SAME) and no sign changes; else undecided (an
    undecided size could hide a crossover)."""
    if flips:
        return True, "; ".join(f"~{schema.kib(x)}" for _, _, _, x, _ in flips)
    if len(rows) and rows["verdict"].isin(DECIDED_VERDICTS).all():
        return True, "none"
    return False, "undecided"


def inflections(
    comparisons: pd.DataFrame, metrics=tuple(JUDGES), kinds=("config", "library")
) -> pd.DataFrame:
    sel = comparisons[comparisons["metric"].isin(metrics) & comparisons["kind"].isin(kinds)]
    rows = [series_inflection(g) for _, g in sel.groupby(SERIES, sort=True)]
    out = pd.DataFrame(rows, columns=COLUMNS)
    # Pairs of identical builds (libzmq under two configurations) are not experiments.
    return out[
        ~((out["kind"] == "config") & out["library"].map(is_reference_name).astype(bool))
    ].reset_index(drop=True)


def best_config(comparisons: pd.DataFrame, metric: str = "throughput_msgs") -> pd.DataFrame:
    """Per series and size, what a size-adaptive policy should pick: the override with
    the largest decisive gain over no override, or no override when none is decisive."""
    cfg = comparisons[(comparisons["kind"] == "config") & (comparisons["metric"] == metric)
                      & ~comparisons["library"].map(is_reference_name).astype(bool)]
    keys = [
        "source",
        "run_id",
        "table",
        "pattern",
        "transport",
        "io_threads",
        "library",
        "reference",
        "msg_size",
    ]
    rows = []
    for key, g in cfg.groupby(keys, sort=True):
        fast = g[g["verdict"] == "FAST"].sort_values(["diff_pct", "config"], ascending=[False, True])
        row = dict(zip(keys, key))
        if fast.empty:
            row.update(
                best=row["reference"], gain_pct=0.0, verdict="", considered=", ".join(sorted(g["config"]))
            )
        else:
            b = fast.iloc[0]
            row.update(best=b["config"], gain_pct=b["diff_pct"], verdict=b["verdict"],
                       considered=", ".join(sorted(g["config"])))
        rows.append(row)
    return pd.DataFrame(rows, columns=keys + ["best", "gain_pct", "verdict", "considered"])


def policy_sentence(best: pd.DataFrame) -> list[str]:
    """One sentence per series: the size ranges each configuration should own."""
    out = []
    for key, g in best.groupby(
        ["source", "run_id", "table", "pattern", "transport", "io_threads", "library"], sort=True
    ):
        g = g.sort_values("msg_size")
        runs = []
        for _, r in g.iterrows():
            if runs and runs[-1][0] == r["best"]:
                runs[-1][2] = r["msg_size"]
            else:
                runs.append([r["best"], r["msg_size"], r["msg_size"]])
        spans = [
            f"{b} for {schema.kib(lo)}" + (f"-{schema.kib(hi)}" if hi != lo else "") for b, lo, hi in runs
        ]
        out.append(f"{key[6]} on {key[4]} {key[3]}: " + ", ".join(spans) + ".")
    return out
