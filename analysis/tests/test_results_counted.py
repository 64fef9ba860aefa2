"""Issue 41's answers beside the timings: counted work judged like them (and where the two
judges disagree), equivalence bounds where no verdict is decided, a decided "none" or a
crossover per inflection row, and what a drift filter would have done to a run."""
from __future__ import annotations

import json

import pandas as pd

from fixtures.factory import add_speed_reference, group_id, make_run, tidy_pair
from testbed.records import counted
from testbed.records.run_dir import RunDir
from testbed.results import compare, drift_whatif, inflection, load, report_summary


def test_counted_values_are_per_message_with_one_event_added():
    totals = {"syscalls": 499.0, "page_faults": 0.0, "task_clock_ns": 2e6}
    result = {"counted": {"messages": 1000, "bytes": 1024000, "totals": totals, "data_syscalls": 399.0}}
    v = counted.values(result)
    assert v["cw_syscalls_per_msg"] == 0.5 and v["cw_page_faults_per_msg"] == 0.001
    assert v["cw_bytes_per_syscall"] == 1024000 / 400 and v["cw_task_clock_ns_per_msg"] == 2000.0
    assert "cw_context_switches_per_msg" not in v  # not counted: never read as 0
    assert "cw_voluntary_switches_per_msg" not in v
    switches = {"context_switches": 300.0, "voluntary_context_switches": 120.0}
    v = counted.values({"counted": {"messages": 1000, "totals": switches}})
    # judged: one event added; shown: the exact rate
    assert v["cw_context_switches_per_msg"] == 0.301 and v["cw_voluntary_switches_per_msg"] == 0.12
    assert counted.values({"counted": {"source": "none"}}) == {}


def test_counted_work_is_judged_paired_and_lower_is_better():
    ref = [2.0, 2.02, 1.98, 2.01, 1.99, 2.0, 2.03, 1.97]
    cand = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01]
    cmp = compare.compare(tidy_pair(ref, cand, metric="cw_syscalls_per_msg"))
    row = cmp.iloc[0]
    assert row["verdict"] == "FAST" and row["test"] == "paired" and row["diff_pct"] > 90


def _cmp(rows: list[dict]) -> pd.DataFrame:
    base = {"source": "run", "run_id": "r", "experiment": "e", "table": "", "pattern": "ROUTER_ROUTER",
            "transport": "tcp", "io_threads": 2, "placement": "", "process_model": "", "link": "",
            "reference": "default", "kind": "config", "library": "zlink", "basis": "interval",
            "test": "paired", "p_value": 0.01, "q_value": 0.02, "stop_reason": "decided"}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_the_summary_counts_counted_work_and_names_where_the_judges_disagree():
    cmp = _cmp([
        {"config": "16 KiB", "msg_size": 1024, "metric": "throughput_msgs", "verdict": "FAST", "diff_pct": 5,
         "ci_lo_pct": 2, "ci_hi_pct": 8},
        {"config": "16 KiB", "msg_size": 1024, "metric": "cw_context_switches_per_msg", "verdict": "SLOW",
         "diff_pct": -30, "ci_lo_pct": -35, "ci_hi_pct": -25},
        {"config": "16 KiB", "msg_size": 65536, "metric": "throughput_msgs", "verdict": "SLOW",
         "diff_pct": -5, "ci_lo_pct": -8, "ci_hi_pct": -2},
        {"config": "16 KiB", "msg_size": 65536, "metric": "cw_context_switches_per_msg", "verdict": "SLOW",
         "diff_pct": -10, "ci_lo_pct": -12, "ci_hi_pct": -8},
    ])
    text = "\n".join(report_summary.counted_block(cmp))
    assert "### Counted work" in text and "configuration: context switches per message" in text
    assert "2 decided FAST/SLOW by both, agreeing on 1, disagreeing on 1" in text
    assert "| ROUTER_ROUTER tcp 1 KiB | 16 KiB | zlink | default | FAST | SLOW |" in text


def test_where_counting_runs_counted_system_calls_they_judge_with_context_switches_beside():
    counting = {"table": counted.COUNTING_TABLE}
    cmp = _cmp([
        {"config": "16 KiB", "msg_size": 1024, "metric": "throughput_msgs", "verdict": "FAST", "diff_pct": 5,
         "ci_lo_pct": 2, "ci_hi_pct": 8},
        {"config": "16 KiB", "msg_size": 1024, "metric": "cw_syscalls_per_msg", "verdict": "SLOW",
         "diff_pct": -30, "ci_lo_pct": -35, "ci_hi_pct": -25, **counting},
        {"config": "16 KiB", "msg_size": 1024, "metric": "cw_context_switches_per_msg", "verdict": "FAST",
         "diff_pct": 10, "ci_lo_pct": 8, "ci_hi_pct": 12},
    ])
    text = "\n".join(report_summary.judges_disagree(cmp))
    assert "The two judges (throughput; system calls per message, context switches per message beside it)" \
        in text and "agreeing on 0, disagreeing on 1" in text, text
    assert "| ROUTER_ROUTER tcp 1 KiB | 16 KiB | zlink | default | FAST | SLOW | FAST |" in text
    infl = inflection.inflections(cmp)
    assert set(infl["metric"]) == {"throughput_msgs", "cw_syscalls_per_msg", "cw_context_switches_per_msg"}
    from testbed.results import report
    section = "\n".join(report._inflection_section(infl, inflection.best_config(cmp)))
    assert "| system calls |" in section and "| context switches |" in section and "| counted work |" \
        not in section
    assert "| Wall clock | Counted work (system calls) | Context switches | Either decides |" in section


