"""The paired verdict (decide_paired, decide_repetitions, signed_rank): exact answers
against scipy, and simulations with a fixed seed of the interleaved schedule under
slow drift of the host, which moves both members of a pair alike."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from fixtures.factory import tidy_pair
from testbed.results import compare
from testbed.stats import decide as d
from testbed.stats import signed_rank as sr

SIMULATIONS = 400


def drifting_pairs(rng, n, effect=1.0, drift=0.5, cv=0.02):
    """n interleaved repetitions (A B, then B A, ...) on a host whose speed changes
    linearly by `drift` over the run; each run has lognormal noise of `cv`.
    Returns (reference, candidate) in repetition order."""
    slots = np.arange(2 * n, dtype=float)
    speed = 1 + drift * slots / (2 * n - 1)
    first = np.arange(n) % 2 == 0            # the reference goes first on even repetitions
    ref_slot = np.where(first, 2 * np.arange(n), 2 * np.arange(n) + 1)
    cand_slot = np.where(first, 2 * np.arange(n) + 1, 2 * np.arange(n))
    ref = speed[ref_slot] * np.exp(rng.normal(0, cv, n))
    cand = effect * speed[cand_slot] * np.exp(rng.normal(0, cv, n))
    return ref, cand


def verdict_rates(n, effect, paired, seed, drift=0.5, cv=0.02, trials=SIMULATIONS):
    """Share of each verdict, and of intervals excluding no change ("excludes": SAME
    wins over FAST/SLOW inside the margin, so this is the stricter false-call count)."""
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys((*d.VERDICTS, "excludes"), 0)
    for _ in range(trials):
        ref, cand = drifting_pairs(rng, n, effect, drift, cv)
        decide = d.decide_paired if paired else d.decide
        dec = decide(ref, cand, higher_is_better=True, seed=0)
        counts[dec.verdict] += 1
        counts["excludes"] += dec.low > 1 or dec.high < 1
    return {k: v / trials for k, v in counts.items()}


def test_min_pairs_is_the_smallest_decisive_number_of_pairs():
    # All n signs one way: two-sided p = 2 / 2^n; 5 pairs give 0.0625, 6 give 0.031.
    assert d.min_samples(0.95, paired=True) == 6
    assert d.min_samples(0.99, paired=True) == 8
    assert sps.wilcoxon(np.arange(1.0, 6.0), method="exact").pvalue > 0.05
    assert sps.wilcoxon(np.arange(1.0, 7.0), method="exact").pvalue < 0.05
    with pytest.raises(d.TooFewSamples, match=r"paired=True\) = 6"):
        d.decide_paired([1, 2, 3, 4, 5], [2, 3, 4, 5, 6], higher_is_better=True, seed=0)


def test_null_counts_are_the_signed_rank_distribution():
    for n in (1, 4, 9, 20):
        counts = sr.w_counts(n)
        assert counts.sum() == 2 ** n and counts.size == n * (n + 1) // 2 + 1
        assert list(counts) == list(counts[::-1])     # W+ is symmetric under the null
    assert list(sr.w_counts(3)) == [1, 1, 1, 2, 1, 1, 1]


@pytest.mark.parametrize("n", [6, 9, 15, 30])
def test_interval_excludes_one_exactly_when_scipy_p_is_below_alpha(n):
    rng = np.random.default_rng(n)
    for _ in range(200):
        ref, cand = np.exp(rng.normal(0, 0.05, n)), np.exp(rng.normal(0.03, 0.05, n))
        dec = d.decide_paired(ref, cand, higher_is_better=True, seed=0)
        p = sps.wilcoxon(np.log(cand) - np.log(ref), method="exact").pvalue
        assert dec.p_value == pytest.approx(p)
        assert (dec.low > 1 or dec.high < 1) == (p <= 0.05), (dec, p)


def test_known_answer_is_the_median_of_walsh_averages():
    diffs = np.array([0.01, 0.02, 0.03, 0.05, 0.08, 0.13])
    ref = np.full(6, 100.0)
    dec = d.decide_paired(ref, ref * np.exp(diffs), higher_is_better=True, seed=0)
    i, j = np.triu_indices(6)
    walsh = np.sort((diffs[i] + diffs[j]) / 2)
    assert dec.ratio == pytest.approx(np.exp(np.median(walsh)))
    # 6 pairs at 95%: k = 1, the interval runs from the smallest to the largest average.
    assert (dec.low, dec.high) == pytest.approx((np.exp(0.01), np.exp(0.13)))
    assert dec.verdict == "FAST" and dec.method == d.PAIRED_METHOD


def test_drift_hides_a_six_percent_gain_from_the_unpaired_test_not_the_paired():
    rng = np.random.default_rng(7)
    ref, cand = drifting_pairs(rng, 12, effect=1.06)
    assert d.decide(ref, cand, higher_is_better=True, seed=0).verdict == "AMBIGUOUS"
    paired = d.decide_paired(ref, cand, higher_is_better=True, seed=0)
    assert paired.verdict == "FAST" and paired.low > 1.02
    unpaired = verdict_rates(12, 1.06, paired=False, seed=8)
    found = verdict_rates(12, 1.06, paired=True, seed=8)
    assert found["FAST"] >= 0.9 and unpaired["FAST"] <= 0.2, (found, unpaired)


def attained_alpha(n, confidence=0.95):
    """The exact two-sided false-call rate of the signed-rank interval at n pairs
    (discrete, so at or below 1 - confidence)."""
    k = sr.critical_rank(n, confidence)
    return 2 * sr.w_counts(n)[:k].sum() / 2 ** n


@pytest.mark.parametrize(("n", "cv"), [(6, 0.05), (10, 0.02), (10, 0.05), (16, 0.05)])
def test_aa_under_drift_stays_at_the_nominal_false_call_rate(n, cv):
    """600 A/A comparisons under drift: the share of intervals excluding no change
    matches the test's exact level (<= 5%) within 3 simulation standard errors."""
    trials = 600
    alpha = attained_alpha(n)
    assert alpha <= 0.05
    rates = verdict_rates(n, 1.0, paired=True, seed=100 + n, cv=cv, trials=trials)
    bound = alpha + 3 * np.sqrt(alpha * (1 - alpha) / trials)
    assert rates["FAST"] + rates["SLOW"] <= rates["excludes"] + 1e-9, rates
    assert rates["excludes"] <= bound, (rates, alpha)


