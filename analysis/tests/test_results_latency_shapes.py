"""results/latency_shapes.py: the report's section that shows a SLOW latency call's
cell whole (both libraries' pooled round trips). End to end through a sweep and its
report: tests/test_sweep_adaptive.py (the p99 test)."""
from __future__ import annotations

import pandas as pd

from testbed.bench import latency_histogram
from testbed.results import latency_shapes

CELL = {"kind": "library", "pattern": "PAIR", "transport": "ipc", "msg_size": 65536, "io_threads": 1,
        "config": "default", "placement": "split", "process_model": "two-process", "link": "direct",
        "library": "zlink", "reference": "libzmq-4.3.5", "diff_pct": -17.0, "ci_lo_pct": -19.7,
        "ci_hi_pct": -12.6}


def _cmp(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame([{**CELL, **r} for r in rows])


def _two_modes(fast_share: float, n: int = 1000) -> latency_histogram.Histogram:
    fast = round(n * fast_share)
    return latency_histogram.from_values([18_000] * fast + [29_000] * (n - fast))


def _hists(cmp: pd.DataFrame, ref, cand) -> dict:
    r = cmp.iloc[0].to_dict()
    return {latency_shapes._cell_key(r, "libzmq-4.3.5"): ref, latency_shapes._cell_key(r, "zlink"): cand}


def test_no_slow_latency_call_no_section(tmp_path):
    cmp = _cmp({"metric": "lat_p50_us", "verdict": "FAST"}, {"metric": "throughput_msgs", "verdict": "SLOW"},
               {"metric": "lat_p99_us", "verdict": "SLOW", "kind": "config"})
    assert latency_shapes.section(cmp, {}, tmp_path, "figures") == []
    assert latency_shapes.wanted_keys(cmp) == set()
    assert not (tmp_path / "figures").exists()


def test_a_mixture_shows_in_the_quantiles_and_the_figure(tmp_path):
    """zlink's fast mode holds 17% of its round trips, libzmq's 35%: the p50 call is
    about the proportion, and the quantiles say so (p10 equal, p25 and p50 apart)."""
    cmp = _cmp({"metric": "lat_p50_us", "verdict": "SLOW"}, {"metric": "lat_p99_us", "verdict": "SLOW"})
    lines = latency_shapes.section(cmp, _hists(cmp, _two_modes(0.35), _two_modes(0.17)), tmp_path, "figures")
    text = "\n".join(lines)
    rows = [line for line in text.splitlines() if line.startswith("| PAIR") or line.startswith("|  |")]
    assert len(rows) == 2, text  # one cell (SLOW twice), two libraries
    assert "latency p50 -17.0% [-19.7, -12.6]; latency p99 -17.0%" in rows[0]
    ref, cand = ([c.strip() for c in row.split("|")[1:-1]] for row in rows)
    assert ref[2:4] == ["libzmq-4.3.5", "1,000"] and cand[2:4] == ["zlink", "1,000"]

    def near(text: str, us: float) -> bool:  # a bucket's midpoint: within 1/128
        return abs(float(text) - us) <= us / 128

    assert near(ref[4], 18) and near(cand[4], 18)  # p10: both in the fast mode
    assert near(ref[5], 18) and near(cand[5], 29)  # p25: only libzmq still in it
    assert (tmp_path / "figures" / "latency-shapes.svg").stat().st_size > 0
    assert "](figures/latency-shapes.svg)" in text


def test_a_cell_without_histograms_is_listed_and_not_drawn(tmp_path):
    cmp = _cmp({"metric": "lat_p50_us", "verdict": "SLOW"},
               {"metric": "lat_p50_us", "verdict": "SLOW", "msg_size": 64})
    r = cmp.iloc[1].to_dict()  # only the 64 B cell has its round trips
    hists = {latency_shapes._cell_key(r, lib): _two_modes(0.5) for lib in ("libzmq-4.3.5", "zlink")}
    text = "\n".join(latency_shapes.section(cmp, hists, tmp_path, "figures", draw_figure=False))
    assert text.count("| no histogram |") == 2 and text.count("| 1,000 |") == 2
    assert "(figures/latency-shapes.svg)" in text  # the 64 B cell is drawn


def test_a_run_from_before_the_histograms_gets_no_section(tmp_path):
    cmp = _cmp({"metric": "lat_p50_us", "verdict": "SLOW"})
    assert latency_shapes.section(cmp, {}, tmp_path, "figures") == []
    assert not (tmp_path / "figures").exists()


def test_past_the_panel_limit_the_figure_says_how_many_it_shows(tmp_path):
    n = latency_shapes.MAX_PANELS + 2
    cmp = _cmp(*[{"metric": "lat_p50_us", "verdict": "SLOW", "msg_size": 64 * (i + 1)} for i in range(n)])
    hists = {}
    for r in cmp.to_dict("records"):
        hists[latency_shapes._cell_key(r, "libzmq-4.3.5")] = _two_modes(0.5)
        hists[latency_shapes._cell_key(r, "zlink")] = _two_modes(0.4)
    text = "\n".join(latency_shapes.section(cmp, hists, tmp_path, "figures", draw_figure=False))
    assert f"(the first {latency_shapes.MAX_PANELS} of {n} cells)" in text
    assert text.count("| libzmq-4.3.5 |") == n  # the table keeps every cell
    assert not (tmp_path / "figures").exists()  # named, not drawn


def test_the_curve_climbs_to_one_at_bucket_midpoints():
    xs, ys = latency_shapes.curve(_two_modes(0.25, n=8))
    assert ys == [0.25, 1.0] and 17.9 < xs[0] < 18.1 and 28.8 < xs[1] < 29.2


def test_two_candidates_slow_in_one_cell_are_two_entries(tmp_path):
    """A run of three libraries: each pair's calls stay with that pair's curves."""
    cmp = _cmp({"metric": "lat_p50_us", "verdict": "SLOW"},
               {"metric": "lat_p50_us", "verdict": "SLOW", "library": "zlink@new", "diff_pct": -5.0})
    r = cmp.iloc[0].to_dict()
    hists = {latency_shapes._cell_key(r, lib): _two_modes(share)
             for lib, share in (("libzmq-4.3.5", 0.5), ("zlink", 0.3), ("zlink@new", 0.4))}
    text = "\n".join(latency_shapes.section(cmp, hists, tmp_path, "figures", draw_figure=False))
    rows = [line for line in text.splitlines() if line.startswith("| PAIR")]
    assert len(rows) == 2 and "-17.0%" in rows[0] and "-5.0%" in rows[1] and "-5.0%" not in rows[0]
    assert text.count("| zlink@new |") == 1 and text.count("| libzmq-4.3.5 |") == 2
