"""`./testbed history` (results/history.py, history_plot.py): published runs of
synthetic data with known ratios, at known commits, read back in time order, each
comparison at the commit its candidate was built from."""
from __future__ import annotations

import json

import pytest

from fixtures.factory import CAND, REF, make_run
from testbed.results import history, history_plot, plots

C1, C2, C3 = "1" * 40, "2" * 40, "3" * 40


def _run(root, run_id, commit, when, factor, libraries=(REF, CAND)):
    def effect(library, config, pattern, transport, size):
        return factor if library != REF else 1.0

    return make_run(root, "hist", run_id, patterns=("PAIR",), transports=("tcp",), sizes=(64, 1024),
                    configs={"baseline": {}}, libraries=libraries, aa_alias=False, reps=8, failed=(),
                    ceiling=False, effect=effect, git={"commit": commit, "dirty": False}, created_at=when)


@pytest.fixture
def reports(tmp_path):
    _run(tmp_path, "20261101T000000Z-bbbb", C2, "2026-11-01T00:00:00Z", 0.80)
    _run(tmp_path, "20261020T000000Z-aaaa", C1, "2026-10-20T00:00:00Z", 1.25)
    # A run of zlink at a revision: its row carries the commit it was built from.
    run = _run(tmp_path, "20261105T000000Z-cccc", C2, "2026-11-05T00:00:00Z", 1.0,
               libraries=(REF, "zlink@v3"))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["libraries"][1].update(commit=C3, revision="v3")
    (run / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_ratios_in_time_order_at_their_commits(reports):
    rows = history.history("hist", {"metric": "throughput_msgs", "msg_size": 64}, reports)
    assert list(rows["commit"]) == [C1, C2, C3]
    assert list(rows["library"]) == [CAND, CAND, "zlink@v3"]
    assert rows["ratio"].round(2).tolist() == [1.25, 0.80, 1.0]
    assert list(rows["verdict"]) == ["FAST", "SLOW", "SAME"]
    assert (rows["ratio_lo"] <= rows["ratio"]).all() and (rows["ratio"] <= rows["ratio_hi"]).all()


def test_latency_ratio_is_oriented_so_above_one_is_better(reports):
    rows = history.history("hist", {"metric": "lat_p50_us", "msg_size": 64}, reports)
    assert rows["ratio"].round(2).tolist() == [1.25, 0.80, 1.0]  # latency / factor: faster is > 1


def test_figure_data_and_files(reports, tmp_path):
    rows = history.history("hist", {"msg_size": 1024}, reports)
    data = history_plot.history_data(rows, "throughput_msgs")
    assert list(data["x"]) == [0, 1, 2] and data["tick"].iloc[0].startswith("1111111\n")
    assert data["line"].nunique() == 2  # zlink/libzmq and zlink@v3/libzmq are separate lines
    written = plots.save(history_plot.draw_history(data, "throughput_msgs", "hist"), tmp_path / "fig" / "h")
    assert all(p.stat().st_size > 1000 for p in written)


@pytest.mark.parametrize("text,message", [
    ("pattern", "not KEY=VALUE"), ("size=64", "not KEY=VALUE"), ("msg_size=big", "must be an integer")])
def test_bad_cell_selector_is_named(text, message):
    with pytest.raises(history.HistoryError, match=message):
        history.parse_cell(text)


def test_no_runs_or_no_match_are_named(reports):
    with pytest.raises(history.HistoryError, match="no published run of 'nothing'"):
        history.history("nothing", {}, reports)
    with pytest.raises(history.HistoryError, match="matches"):
        history.history("hist", {"pattern": "PUBSUB"}, reports)
