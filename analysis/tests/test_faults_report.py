"""The faults report from small synthetic runs: the failure condition (zlink worse
than libzmq in a cell), the timing verdicts and the heartbeat bound."""

from __future__ import annotations

from testbed.faults import report, verdicts
from testbed.records.fault_run_dir import FaultRunDir

REF, CAND = "libzmq-4.3.5", "zlink"


def record(key, lib, rep, *, lost=0, sent=100, detect=None, resume=50.0, hang=False, reordered=0, across=0):
    pattern, sec, hb, fault = key.split("/")
    return {
        "key": key,
        "library": lib,
        "repetition": rep,
        "error": None,
        "abort": False,
        "hang": hang,
        "errors": [],
        "cell": {"pattern": pattern, "security": sec, "heartbeat": hb.removeprefix("hb-"), "fault": fault},
        "accounting": {
            "sent": sent,
            "delivered": sent - lost,
            "lost": lost,
            "duplicated": 0,
            "reordered": reordered,
            "reordered_across": across,
            "corrupted": 0,
            "phantom": 0,
            "lost_by_phase": {"before": 0, "during": lost, "after": 0},
        },
        "timing": {"detect_ms": detect, "reconnect_ms": None, "resume_ms": resume},
        "resources": {"peak_rss_kb": 4096, "peak_fds": 12},
    }


def run_dir(tmp_path, records):
    run = FaultRunDir.at(tmp_path)
    for r in records:
        run.append(r)
    run.write_manifest(
        {
            "experiment": "faults",
            "run_id": "r",
            "question": "q?",
            "profile": "default",
            "repetitions": 4,
            "cells": 3,
            "reference": REF,
            "libraries": [{"label": REF, "build_id": "a"}, {"label": CAND, "build_id": "b"}],
            "proxy": {"provenance": "pinned"},
            "host": {"node": "h", "cpus": 2, "kernel": "k", "load_at_start": 0.1},
            "status": "complete",
            "seed": 1,
            "timing_margin": 0.25,
            "confidence": 0.95,
            "heartbeat": {"ivl_ms": 200, "timeout_ms": 600, "ttl_ms": 600},
        }
    )
    return tmp_path


def test_zlink_worse_only_where_libzmq_was_clean_or_far_better(tmp_path):
    recs = []
    for rep in range(4):
        recs += [
            record("PAIR/null/hb-off/none", REF, rep),
            record("PAIR/null/hb-off/none", CAND, rep),
            record("PAIR/null/hb-on/freeze", REF, rep, detect=700.0),
            record("PAIR/null/hb-on/freeze", CAND, rep, lost=3, detect=720.0),
            record("PUB_SUB/null/hb-off/cut", REF, rep, lost=10 + rep),
            record("PUB_SUB/null/hb-off/cut", CAND, rep, lost=300),
        ]
    cells = verdicts.group(recs)
    assert cells["PAIR/null/hb-on/freeze"].worse_than_reference(REF, CAND) == ["lost"]
    assert cells["PUB_SUB/null/hb-off/cut"].worse_than_reference(REF, CAND) == ["lost far more"]
    assert cells["PAIR/null/hb-off/none"].worse_than_reference(REF, CAND) == []
    text = report.render(run_dir(tmp_path, recs)).read_text()
    assert (
        "zlink worse than libzmq-4.3.5** (a problem libzmq-4.3.5 never had in that cell) in 2 cells" in text
    )
    assert "limit HEARTBEAT_TIMEOUT + IVL = 800 ms: **within**" in text


def test_reorders_across_a_reconnect_are_named_as_such(tmp_path):
    key = "DEALER_ROUTER/null/hb-on/freeze"
    recs = [record(key, REF, rep) for rep in range(4)]
    recs += [
        record(key, CAND, rep, reordered=13 if rep == 1 else 0, across=13 if rep == 1 else 0)
        for rep in range(4)
    ]
    cells = verdicts.group(recs)
    assert cells[key].worse_than_reference(REF, CAND) == ["reordered, all across a reconnect"]
    text = report.render(run_dir(tmp_path, recs)).read_text()
    assert "| 0 / 13 (across conns 0 / 13) |" in text
    assert "reord 13 in 1/4 runs (13 across connections)" in text
    # One reorder on a single connection among them: a plain reorder again.
    recs[-1] = record(key, CAND, 3, reordered=1, across=0)
    assert verdicts.group(recs)[key].worse_than_reference(REF, CAND) == ["reordered"]
    # Runs recorded before connections were logged have no reordered_across: plain.
    old = [record(key, REF, rep) for rep in range(4)] + [record(key, CAND, 0, reordered=2)]
    del old[-1]["accounting"]["reordered_across"]
    assert verdicts.group(old)[key].worse_than_reference(REF, CAND) == ["reordered"]


