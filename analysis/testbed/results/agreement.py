"""Two judges of one question: a perf-tools run (libzmq's own perf programs on each
library's libzmq.so.5) beside a bench run (the testbed's harness: scorecard,
split-cores, ...). For every cell both measured, the candidate's diff, interval and
verdict from each, and whether they agree on the direction.

Cells correspond when pattern, transport, size and placement match: PUSH_PULL
throughput (local_thr/remote_thr, inproc_thr) against the bench's PUSH_PULL
throughput; REQ_REP latency (the programs' mean, RTT/2) against the bench's REQ_REP
p50 latency (its mean where it measured no percentiles). What the two harnesses do
differently, and so what a disagreement may come from, is listed in
experiments/perf-tools/README.md.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from testbed.records.run_dir import RunDir

from . import compare, load

KEYS = ["pattern", "transport", "msg_size", "placement"]
# perf-tools metric -> the bench metrics it is compared with, preferred first.
COUNTERPART = {"throughput_msgs": ("throughput_msgs",), "lat_mean_us": ("lat_p50_us", "lat_mean_us")}
DECIDED = ("FAST", "SLOW")
WHAT = {"throughput_msgs": "thr", "lat_p50_us": "p50 lat", "lat_mean_us": "mean lat"}


def library_comparisons(run_dir: Path) -> pd.DataFrame:
    run = RunDir.open(run_dir)
    cmp = compare.compare_run(load.load_run(run), run.manifest)
    return cmp[cmp["kind"] == "library"].copy()


def _bench_side(bench: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: the preferred counterpart metric of each perf-tools metric."""
    rows = []
    for tools_metric, choices in COUNTERPART.items():
        for _, cell in bench.groupby(KEYS + ["library"]):
            found = next((cell[cell["metric"] == m] for m in choices if (cell["metric"] == m).any()), None)
            if found is not None:
                rows.append(found.iloc[0].to_dict() | {"tools_metric": tools_metric})
    return pd.DataFrame(rows)


def call(tools_verdict: str, bench_verdict: str, tools_diff: float, bench_diff: float) -> str:
    """agree (the same FAST/SLOW, or both SAME) | DISAGREE (decided opposite ways) |
    differs (one decided FAST/SLOW, the other not; "same direction" when their diffs
    share a sign) | undecided (neither FAST/SLOW and not both SAME)."""
    if tools_verdict in DECIDED and bench_verdict in DECIDED:
        return "agree" if tools_verdict == bench_verdict else "DISAGREE"
    if tools_verdict == bench_verdict == "SAME":
        return "agree"
    if tools_verdict not in DECIDED and bench_verdict not in DECIDED:
        return "undecided"
    same_sign = (tools_diff > 0) == (bench_diff > 0)
    return "differs" if not same_sign else "differs (same direction)"


def agreement(tools: pd.DataFrame, bench: pd.DataFrame) -> pd.DataFrame:
    """One row per cell measured by both: each side's metric, diff (positive = the
    candidate better), interval and verdict, and the call."""
    tools = tools[tools["metric"].isin(list(COUNTERPART))]
    bench = _bench_side(bench)
    if tools.empty or bench.empty:
        return pd.DataFrame(columns=[*KEYS, "library", "tools_metric", "bench_metric", "call"])
    cols = ["metric", "diff_pct", "ci_lo_pct", "ci_hi_pct", "verdict", "n_cand"]
    left = tools[KEYS + ["library"] + cols].rename(columns={c: f"tools_{c}" for c in cols})
    right = bench[KEYS + ["library", "tools_metric"] + cols].rename(columns={c: f"bench_{c}" for c in cols})
    joined = left.merge(right, on=[*KEYS, "library", "tools_metric"], how="inner")
    joined["call"] = [call(r.tools_verdict, r.bench_verdict, r.tools_diff_pct, r.bench_diff_pct)
                      for r in joined.itertuples()]
    return joined.sort_values([*KEYS, "library"]).reset_index(drop=True)


def _side(r, side: str) -> str:
    diff, lo, hi = (getattr(r, f"{side}_{k}") for k in ("diff_pct", "ci_lo_pct", "ci_hi_pct"))
    interval = f" [{lo:+.1f}, {hi:+.1f}]" if pd.notna(lo) and pd.notna(hi) else ""
    return f"{diff:+.1f}%{interval} {getattr(r, f'{side}_verdict')}"


def bench_hwm(cells: list[dict]) -> str:
    """The HWM a bench run's cells asked for, from the settings each bench reported:
    `library default` where it set none (hwm_requested -1); runs older than that field
    report the HWM they set (the published scorecards: 0, unlimited)."""
    seen = set()
    for c in cells:
        settings = (c.get("result") or {}).get("settings") or {}
        if c.get("status") == "ok" and settings:
            asked = settings.get("hwm_requested", settings.get("hwm"))
            seen.add("library default" if asked == -1 else str(asked))
    return ", ".join(sorted(seen)) or "unknown"


def markdown(table: pd.DataFrame, tools_name: str, bench_name: str, hwm: str = "unknown") -> str:
    note = "" if hwm == "library default" else \
        f" The bench run's HWM was {hwm}, the perf programs run at the library default (1000): another " \
        "flow-control regime, a cause of disagreement on its own."
    lines = [f"Candidate against libzmq: perf-tools run `{tools_name}` and bench run `{bench_name}`. "
             "Diff positive = the candidate is better (latency inverted); [interval]; verdict." + note, "",
             "| pattern | transport | size | placement | library | perf tools | bench | call |",
             "|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        tools_what = WHAT[r.tools_metric]
        bench_what = WHAT[r.bench_metric]
        lines.append(f"| {r.pattern} | {r.transport} | {r.msg_size} | {r.placement} | {r.library} | "
                     f"{tools_what} {_side(r, 'tools')} | {bench_what} {_side(r, 'bench')} | {r.call} |")
    if table.empty:
        lines.append("| (no cell measured by both runs) | | | | | | | |")
    counts = table["call"].value_counts().to_dict() if not table.empty else {}
    lines += ["", "Calls: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none")]
    return "\n".join(lines) + "\n"
