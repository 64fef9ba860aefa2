"""The notebooks' functions (testbed.results.explore) against the report of the same
run, the generated notebooks against their template, and the run pickers."""
import argparse
import math

import pytest

from fixtures.factory import CAND, REF, add_speed_reference, make_run
from testbed import paths
from testbed.results import explore, notebook_cmd, notebook_exec, notebook_gen, report, runs

SMALL = dict(patterns=("PAIR",), transports=("tcp",), sizes=(64, 65536), failed=(), configs={"baseline": {}})


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("runs"), experiment="scorecard", work=True, **SMALL)
    add_speed_reference(run)
    return run


def test_summary_and_verdict_tables_are_the_reports_own(small_run, tmp_path):
    text = report.render_run(small_run, tmp_path).read_text()
    view = explore.open_run(small_run)
    summary = explore.summary_markdown(view)
    assert summary.startswith("## Summary") and summary in text
    tables = [b for b in explore.detail_markdown(view).split("\n\n") if b.startswith("| Size")]
    assert len(tables) == 2 and all(t in text for t in tables)  # zlink and the A/A alias against libzmq
    assert all("Instructions/msg" in t for t in tables)  # the work column is part of what agrees


def test_a_drill_down_recomputes_every_comparison_as_the_report(small_run):
    view = explore.open_run(small_run)
    for row in view.comparisons.to_dict("records"):
        d = explore.drill(view, row)
        for col in ("verdict", "diff_pct", "ci_lo_pct", "ci_hi_pct", "n_ref", "n_cand"):
            a, b = d.comparison[col], d.recomputed[col]
            assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), (row, col)
    d = explore.drill(view, explore.find(view, dict(pattern="PAIR", transport="tcp", msg_size=64,
                                                    metric="throughput_msgs", config="baseline")))
    assert list(d.repetitions["repetition"]) == [0, 1, 2, 3, 4]
    assert (d.repetitions["ratio"] > 1.05).all()  # the fixture's zlink is +10% at 64 B
    assert list(explore.drill_summary(d)["report"]) == list(explore.drill_summary(d)["recomputed"])


def _same(a, b) -> bool:
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def test_a_drill_down_judges_an_adaptive_run_as_its_report(tmp_path):
    """Blocks pair the configurations and the loop looked at 6 of 7 pairs (budget stop);
    two failed repetitions leave one cell 5 pairs, below the first look: NOT PLANNED.
    The drill-down must pair, cut and refuse exactly as compare_run did."""
    design = {"adaptive": True, "min_repetitions": 6, "max_repetitions": 10, "look_every": 2,
              "paired_configurations": True, "look_confidence": 0.95}
    failed = (("PAIR", "tcp", 65536, "baseline", CAND, 5), ("PAIR", "tcp", 65536, "baseline", CAND, 6))
    run = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64, 65536), failed=failed,
                   reps=7, cell_fields=lambda *cell: {"stop_reason": "budget"}, design=design)
    view = explore.open_run(run)
    cmp = view.comparisons
    assert (cmp["verdict"] == "NOT PLANNED").any() and (cmp["n_cand"] == 6).any()
    assert set(cmp[cmp["kind"] == "config"]["test"].dropna()) >= {"paired"}
    for row in cmp.to_dict("records"):
        d = explore.drill(view, row)
        for col in ("verdict", "test", "diff_pct", "ci_lo_pct", "ci_hi_pct", "n_ref", "n_cand"):
            assert _same(d.comparison[col], d.recomputed.get(col, math.nan)), (row, col)
    assert "NOT PLANNED" in explore.verdict_counts(view).columns
    assert "q_value" in explore.verdicts(view)


def test_find_names_an_ambiguous_choice(small_run):
    view = explore.open_run(small_run)
    with pytest.raises(KeyError, match="comparisons match"):
        explore.find(view, dict(pattern="PAIR", transport="tcp", metric="throughput_msgs"))


def test_spread_is_split_by_placement_where_the_run_varies_it(tmp_path):
    run = make_run(tmp_path, cell_fields=lambda lib, p, t, size, cfg: {"placement": "split" if size == 64 else
                                                                       "one-core"}, **SMALL)
    spread = explore.spread(explore.open_run(run))
    assert "placement" in spread and set(spread["placement"]) == {"split", "one-core"}
    assert (spread["median_cv_pct"] > 0).all()


def test_counters_give_the_work_ratio_and_host_speed_its_summary(small_run):
    view = explore.open_run(small_run)
    work = explore.counters(view)
    ratio = work[work["metric"] == "work_instructions_per_msg"][f"{CAND} / {REF}"]
    assert len(ratio) == 2 and ratio.round(2).eq(1.15).all()  # the fixture's zlink does 1.15x the work
    summary, series = explore.host_speed(view)
    assert summary["pairs"] > 0 and len(series) == 2 * summary["pairs"]


