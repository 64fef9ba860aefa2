"""Verdicts on synthetic cells whose true answer is known."""
import numpy as np
import pandas as pd
import pytest

from fixtures.factory import ALIAS, CAND, REF, make_run, tidy_pair
from testbed.records.run_dir import RunDir
from testbed.results import compare, load
from testbed.stats import stats


def _noisy(center, n=5, cv=0.01, seed=0):
    return center * np.random.default_rng(seed).lognormal(0, cv, n)


def _one(df, **kw):
    out = compare.compare(df, **kw)
    assert len(out) == 1
    return out.iloc[0]


def test_ten_percent_faster_is_fast():
    row = _one(tidy_pair(_noisy(1e6, seed=1), _noisy(1.1e6, seed=2)))
    assert row["verdict"] == "FAST" and row["basis"] == "interval"
    assert row["ci_lo_pct"] > 0 and 5 < row["diff_pct"] < 15
    assert 0 < row["mde_pct"] < 5 and (row["n_ref"], row["n_cand"]) == (5, 5)


def test_ten_percent_slower_is_slow():
    assert _one(tidy_pair(_noisy(1e6, seed=1), _noisy(0.9e6, seed=2)))["verdict"] == "SLOW"


def test_a_against_a_with_small_spread_is_same():
    row = _one(tidy_pair(_noisy(1e6, cv=0.005, seed=3), _noisy(1e6, cv=0.005, seed=4)))
    assert row["verdict"] == "SAME"
    assert -3 < row["ci_lo_pct"] < 0 < row["ci_hi_pct"] < 3


def test_a_wide_interval_around_zero_is_not_same():
    # The old rule called this SAME (diff inside a threshold); an interval reaching
    # past the margin cannot claim equivalence.
    row = _one(tidy_pair(_noisy(1e6, cv=0.08, seed=3), _noisy(1e6, cv=0.08, seed=4)))
    assert row["verdict"] == "AMBIGUOUS" and (row["ci_lo_pct"] < -3 or row["ci_hi_pct"] > 3)


def test_margin_is_the_equivalence_bound():
    df = tidy_pair(_noisy(1e6, cv=0.01, seed=3), _noisy(1.03e6, cv=0.01, seed=4))
    assert _one(df, margin=0.10)["verdict"] == "SAME"
    assert _one(df, margin=0.001)["verdict"] == "FAST"


def test_a_config_margin_applies_to_configuration_pairs_only():
    """The same 5% effect: SAME for a configuration pair under a declared 10%
    config_margin, FAST for the library pair judged at the run's 3% margin."""
    ref, cand = _noisy(1e6, cv=0.01, seed=3), _noisy(1.05e6, cv=0.01, seed=4)
    frames = []
    for config, batch, values in (("default", "unset", ref), ("16 KiB", "16384", cand)):
        t = tidy_pair(values, [v * 1.05 for v in values], config=config)
        t["param_batch"] = batch
        frames.append(t)
    df = pd.concat(frames, ignore_index=True)
    out = compare.compare(df, margin=0.03, config_margin=0.10, paired_configurations=True)
    cfg = out[(out["kind"] == "config") & (out["metric"] == "throughput_msgs")]
    lib = out[(out["kind"] == "library") & (out["metric"] == "throughput_msgs")]
    assert set(cfg["verdict"]) == {"SAME"} and set(lib["verdict"]) == {"FAST"}
    plain = compare.compare(df, margin=0.03, paired_configurations=True)
    plain_cfg = plain[(plain["kind"] == "config") & (plain["metric"] == "throughput_msgs")]
    assert set(plain_cfg["verdict"]) == {"FAST"}


def test_bimodal_is_ambiguous():
    ref = _noisy(1e6, seed=5)
    cand = np.array([0.7, 1.3, 0.72, 1.28, 1.02]) * 1e6
    assert _one(tidy_pair(ref, cand))["verdict"] == "AMBIGUOUS"


def test_latency_is_inverted():
    # zlink's latency is 10% lower: that is faster, so the diff is positive.
    row = _one(tidy_pair(_noisy(50.0, seed=6), _noisy(45.0, seed=7), metric="lat_p50_us"))
    assert row["verdict"] == "FAST" and row["diff_pct"] > 5 and row["ci_lo_pct"] > 0


def test_three_repetitions_cannot_decide():
    # A -70% loss with 3 vs 3 repetitions: the exact test cannot reach 95%, so the
    # cell says so instead of pretending (side-by-side's old AMBIGUOUS was this, unexplained).
    row = _one(tidy_pair([1e6, 1.01e6, 0.99e6], [3e5, 3.1e5, 2.9e5]))
    assert row["verdict"] == "AMBIGUOUS" and row["basis"] == "n<4" and np.isnan(row["ci_lo_pct"])
    assert row["diff_pct"] == pytest.approx(-70, abs=0.5)


