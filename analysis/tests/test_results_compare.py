"""Verdicts on synthetic cells whose true answer is known."""
import numpy as np
import pytest

from fixtures.factory import ALIAS, CAND, REF, make_run, tidy_pair
from testbed.results import compare, load, stats


def _noisy(center, n=5, cv=0.01, seed=0):
    return center * np.random.default_rng(seed).lognormal(0, cv, n)


def _one(df, **kw):
    out = compare.compare(df, **kw)
    assert len(out) == 1
    return out.iloc[0]


def test_ten_percent_faster_is_fast():
    row = _one(tidy_pair(_noisy(1e6, seed=1), _noisy(1.1e6, seed=2)))
    assert row["verdict"] == "FAST"
    assert row["ci_lo_pct"] > 0 and 5 < row["diff_pct"] < 15


def test_ten_percent_slower_is_slow():
    assert _one(tidy_pair(_noisy(1e6, seed=1), _noisy(0.9e6, seed=2)))["verdict"] == "SLOW"


def test_a_against_a_is_same():
    row = _one(tidy_pair(_noisy(1e6, seed=3), _noisy(1e6, seed=4)))
    assert row["verdict"] == "SAME"
    assert row["ci_lo_pct"] < 0 < row["ci_hi_pct"]


def test_bimodal_is_ambiguous():
    ref = _noisy(1e6, seed=5)
    cand = np.array([0.7, 1.3, 0.72, 1.28, 1.02]) * 1e6
    assert _one(tidy_pair(ref, cand))["verdict"] == "AMBIGUOUS"


def test_latency_is_inverted():
    # zlink's latency is 10% lower: that is faster, so the diff is positive.
    row = _one(tidy_pair(_noisy(50.0, seed=6), _noisy(45.0, seed=7), metric="lat_p50_us"))
    assert row["verdict"] == "FAST" and row["diff_pct"] > 5


def test_noise_floor_raises_the_bar():
    df = tidy_pair(_noisy(1e6, seed=1), _noisy(1.1e6, seed=2))
    assert _one(df, noise_floor={("tcp", "throughput_msgs"): 0.15})["verdict"] != "FAST"


def test_single_values_get_no_interval():
    row = _one(tidy_pair([1e6], [1.2e6]))
    assert row["basis"] == "point" and np.isnan(row["ci_lo_pct"]) and row["verdict"] == "FAST"


def test_bootstrap_is_deterministic():
    a, b = _noisy(1e6, seed=1), _noisy(1.1e6, seed=2)
    assert stats.bootstrap_ratio(b, a, "k") == stats.bootstrap_ratio(b, a, "k")


def test_summary_interval_from_mean_and_std():
    ratio, lo, hi, p = stats.summary_ratio(110.0, 5.0, 10, 100.0, 5.0, 10)
    assert lo < ratio < hi and lo > 1.0 and p < 0.01


def test_fixture_run_known_answers(tmp_path):
    run = make_run(tmp_path)
    df = load.load_run(run)
    cmp, floor = compare.compare_run(df, load.read_manifest(run))
    assert compare.aa_aliases(load.read_manifest(run)) == {ALIAS}
    assert floor, "the A/A alias pair must yield a noise floor"
    thr = cmp[cmp["metric"] == "throughput_msgs"]
    aa = thr[thr["kind"] == "aa"]
    assert set(aa["verdict"]) <= {"SAME", "AMBIGUOUS"} and (aa["verdict"] == "SAME").mean() > 0.8
    lib = thr[(thr["kind"] == "library") & (thr["config"] == "64 KiB")]
    assert set(lib[lib["msg_size"] <= 1024]["verdict"]) == {"FAST"}
    assert set(lib[lib["msg_size"] >= 65536]["verdict"]) == {"SLOW"}
    cfg = thr[(thr["kind"] == "config") & (thr["library"] == CAND) & (thr["msg_size"] == 8192)]
    assert set(cfg["verdict"]) <= {"SAME", "AMBIGUOUS"}
    ref_cfg = thr[(thr["kind"] == "config") & (thr["library"] == REF)]
    assert "FAST" not in set(ref_cfg["verdict"]) and "SLOW" not in set(ref_cfg["verdict"])