def test_paired_mde_is_detected_at_about_its_power():
    rng = np.random.default_rng(31)
    ref, cand = drifting_pairs(rng, 10, drift=0.3, cv=0.02)
    mde = d.decide_paired(ref, cand, higher_is_better=True, seed=5).mde
    assert 0.01 < mde < 0.06
    rates = verdict_rates(10, 1 + mde, paired=True, seed=32, drift=0.3)
    assert 0.65 <= rates["FAST"] <= 0.95, (mde, rates)


def test_repetitions_pair_by_index_and_fall_back_below_the_paired_minimum():
    rng = np.random.default_rng(3)
    ref, cand = drifting_pairs(rng, 8, effect=1.06)
    by_rep = dict(enumerate(ref)), dict(enumerate(cand))
    full = d.decide_repetitions(*by_rep, higher_is_better=True, seed=0)
    assert full.method == d.PAIRED_METHOD and full.n_reference == 8
    # The candidate's repetition 0 and 1 failed: 6 pairs remain, still paired, on the common indices.
    partial = d.decide_repetitions(by_rep[0], {i: v for i, v in by_rep[1].items() if i > 1},
                                   higher_is_better=True, seed=0)
    assert partial.method == d.PAIRED_METHOD and partial.n_candidate == 6
    expected = d.decide_paired(ref[2:], cand[2:], higher_is_better=True, seed=0)
    assert (partial.low, partial.high) == (expected.low, expected.high)
    # Five pairs cannot reach 95%: the two-sample test on all values decides.
    few = d.decide_repetitions(by_rep[0], {i: v for i, v in by_rep[1].items() if i > 2},
                               higher_is_better=True, seed=0)
    assert few.method == d.METHOD and (few.n_reference, few.n_candidate) == (8, 5)