def test_replication_names_flips_and_their_reason(tmp_path):
    same = make_run(tmp_path, run_id="a", **SMALL)
    again = make_run(tmp_path, run_id="b", seed=2, **SMALL)
    flipped = make_run(tmp_path, run_id="c", effect=lambda lib, *a: 0.85 if lib == CAND else 1.0, **SMALL)
    a, b, c = (explore.open_run(r) for r in (same, again, flipped))
    rep = explore.replication(a, b)
    assert set(rep["status"]) == {"replicated"} and len(rep) == 2
    rep = explore.replication(a, c)
    row = rep[rep["msg_size"] == 64].iloc[0]
    assert (row["verdict_a"], row["verdict_b"], row["status"]) == ("FAST", "SLOW", "flipped")
    assert row["reason"].startswith("intervals disjoint")
    counts = dict(zip(*explore.replication_counts(rep).to_dict("list").values()))
    assert counts == {"replicated": 0, "flipped": 1, "changed": 1, "not planned": 0}  # 64 KiB: SAME -> SLOW
    # a comparison an adaptive loop never looked at has no verdict to replicate or flip
    row = {"status": explore._status("NOT PLANNED", "FAST"), "verdict_a": "NOT PLANNED", "verdict_b": "FAST"}
    assert row["status"] == "not planned" and explore._reason(row).startswith("run a's adaptive loop never")
    assert list(explore.moved(rep)["status"]) == ["flipped", "changed"]
    facts = explore.facts_side_by_side(a, c)
    assert list(facts.columns) == ["a", "b"] and facts.loc["run", "b"] == "c"


def test_the_default_runs_are_the_published_ones(tmp_path, monkeypatch):
    for rid in ("20260101T000000Z-aaaa", "20260102T000000Z-bbbb"):
        make_run(tmp_path, experiment="scorecard", run_id=rid, **SMALL)
    monkeypatch.setattr(paths, "REPORTS_DIR", tmp_path)
    assert runs.pick_published_run("", "scorecard").name == "20260102T000000Z-bbbb"
    assert [p.name for p in runs.pick_pair("", "", "scorecard")] == ["20260101T000000Z-aaaa",
                                                                     "20260102T000000Z-bbbb"]
    with pytest.raises(FileNotFoundError, match="fewer than two published runs"):
        runs.pick_pair("", "", "split-cores")


def test_every_experiment_has_its_generated_notebook():
    experiments = notebook_gen.sweep_experiments(paths.EXPERIMENTS_DIR)
    assert len(experiments) >= 12
    assert all((paths.NOTEBOOKS_DIR / f"{e}.ipynb").is_file() for e in experiments)
    assert notebook_gen.stale(paths.EXPERIMENTS_DIR, paths.NOTEBOOKS_DIR) == [], \
        "notebooks/ differs from testbed/results/notebook_gen.py: run ./testbed notebook --generate"


def test_parameters_are_injected_after_the_parameters_cell():
    nb = notebook_gen.experiment_notebook("scorecard")
    out = notebook_exec.inject(nb, {"RUN": "reports/x/y", "PATTERNS": ["PAIR"]})
    at = next(i for i, c in enumerate(out.cells) if "parameters" in c.metadata.get("tags", []))
    assert out.cells[at + 1].source == "RUN = 'reports/x/y'\nPATTERNS = ['PAIR']"
    assert len(out.cells) == len(nb.cells) + 1
    with pytest.raises(ValueError, match="parameters"):
        notebook_exec.inject(notebook_gen._notebook([notebook_gen._code("x = 1")]), {"x": 2})


def test_an_aa_only_run_drills_into_its_aa_pair(tmp_path):
    run = make_run(tmp_path, libraries=(REF,), **SMALL)  # the reference and its alias only
    view = explore.open_run(run)
    row = explore.pick_cell(view)
    assert row["kind"] == "aa" and explore.drill(view, row).recomputed["verdict"] == row["verdict"]


def test_the_notebook_command_opens_the_published_rendering(capsys):
    newest = runs.published_runs("scorecard")[-1]
    args = argparse.Namespace(experiment="scorecard", run=None, html=True, generate=False, no_browser=True,
                              port=None)
    assert notebook_cmd.main(args) == 0
    assert capsys.readouterr().out.strip() == str(newest / notebook_exec.HTML_NAME)
    with pytest.raises(SystemExit, match="no notebook for 'nope'; there are: batch-sweep"):
        notebook_cmd.main(argparse.Namespace(**{**vars(args), "experiment": "nope"}))
    assert notebook_cmd.main(argparse.Namespace(**{**vars(args), "experiment": None})) == 2