def test_four_repetitions_decide_a_large_loss():
    row = _one(tidy_pair([1e6, 1.01e6, 0.99e6, 1.0e6], [3e5, 3.1e5, 2.9e5, 3.0e5]))
    assert row["verdict"] == "SLOW" and row["ci_hi_pct"] < 0


def test_a_zero_figure_is_named_not_fatal():
    row = _one(tidy_pair([1e6] * 5, [0.0, 1e6, 1e6, 1e6, 1e6]))
    assert row["verdict"] == "AMBIGUOUS" and row["basis"] == "invalid values"


def _published(ref, cand, spread=np.nan, n=3):
    df = tidy_pair([ref], [cand])
    df["source"] = "published:seed.txt"
    df["n_summarized"] = n
    df["spread"] = spread * np.array([ref, cand]) if not np.isnan(spread) else np.nan
    return df


def test_published_single_figures_get_no_interval_and_never_same():
    row = _one(_published(1e6, 1.2e6))
    assert row["basis"] == "point" and np.isnan(row["ci_lo_pct"]) and row["verdict"] == "FAST"
    assert _one(_published(1e6, 1.01e6))["verdict"] == "AMBIGUOUS"


def test_published_mean_and_std_are_judged_by_the_same_rule():
    row = _one(_published(1e6, 1.2e6, spread=0.02, n=10))
    assert row["basis"] == "summary" and row["verdict"] == "FAST" and row["ci_lo_pct"] > 0
    assert _one(_published(1e6, 1.001e6, spread=0.005, n=10))["verdict"] == "SAME"


def test_summary_interval_from_mean_and_std():
    ratio, lo, hi, p, mde = stats.summary_ratio(110.0, 5.0, 10, 100.0, 5.0, 10)
    assert lo < ratio < hi and lo > 1.0 and p < 0.01 and 0 < mde < 0.1


def test_cells_that_ran_differently_are_not_pooled():
    a = tidy_pair(_noisy(1e6, seed=1), _noisy(1.1e6, seed=2), placement="split", stop_reason="decided")
    b = tidy_pair(_noisy(1e6, seed=3), _noisy(0.9e6, seed=4), placement="one-core", stop_reason="cap")
    out = compare.compare(pd.concat([a, b]))
    got = dict(zip(out["placement"], zip(out["verdict"], out["stop_reason"])))
    assert got == {"split": ("FAST", "decided"), "one-core": ("SLOW", "cap")}


def test_calibration_counts_false_calls_of_aa_pairs():
    rng = np.random.default_rng(0)
    parts = [tidy_pair(rng.lognormal(0, 0.02, 5), rng.lognormal(0, 0.02, 5), size=s, cand=ALIAS)
             for s in (64, 256, 1024, 4096)]
    parts.append(tidy_pair([1.0, 1.01, 0.99, 1.0, 1.0], [1.2, 1.21, 1.19, 1.2, 1.2], size=8192, cand=ALIAS))
    cmp = compare.compare(pd.concat(parts), aliases=frozenset({ALIAS}))
    cal = compare.calibration(cmp).set_index("metric")
    assert cal.loc["throughput_msgs", "comparisons"] == 5
    assert cal.loc["throughput_msgs", "false_calls"] == 1  # the planted 20% "A/A" difference
    assert cal.loc["lat_p50_us", "comparisons"] == 0


def test_fixture_run_known_answers(tmp_path):
    run = make_run(tmp_path)
    df = load.load_run(run)
    cmp = compare.compare_run(df, RunDir.open(run).manifest)
    thr = cmp[cmp["metric"] == "throughput_msgs"]
    aa = thr[thr["kind"] == "aa"]
    assert set(aa["library"]) == {ALIAS} and (aa["verdict"] == "SAME").mean() > 0.9
    assert not aa["verdict"].isin(["FAST", "SLOW"]).any()
    lib = thr[(thr["kind"] == "library") & (thr["config"] == "64 KiB")]
    assert set(lib[lib["msg_size"] <= 1024]["verdict"]) == {"FAST"}
    assert set(lib[lib["msg_size"] >= 65536]["verdict"]) == {"SLOW"}
    cfg = thr[(thr["kind"] == "config") & (thr["library"] == CAND) & (thr["msg_size"] == 8192)]
    assert set(cfg["verdict"]) == {"SAME"}
    ref_cfg = thr[(thr["kind"] == "config") & (thr["library"] == REF)]
    assert not ref_cfg["verdict"].isin(["FAST", "SLOW"]).any()