def test_bad_paired_input_is_named():
    with pytest.raises(ValueError, match="5 reference vs 6 candidate"):
        d.decide_paired([1] * 5, [1] * 6, higher_is_better=True, seed=0)
    with pytest.raises(ValueError, match=r"candidate values must be positive.*\[2\] = -1.0"):
        d.decide_paired([1] * 6, [1, 1, -1, 1, 1, 1], higher_is_better=True, seed=0)


def test_compare_says_which_test_decided():
    rng = np.random.default_rng(7)
    ref, cand = drifting_pairs(rng, 12, effect=1.06)
    row = compare.compare(tidy_pair(ref * 1e6, cand * 1e6)).iloc[0]
    assert (row["verdict"], row["test"]) == ("FAST", "paired")
    row = compare.compare(tidy_pair(ref[:5] * 1e6, cand[:5] * 1e6)).iloc[0]
    assert row["test"] == "unpaired"
    # Published figures carry no repetition index of their own: never paired.
    published = tidy_pair(ref * 1e6, cand * 1e6, source="published:x")
    assert compare.compare(published).iloc[0]["test"] == "unpaired"


LOOP_SIMULATIONS = 2000
# The design aims at 0.9 x 5% = 4.5%; over 2000 simulated loops its rate (4.6%) has a
# standard error of ~0.5%, so 6% is three of them above. Without the look correction
# (95% at every look) or at a doubled alpha the same loops exclude 1 in 9.4%: seen
# failing under both mutations (analysis/README.md "What the tests show").
LOOP_RATE_LIMIT = 0.06


@pytest.mark.parametrize("cv", [0.02, 0.05, 0.10])
def test_paired_adaptive_design_starts_at_its_minimum_and_keeps_the_rate(cv):
    """The loop batch-sweep runs (cap 12, looks every 2 pairs, paired) under A/A: the
    share of loops in which some look's interval excludes no change is what the
    per-look confidence is calibrated for. It is counted at every look, also past a
    SAME (a SAME stop would hide a false call at a later look at small CVs), and the
    noise is exchangeable (no drift: an alternating drift makes the pairs more
    balanced than chance and the rate lower, which would hide a broken design)."""
    design = d.adaptive_design(cap=12, batch=2, paired=True)
    looks = (*range(design.start, design.cap, design.batch), design.cap)
    rng = np.random.default_rng(41)
    excluded = false_calls = 0
    for _ in range(LOOP_SIMULATIONS):
        ref, cand = drifting_pairs(rng, design.cap, drift=0.0, cv=cv)
        stopped = None
        for n in looks:
            dec = d.decide_paired(ref[:n], cand[:n], higher_is_better=True,
                                  confidence=design.look_confidence, seed=0)
            stopped = stopped or (dec.verdict if dec.verdict != "AMBIGUOUS" else None)
            if dec.low > 1 or dec.high < 1:
                excluded += 1
                break
        false_calls += stopped in ("FAST", "SLOW")
    assert excluded / LOOP_SIMULATIONS <= LOOP_RATE_LIMIT
    assert false_calls <= excluded    # the loop's own false calls (stopping on SAME) are fewer
    assert design.start == d.min_samples(design.look_confidence, paired=True) == 7
    assert 0.95 < design.look_confidence < 1 - 0.05 / design.looks


def test_two_configurations_are_never_paired():
    """Repetition i of two configurations did not run back to back: no pairing."""
    rng = np.random.default_rng(9)
    ref, cand = drifting_pairs(rng, 8, effect=1.2)
    frames = []
    for config, batch, scale in (("no batch", "unset", 1.0), ("16 KiB", "16384", 1.2)):
        t = tidy_pair(ref * 1e6 * scale, cand * 1e6 * scale, config=config)
        t["param_batch"] = batch
        frames.append(t)
    out = compare.compare(pd.concat(frames, ignore_index=True))
    assert set(out[out["kind"] == "config"]["test"]) == {"unpaired"}
    assert set(out[out["kind"] == "library"]["test"]) == {"paired"}