def test_equivalence_bounds_give_the_largest_upper_end_over_the_sizes():
    cmp = _cmp([
        {"config": "64 KiB", "msg_size": 1024, "metric": "throughput_msgs", "verdict": "AMBIGUOUS",
         "diff_pct": 1, "ci_lo_pct": -3, "ci_hi_pct": 4.2},
        {"config": "64 KiB", "msg_size": 65536, "metric": "throughput_msgs", "verdict": "SAME", "diff_pct": 0,
         "ci_lo_pct": -1, "ci_hi_pct": 1.5},
    ])
    text = "\n".join(report_summary.equivalence_bounds(cmp))
    assert "| zlink: 64 KiB vs default | Throughput | +4.2% | 1 KiB | 2 |" in text, text


def _series(verdicts: list[str], diffs: list[float]) -> pd.DataFrame:
    return _cmp([{"config": "16 KiB", "msg_size": s, "metric": "throughput_msgs", "verdict": v, "diff_pct": d,
                  "ci_lo_pct": d - 1, "ci_hi_pct": d + 1}
                 for s, v, d in zip((1024, 65536, 262144), verdicts, diffs, strict=True)])


def test_an_inflection_row_is_decided_by_a_crossover_or_every_size_decided():
    none = inflection.inflections(_series(["FAST", "SAME", "SAME"], [5, 0, 0])).iloc[0]
    assert none["decided"] and none["answer"] == "none"
    flip = inflection.inflections(_series(["FAST", "AMBIGUOUS", "SLOW"], [5, 0, -5])).iloc[0]
    assert flip["decided"] and flip["answer"].startswith("~")
    open_row = inflection.inflections(_series(["FAST", "AMBIGUOUS", "AMBIGUOUS"], [5, 0, 0])).iloc[0]
    assert not open_row["decided"] and open_row["answer"] == "undecided"


def test_the_drift_filter_what_if_counts_dropped_repetitions_and_changed_verdicts(tmp_path):
    run_dir = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(1024, 65536), reps=6,
                       aa_alias=False)
    add_speed_reference(run_dir, drifted=[(group_id("PAIR", "tcp", 1024, "baseline"), 2)], tolerance=None)
    manifest = RunDir.open(run_dir).manifest
    df = load.load_run(run_dir)
    cmp = compare.compare_run(df, manifest)
    pairs = [json.loads(ln) for ln in (run_dir / "speed.jsonl").read_text().splitlines()]
    rows = {r["what"]: r for r in drift_whatif.rows(df, cmp, manifest, pairs)}
    assert set(rows) == {"filter at 5%", "filter at 10%"}
    # the fixture's drifted pair moved 10%: over 5%; every other pair stayed put
    assert rows["filter at 5%"]["repetitions"] == f"1 of {len(pairs)} dropped"
    assert rows["filter at 5%"]["compared"] == len(cmp)
    text = "\n".join(drift_whatif.section(df, cmp, manifest, pairs))
    assert "What a drift filter does" in text and "filter at 5%" in text


def test_a_report_of_the_new_sweep_shows_the_answers_and_an_older_one_renders_as_before(tmp_path):
    """The answers (equivalence bounds, inflection answers, the drift filter's what-if)
    appear in reports of runs whose manifest records the layout; a run from before keeps
    the report it was published with (its bytes are committed under reports/)."""
    from testbed.results import report
    design = {"layout": "arms", "margin": 0.03, "confidence": 0.95, "paired_configurations": True}
    new = make_run(tmp_path / "new", patterns=("PAIR",), transports=("tcp",), reps=6, design=design)
    add_speed_reference(new, tolerance=None)
    old = make_run(tmp_path / "old", patterns=("PAIR",), transports=("tcp",), reps=6)
    add_speed_reference(old, tolerance=None)
    new_text = report.render_run(new, tmp_path / "out-new", draw=False).read_text()
    old_text = report.render_run(old, tmp_path / "out-old", draw=False).read_text()
    for section in ("Equivalence bounds", "What a drift filter does", "| Judge |", "| Answer |"):
        assert section in new_text and section not in old_text, section
