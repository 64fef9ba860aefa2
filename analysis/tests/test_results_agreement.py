"""The second judge's comparison: a perf-tools run's library verdicts beside a bench
run's, matched cell by cell, with the call (agree, DISAGREE, differs, undecided)."""
from __future__ import annotations

import pandas as pd

from testbed.results import agreement


def row(pattern, transport, size, placement, metric, diff, verdict, lo=None, hi=None):
    return {"kind": "library", "pattern": pattern, "transport": transport, "msg_size": size,
            "placement": placement, "library": "zlink", "metric": metric, "diff_pct": diff,
            "ci_lo_pct": diff - 2 if lo is None else lo, "ci_hi_pct": diff + 2 if hi is None else hi,
            "verdict": verdict, "n_cand": 6}


def test_cells_are_matched_on_pattern_transport_size_and_placement_and_called():
    tools = pd.DataFrame([
        row("PUSH_PULL", "tcp", 64, "split", "throughput_msgs", -62.0, "SLOW"),
        row("PUSH_PULL", "tcp", 64, "one-core", "throughput_msgs", 40.0, "FAST"),
        row("PUSH_PULL", "ipc", 64, "one-core", "throughput_msgs", 1.0, "SAME"),
        row("REQ_REP", "tcp", 64, "one-core", "lat_mean_us", -90.0, "SLOW"),
        row("REQ_REP", "ipc", 65536, "split", "lat_mean_us", 4.0, "AMBIGUOUS"),
        row("PUSH_PULL", "inproc", 64, "free", "throughput_msgs", 5.0, "FAST"),  # no bench counterpart
    ])
    bench = pd.DataFrame([
        row("PUSH_PULL", "tcp", 64, "split", "throughput_msgs", 90.0, "FAST"),
        row("PUSH_PULL", "tcp", 64, "one-core", "throughput_msgs", 50.0, "FAST"),
        row("PUSH_PULL", "ipc", 64, "one-core", "throughput_msgs", 12.0, "FAST"),
        row("REQ_REP", "tcp", 64, "one-core", "lat_p50_us", 20.0, "FAST"),
        row("REQ_REP", "tcp", 64, "one-core", "lat_mean_us", 10.0, "FAST"),  # p50 is preferred
        row("REQ_REP", "ipc", 65536, "split", "lat_mean_us", 2.0, "AMBIGUOUS"),  # no p50: the mean
        row("PAIR", "tcp", 64, "one-core", "throughput_msgs", 80.0, "FAST"),  # no perf program
    ])
    table = agreement.agreement(tools, bench)
    calls = {(r.pattern, r.transport, r.msg_size, r.placement): (r.bench_metric, r.call)
             for r in table.itertuples()}
    assert calls == {
        ("PUSH_PULL", "ipc", 64, "one-core"): ("throughput_msgs", "differs (same direction)"),
        ("PUSH_PULL", "tcp", 64, "one-core"): ("throughput_msgs", "agree"),
        ("PUSH_PULL", "tcp", 64, "split"): ("throughput_msgs", "DISAGREE"),
        ("REQ_REP", "ipc", 65536, "split"): ("lat_mean_us", "undecided"),
        ("REQ_REP", "tcp", 64, "one-core"): ("lat_p50_us", "DISAGREE"),
    }
    text = agreement.markdown(table, "tools-run", "bench-run")
    assert ("| PUSH_PULL | tcp | 64 | split | zlink | thr -62.0% [-64.0, -60.0] SLOW | "
            "thr +90.0% [+88.0, +92.0] FAST | DISAGREE |") in text
    assert "mean lat -90.0%" in text and "p50 lat +20.0%" in text
    assert text.rstrip().endswith("Calls: DISAGREE 2, agree 1, differs (same direction) 1, undecided 1")


def test_the_call_of_one_decided_and_one_undecided_side_says_which_way():
    assert agreement.call("FAST", "SAME", 10.0, -1.0) == "differs"
    assert agreement.call("SLOW", "AMBIGUOUS", -10.0, -1.0) == "differs (same direction)"
    assert agreement.call("SAME", "SAME", 0.5, -0.5) == "agree"
    assert agreement.call("AMBIGUOUS", "SAME", 2.0, 0.0) == "undecided"


def test_no_common_cell_gives_an_empty_table_that_says_so():
    tools = pd.DataFrame([row("PUSH_PULL", "inproc", 64, "free", "throughput_msgs", 5.0, "FAST")])
    bench = pd.DataFrame([row("PAIR", "tcp", 64, "one-core", "throughput_msgs", 80.0, "FAST")])
    table = agreement.agreement(tools, bench)
    assert table.empty
    assert "(no cell measured by both runs)" in agreement.markdown(table, "a", "b")


def test_the_bench_runs_hwm_is_read_from_its_settings_and_named_when_not_the_default():
    def cell(settings, status="ok"):
        return {"status": status, "result": {"settings": settings} if status == "ok" else None}
    assert agreement.bench_hwm([cell({"hwm": 0}), cell({"hwm": 0}), cell({}, "failed")]) == "0"  # older runs
    assert agreement.bench_hwm([cell({"hwm": 1000, "hwm_requested": -1})]) == "library default"
    assert agreement.bench_hwm([cell({"hwm": 0, "hwm_requested": 0})]) == "0"
    assert agreement.bench_hwm([]) == "unknown"
    one = pd.DataFrame([row("PUSH_PULL", "tcp", 64, "split", "throughput_msgs", 1, "SAME")])
    table = agreement.agreement(one, one.copy())
    assert "The bench run's HWM was 0" in agreement.markdown(table, "a", "b", "0")
    assert "HWM" not in agreement.markdown(table, "a", "b", "library default")