def test_timing_verdicts(tmp_path):
    recs = []
    for rep in range(4):
        recs += [
            record("REQ_REP/null/hb-off/peer-kill", REF, rep, resume=100.0 + rep),
            record("REQ_REP/null/hb-off/peer-kill", CAND, rep, resume=400.0 + rep, hang=rep == 0),
        ]
    cells = verdicts.group(recs)
    verdicts.judge(cells, REF, CAND, margin=0.25, confidence=0.95)
    v = cells["REQ_REP/null/hb-off/peer-kill"].verdicts
    assert v["resume_ms"]["verdict"] == "SLOW" and 3.5 < v["resume_ms"]["ratio"] < 4.5
    assert v["detect_ms"]["verdict"] == "not seen"
    assert "hang" in cells["REQ_REP/null/hb-off/peer-kill"].worse_than_reference(REF, CAND)


def test_a_slow_call_among_many_comparisons_carries_its_bh_q():
    """One cell clearly slower among 30 alike: at 4 repetitions a side even a complete
    ordering (p 2/70) cannot survive Benjamini-Hochberg over 30 cells; at 12 it does."""
    def cells_with(reps):
        recs = []
        for i in range(30):
            key = f"PAIR/null/hb-off/cell{i:02d}"
            for rep in range(reps):
                slow = 4.0 if i == 0 else 1.0
                recs += [record(key, REF, rep, resume=100.0 + 7 * rep + i),
                         record(key, CAND, rep, resume=slow * (100.0 + 5 * rep + i))]
        cells = verdicts.group(recs)
        verdicts.judge(cells, REF, CAND, margin=0.25, confidence=0.95)
        return cells
    few, many = cells_with(4), cells_with(12)
    assert few["PAIR/null/hb-off/cell00"].verdicts["resume_ms"]["verdict"] == "SLOW"
    assert few["PAIR/null/hb-off/cell00"].verdicts["resume_ms"]["q"] > 0.05
    assert many["PAIR/null/hb-off/cell00"].verdicts["resume_ms"]["q"] <= 0.05
    line = next(x for x in report.headline(few, REF, CAND, {}) if x.startswith("- resume_ms"))
    assert "`PAIR/null/hb-off/cell00` (q " in line and "0 FAST and 0 SLOW remain" in line
    line = next(x for x in report.headline(many, REF, CAND, {}) if x.startswith("- resume_ms"))
    assert "0 FAST and 1 SLOW remain" in line


def test_a_time_only_one_library_reaches_is_named():
    v = verdicts.timing_verdict(
        {0: 5.0, 1: 6.0},
        {},
        margin=0.25,
        confidence=0.95,
        seed=0,
        ref_label=REF,
        cand_label=CAND,
        runs=(2, 2),
    )
    assert v["verdict"] == f"only {REF}"
    v = verdicts.timing_verdict(
        {0: 5.0}, {0: 6.0}, margin=0.25, confidence=0.95, seed=0, ref_label=REF, cand_label=CAND, runs=(1, 1)
    )
    assert v["verdict"] == "n < 4"


def test_the_readme_answer_quotes_the_verdict_bullets(tmp_path):
    from testbed.results import answer_blocks

    recs = [record("PAIR/null/hb-off/none", lib, rep) for rep in range(2) for lib in (REF, CAND)]
    run = tmp_path / "faults" / "20261202T000000Z-abcd"
    run.mkdir(parents=True)
    report.render(run_dir(run, recs))
    found = answer_blocks.fault_run(tmp_path, "faults")
    assert found is not None and found.run_id == run.name
    assert any(v.startswith("**zlink never lost") for v in found.verdict), found.verdict
    assert any(v.startswith("**libzmq-4.3.5**: 0 of 1 cells") for v in found.verdict), found.verdict
