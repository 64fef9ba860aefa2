"""Where an arms run's noise sits: between runs or between the rounds of a run.

For every block of an arms run directory (slices.jsonl + results.parquet), per
placement and kind (thr, lat p50): the spread across runs of the run's log ratio
(zlink against libzmq), and the standard error the run's own round pairs predict for
it. If runs differed only by their rounds' noise, the two would agree; the excess is
an offset each run carries (docs/design/2026-12-03-run-offsets.md).

    python docs/design/run_offsets.py results/scorecard-placements/<run>
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def _arm_value(s: dict, kind: str) -> float:
    return s["p50"] if kind == "lat" else s["count"] / s["receiver_seconds"]


def run_rows(run_dir: Path) -> pd.DataFrame:
    df = pd.read_parquet(run_dir / "results.parquet")
    cells = df.drop_duplicates("cell_id").set_index("cell_id")
    rows = []
    for line in (run_dir / "slices.jsonl").read_text().splitlines():
        r = json.loads(line)
        first = cells.loc[r["cell_ids"][0]]
        libs = [cells.loc[c].library for c in r["cell_ids"]]
        z, ref = libs.index("zlink"), 1 - libs.index("zlink")
        for kind in ("thr", "lat"):
            rounds = [x for x in r["rounds"] if x["kind"] == kind and not x["warmup"]]
            if not rounds:
                continue
            per = {0: [], 1: []}
            pairs = []
            for x in rounds:
                v = {s["arm"]: _arm_value(s, kind) for s in x["slices"]}
                per[0].append(v[0])
                per[1].append(v[1])
                # oriented so that positive means zlink is better
                pairs.append(math.log(v[ref] / v[z]) if kind == "lat" else math.log(v[z] / v[ref]))
            if kind == "lat":
                run = math.log(np.median(per[ref]) / np.median(per[z]))
            else:
                run = math.log(np.sum(per[z]) / np.sum(per[ref]))
            rows.append({"placement": first.placement, "kind": kind,
                         "cell": f"{first.pattern}/{first.transport}/{first.msg_size}",
                         "run": run, "round_se": np.std(pairs, ddof=1) / math.sqrt(len(pairs))})
    return pd.DataFrame(rows)


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    per_cell = rows.groupby(["placement", "kind", "cell"]).agg(
        runs=("run", "size"), run_sd=("run", "std"), round_se=("round_se", "median")).reset_index()
    out = per_cell.groupby(["placement", "kind"])[["run_sd", "round_se"]].median()
    out["excess"] = out.run_sd / out.round_se
    return out


if __name__ == "__main__":
    print(summary(run_rows(Path(sys.argv[1]))).round(3).to_string())
