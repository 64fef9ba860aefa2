"""The verdict of one comparison: is the candidate FAST, SLOW, SAME or AMBIGUOUS
against the reference, from the repetitions of each?

Method: on log values (a ratio becomes a shift), the Hodges-Lehmann estimate of the
shift (median of all pairwise differences candidate - reference) and the exact
distribution-free interval that inverts the Mann-Whitney test (Lehmann 1963; Hollander
& Wolfe ch. 4). Why this one:
  - it needs no normality: its false-call rate under A/A (both samples from one
    distribution, however skewed or bimodal) is at most 1 - confidence, exactly;
  - a percentile bootstrap of medians undercovers at n = 3-5, and a t interval
    assumes a shape our bimodal placement noise does not have;
  - it is discrete, so it states honestly when a design cannot decide: 3 vs 3 has
    only 20 rank orders, the most extreme of which still has p = 0.10.

Verdict rules (docs: analysis/README.md "Verdicts"):
  SAME       the interval of the ratio lies inside [1 - margin, 1 + margin];
  FAST/SLOW  otherwise, the whole interval is on the better / worse side of 1;
  AMBIGUOUS  otherwise (the interval straddles 1 and reaches past the margin).

The minimum detectable effect (MDE) is the relative change this design detects with
80% power, simulated (seeded) from the observed spread of the log values.

Paired (decide_paired, decide_repetitions): where both sides ran the same repetition
indices of an interleaved schedule, repetition i of the candidate is paired with
repetition i of the reference (run back to back), and the verdict comes from the
per-pair log ratios: one-sample Hodges-Lehmann estimate (median of the Walsh
averages), the exact interval that inverts the Wilcoxon signed-rank test, and its exact
p (signed_rank.py). Drift common to both sides cancels in the pairs. It needs more
values than the two-sample test (6 pairs at 95% against 4 a side), so
decide_repetitions uses it when at least min_samples(confidence, paired=True) pairs
exist and the two-sample test otherwise; which one decided is in Decision.method.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import signed_rank
from .lazy_scipy import scipy_stats

VERDICTS = ("FAST", "SLOW", "SAME", "AMBIGUOUS")
METHOD = "hodges-lehmann log-ratio, exact mann-whitney interval"
PAIRED_METHOD = "paired hodges-lehmann log-ratio, exact wilcoxon signed-rank interval"
MDE_POWER = 0.80
MDE_DRAWS = 2000
# Above this many rank orders (C(n+m, n)) the exact counts leave int64: use the
# normal approximation of U, accurate to well under 1% of alpha at that size.
EXACT_LIMIT = 1 << 62
# Adaptive loops: the per-look confidence is calibrated by simulating A/A rank orders;
# aiming at 90% of the allowed false-call rate leaves room for the simulation's error.
CALIBRATION_DRAWS = 20000
CALIBRATION_SEED = 20261123
CALIBRATION_TARGET = 0.9


class TooFewSamples(ValueError):
    """The design cannot reach a decision at the requested confidence."""


@dataclass(frozen=True)
class Decision:
    """One comparison's outcome. ratio/low/high are candidate/reference of the raw
    metric (not inverted): > 1 is better when higher_is_better, < 1 otherwise.
    mde is a relative change (0.04 = 4%) detectable with 80% power at this n."""
    verdict: str
    ratio: float
    low: float
    high: float
    p_value: float
    mde: float
    n_reference: int
    n_candidate: int
    method: str = METHOD


def min_samples(confidence: float = 0.95, paired: bool = False) -> int:
    """The smallest n per side (equal sizes) whose most extreme rank order is
    significant at this confidence: below it no verdict but AMBIGUOUS is possible.
    paired: the smallest number of pairs for the signed-rank test (all signs one way
    has p = 2 / 2^n)."""
    _check_confidence(confidence)
    if paired:
        return signed_rank.min_pairs(confidence)
    n = 1
    while _critical_rank(n, n, confidence) < 1:
        n += 1
    return n


def decide(reference, candidate, *, higher_is_better: bool, margin: float = 0.03,
           confidence: float = 0.95, seed: int) -> Decision:
    """Compare the repetitions of candidate with those of reference (positive finite
    values, any order). seed drives only the MDE simulation: the interval, p and
    verdict are exact. Raises ValueError on bad input and TooFewSamples when the
    sample sizes cannot reach significance at this confidence."""
    _check_confidence(confidence)
    _check_margin(margin)
    ref = _log_values(reference, "reference")
    cand = _log_values(candidate, "candidate")
    k = _critical_rank(cand.size, ref.size, confidence)
    if k < 1:
        raise TooFewSamples(
            f"{ref.size} reference vs {cand.size} candidate repetitions cannot reach "
            f"{confidence:.0%} confidence (min_samples({confidence}) = {min_samples(confidence)} per side)")
    diffs = np.sort(np.subtract.outer(cand, ref).ravel())
    low, high = math.exp(diffs[k - 1]), math.exp(diffs[diffs.size - k])
    return Decision(
        verdict=verdict(low, high, higher_is_better=higher_is_better, margin=margin),
        ratio=math.exp(float(np.median(diffs))), low=low, high=high,
        p_value=_p_value(cand, ref),
        mde=_mde(cand, ref, k, seed),
        n_reference=int(ref.size), n_candidate=int(cand.size))


def decide_paired(reference, candidate, *, higher_is_better: bool, margin: float = 0.03,
                  confidence: float = 0.95, seed: int) -> Decision:
    """Compare paired repetitions: reference[i] and candidate[i] ran back to back
    (same length, same order). The interval of the ratio is exact for any symmetric
    distribution of the per-pair log ratios. Raises ValueError on bad input or unequal
    lengths and TooFewSamples below min_samples(confidence, paired=True) pairs."""
    _check_confidence(confidence)
    _check_margin(margin)
    ref = _log_values(reference, "reference")
    cand = _log_values(candidate, "candidate")
    if ref.size != cand.size:
        raise ValueError(f"paired comparison needs one candidate per reference value: "
                         f"{ref.size} reference vs {cand.size} candidate")
    d = cand - ref
    k = signed_rank.critical_rank(d.size, confidence)
    if k < 1:
        raise TooFewSamples(
            f"{d.size} pairs cannot reach {confidence:.0%} confidence "
            f"(min_samples({confidence}, paired=True) = {signed_rank.min_pairs(confidence)})")
    walsh = signed_rank.walsh_averages(d)
    low, high = math.exp(walsh[k - 1]), math.exp(walsh[walsh.size - k])
    return Decision(
        verdict=verdict(low, high, higher_is_better=higher_is_better, margin=margin),
        ratio=math.exp(float(np.median(walsh))), low=low, high=high,
        p_value=signed_rank.p_value(d), mde=_paired_mde(d, k, seed),
        n_reference=int(d.size), n_candidate=int(d.size), method=PAIRED_METHOD)


def decide_repetitions(reference: dict, candidate: dict, *, higher_is_better: bool, margin: float = 0.03,
                       confidence: float = 0.95, seed: int) -> Decision:
    """reference, candidate: repetition index -> value. Pairs the repetitions both
    sides ran; with at least min_samples(confidence, paired=True) of them the paired
    test decides, else the two-sample decide() on all values. The choice depends on
    the design (which repetitions exist), never on the outcome."""
    common = sorted(set(reference) & set(candidate))
    if len(common) >= min_samples(confidence, paired=True):
        return decide_paired([reference[i] for i in common], [candidate[i] for i in common],
                             higher_is_better=higher_is_better, margin=margin,
                             confidence=confidence, seed=seed)
    return decide(list(reference.values()), list(candidate.values()), higher_is_better=higher_is_better,
                  margin=margin, confidence=confidence, seed=seed)


def _paired_mde(d: np.ndarray, k: int, seed: int) -> float:
    """The relative change detected with MDE_POWER at this many pairs, from the
    observed spread of the per-pair log ratios (normal draws, seeded)."""
    if d.size < 2:
        return math.nan
    sd = float(np.std(d, ddof=1))
    shift = signed_rank.unit_detectable_shift(d.size, k, seed, MDE_POWER, MDE_DRAWS)
    return math.exp(sd * shift) - 1


@dataclass(frozen=True)
class AdaptiveDesign:
    """How an adaptive loop on one cell runs: decide() at `look_confidence` after
    `start` repetitions per side, then after every `batch` more, the last look at
    `cap` (a partial batch): `looks` calls at most."""
    start: int
    batch: int
    cap: int
    looks: int
    look_confidence: float


def adaptive_design(cap: int, batch: int = 1, confidence: float = 0.95,
                    paired: bool = False) -> AdaptiveDesign:
    """Stopping at the first decision after each of L looks gives L chances of a
    false call: at 95% per look, 8 looks call about 12% of A/A pairs FAST or SLOW.
    So every look runs at a stricter `look_confidence`, chosen so that the whole loop
    calls at most CALIBRATION_TARGET x (1 - confidence) of A/A pairs FAST or SLOW
    (_look_confidence). paired: the looks use the signed-rank test on pairs (its
    minimum is larger: 7 pairs at 98.25% per look against 5 a side). Raises ValueError
    when cap is too small for one decisive look."""
    if batch < 1:
        raise ValueError(f"adaptive batch must be >= 1 repetition per side, got {batch!r}")
    _check_confidence(confidence)
    start = min_samples(confidence, paired)
    while True:
        if cap < start:
            raise ValueError(f"adaptive cap {cap} per side is below the {start} repetitions per side "
                             f"needed for one decisive look at {confidence:.0%} overall confidence")
        sizes = tuple(range(start, cap, batch)) + (cap,)
        look_confidence = _look_confidence(sizes, confidence, paired)
        needed = min_samples(look_confidence, paired)
        if needed <= start:
            return AdaptiveDesign(start, batch, cap, len(sizes), look_confidence)
        start = needed


@lru_cache(maxsize=64)
def _look_confidence(sizes: tuple[int, ...], confidence: float, paired: bool = False) -> float:
    """The lowest per-look confidence whose looks at these sample sizes keep the
    loop's A/A false-call rate at or below the target. Under A/A every order of the
    2n values is equally likely whatever their distribution, so the rate is found
    by simulating rank orders (seeded, CALIBRATION_DRAWS of them). Bonferroni (1 -
    alpha / looks) is guaranteed but calls about a third as often as allowed; the
    search runs between it and the single-look confidence. Paired: every sign
    pattern is equally likely under A/A, simulated the same way (signed_rank)."""
    alpha = 1 - confidence
    if len(sizes) == 1:
        return confidence
    paths = (signed_rank.null_w_paths(sizes, CALIBRATION_DRAWS, CALIBRATION_SEED) if paired
             else _null_u_paths(sizes))
    target = CALIBRATION_TARGET * alpha
    lo, hi = confidence, 1 - alpha / len(sizes)
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _false_call_rate(sizes, mid, paths, paired) <= target else (mid, hi)
    return hi


def _null_u_paths(sizes: tuple[int, ...]) -> np.ndarray:
    """Mann-Whitney U after n values a side, at each look size, for simulated A/A
    sequences (draws x looks). U grows by the new candidate against all references
    so far, plus every earlier candidate against the new reference."""
    rng = np.random.Generator(np.random.PCG64(CALIBRATION_SEED))
    cap = max(sizes)
    cand, ref = rng.random((CALIBRATION_DRAWS, cap)), rng.random((CALIBRATION_DRAWS, cap))
    u = np.zeros(CALIBRATION_DRAWS, dtype=np.int64)
    out = []
    for n in range(1, cap + 1):
        u += (cand[:, n - 1:n] > ref[:, :n]).sum(axis=1) + (cand[:, :n - 1] > ref[:, n - 1:n]).sum(axis=1)
        if n in sizes:
            out.append(u.copy())
    return np.stack(out, axis=1)


def _false_call_rate(sizes: tuple[int, ...], look_confidence: float, paths: np.ndarray,
                     paired: bool = False) -> float:
    """Share of simulated A/A paths called at some look: the interval excludes 1 <=>
    U (W+ when paired) lies in a tail of k values of its range 0..top."""
    called = np.zeros(paths.shape[0], dtype=bool)
    for i, n in enumerate(sizes):
        if paired:
            k, top = signed_rank.critical_rank(n, look_confidence), n * (n + 1) // 2
        else:
            k, top = _critical_rank(n, n, look_confidence), n * n
        if k >= 1:
            called |= (paths[:, i] <= k - 1) | (paths[:, i] >= top - k + 1)
    return float(called.mean())


def verdict(low: float, high: float, *, higher_is_better: bool, margin: float = 0.03) -> str:
    """The verdict rule alone, on an interval of candidate/reference."""
    if any(math.isnan(x) for x in (low, high)):
        return "AMBIGUOUS"
    if 1 - margin <= low and high <= 1 + margin:
        return "SAME"
    if low > 1:
        return "FAST" if higher_is_better else "SLOW"
    if high < 1:
        return "SLOW" if higher_is_better else "FAST"
    return "AMBIGUOUS"


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def _check_margin(margin: float) -> None:
    if not 0 <= margin < 1:
        raise ValueError(f"margin must be in [0, 1), got {margin!r}")


def _log_values(values, side: str) -> np.ndarray:
    try:
        v = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{side} values are not numbers: {values!r}") from exc
    if v.size == 0:
        raise ValueError(f"{side} has no values")
    bad = [(i, x) for i, x in enumerate(v) if not (math.isfinite(x) and x > 0)]
    if bad:
        where = ", ".join(f"[{i}] = {float(x)!r}" for i, x in bad[:5])
        raise ValueError(f"{side} values must be positive and finite (a ratio is compared): {where}")
    return np.log(v)


@lru_cache(maxsize=4096)
def _u_counts(n: int, m: int) -> np.ndarray:
    """Number of rank orders giving each Mann-Whitney U = 0..n*m when two samples of
    n and m values (no ties) are from one distribution: the coefficients of the
    Gaussian binomial [n+m choose n]_q, built one factor at a time (exact integers)."""
    n, m = min(n, m), max(n, m)
    poly = np.zeros(n * m + 1, dtype=np.int64)
    poly[0] = 1
    for i in range(1, n + 1):
        # times (1 - q^(m+i)), then divided by (1 - q^i): a strided running sum.
        shifted = poly.copy()
        shifted[m + i:] -= poly[:poly.size - (m + i)]
        pad = (-shifted.size) % i
        cols = np.concatenate([shifted, np.zeros(pad, dtype=np.int64)]).reshape(-1, i)
        poly = np.cumsum(cols, axis=0).ravel()[:shifted.size]
    return poly


def _exact(n: int, m: int) -> bool:
    return math.comb(n + m, n) < EXACT_LIMIT


def _critical_rank(n: int, m: int, confidence: float) -> int:
    """The largest k with P(U <= k - 1) <= (1 - confidence) / 2: the interval is the
    k-th smallest to the k-th largest pairwise difference. 0 means no such k."""
    alpha2 = (1 - confidence) / 2
    if _exact(n, m):
        cdf = np.cumsum(_u_counts(n, m)) / math.comb(n + m, n)
        return int(np.searchsorted(cdf, alpha2 * (1 + 1e-12), side="right"))
    mean, sd = n * m / 2, math.sqrt(n * m * (n + m + 1) / 12)
    return max(0, int(math.floor(mean + 0.5 + scipy_stats().norm.ppf(alpha2) * sd)))


def _p_value(cand: np.ndarray, ref: np.ndarray) -> float:
    """Two-sided exact Mann-Whitney p (ties count one half, rounded toward the centre,
    so ties can only make p larger)."""
    n, m = cand.size, ref.size
    d = np.subtract.outer(cand, ref)
    u = float(np.sum(d > 0) + 0.5 * np.sum(d == 0))
    lower = math.ceil(min(u, n * m - u))
    if _exact(n, m):
        tail = float(np.sum(_u_counts(n, m)[:int(lower) + 1])) / math.comb(n + m, n)
    else:
        sd = math.sqrt(n * m * (n + m + 1) / 12)
        tail = float(scipy_stats().norm.cdf((lower + 0.5 - n * m / 2) / sd))
    return min(1.0, 2 * tail)


def _mde(cand: np.ndarray, ref: np.ndarray, k: int, seed: int) -> float:
    """The shift that puts the k-th smallest difference above 0 in MDE_POWER of
    draws from the null with the pooled observed spread of the log values. The k-th
    difference scales with the spread, so the simulation runs once per design."""
    dof = cand.size + ref.size - 2
    if dof < 1:
        return math.nan
    ss = np.sum((cand - cand.mean()) ** 2) + np.sum((ref - ref.mean()) ** 2)
    sd = math.sqrt(ss / dof)
    return math.exp(sd * _unit_detectable_shift(cand.size, ref.size, k, seed)) - 1


@lru_cache(maxsize=1024)
def _unit_detectable_shift(n: int, m: int, k: int, seed: int) -> float:
    """Log shift detectable with MDE_POWER when the log values are normal with sd 1:
    a shift delta moves every pairwise difference by delta, so detection means
    delta > -(k-th smallest null difference)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    c = rng.normal(0, 1, (MDE_DRAWS, n))
    r = rng.normal(0, 1, (MDE_DRAWS, m))
    diffs = (c[:, :, None] - r[:, None, :]).reshape(MDE_DRAWS, -1)
    kth_low = np.partition(diffs, k - 1, axis=1)[:, k - 1]
    return -float(np.quantile(kth_low, 1 - MDE_POWER))


def margin_for(kind: str, margin: float, config_margin: float | None) -> float:
    """SAME's margin for a pair of this kind ("library", "config", "aa"): a run's declared
    configuration margin ([run].config_margin) applies to configuration pairs only. The
    sweep's loop and the report both ask here, so they judge alike."""
    return config_margin if kind == "config" and config_margin is not None else margin
