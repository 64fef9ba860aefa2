"""Exact one-sample Wilcoxon signed-rank machinery for paired comparisons: the null
distribution of W+ (sum of the ranks of the positive differences), the critical rank
that turns it into a Hodges-Lehmann interval on Walsh averages, and the smallest
number of pairs that can reach a decision. Plain arrays in, numbers out; decide.py
builds verdicts on it.

Why paired: the sweep runs the libraries of one configuration back to back at every
repetition (A B, then B A), so drift of the host over the run moves both members of a
pair alike; the difference of their logs cancels it, where the two-sample test counts
it as noise. Under "no difference" each pair's sign is a fair coin whatever the
distribution, so the test's false-call rate is exact (for symmetric differences).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .lazy_scipy import scipy_stats

# Above this many pairs 2^n leaves int64: use the normal approximation of W+.
EXACT_PAIRS = 60


@lru_cache(maxsize=256)
def w_counts(n: int) -> np.ndarray:
    """Number of the 2^n sign patterns giving each W+ = 0..n(n+1)/2: the coefficients
    of prod_{i=1..n} (1 + q^i), built one factor at a time (exact integers)."""
    poly = np.zeros(n * (n + 1) // 2 + 1, dtype=np.int64)
    poly[0] = 1
    for i in range(1, n + 1):
        poly[i:] = poly[i:] + poly[:-i].copy()
    return poly


def critical_rank(n: int, confidence: float) -> int:
    """The largest k with P(W+ <= k - 1) <= (1 - confidence) / 2: the interval runs
    from the k-th smallest to the k-th largest Walsh average. 0 means no such k."""
    if n < 1:
        return 0
    alpha2 = (1 - confidence) / 2
    if n <= EXACT_PAIRS:
        cdf = np.cumsum(w_counts(n)) / float(2 ** n)
        return int(np.searchsorted(cdf, alpha2 * (1 + 1e-12), side="right"))
    mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return max(0, int(math.floor(mean + 0.5 + scipy_stats().norm.ppf(alpha2) * sd)))


def min_pairs(confidence: float) -> int:
    """The smallest number of pairs whose most extreme sign pattern (all one way,
    p = 2 / 2^n) is significant at this confidence: 6 at 95%, 7 at 98.25%."""
    n = 1
    while critical_rank(n, confidence) < 1:
        n += 1
    return n


def walsh_averages(d: np.ndarray) -> np.ndarray:
    """All (d_i + d_j) / 2 with i <= j, sorted: n(n+1)/2 values."""
    i, j = np.triu_indices(d.size)
    return np.sort((d[i] + d[j]) / 2)


def p_value(d: np.ndarray) -> float:
    """Two-sided exact signed-rank p (scipy); 1 when every difference is zero."""
    if not np.any(d != 0):
        return 1.0
    method = "exact" if d.size <= EXACT_PAIRS else "approx"
    return float(scipy_stats().wilcoxon(d, method=method).pvalue)


@lru_cache(maxsize=1024)
def unit_detectable_shift(n: int, k: int, seed: int, power: float, draws: int) -> float:
    """Log shift detectable with `power` when the differences are normal with sd 1:
    a shift delta moves every Walsh average by delta, so detection means delta >
    -(k-th smallest null Walsh average)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    d = rng.normal(0, 1, (draws, n))
    i, j = np.triu_indices(n)
    walsh = (d[:, i] + d[:, j]) / 2
    kth_low = np.partition(walsh, k - 1, axis=1)[:, k - 1]
    return -float(np.quantile(kth_low, 1 - power))


def null_w_paths(sizes: tuple[int, ...], draws: int, seed: int) -> np.ndarray:
    """W+ after n pairs, at each look size, for simulated A/A sequences (draws x
    looks): symmetric continuous differences, ranked among the first n at each look."""
    rng = np.random.Generator(np.random.PCG64(seed))
    d = rng.normal(0, 1, (draws, max(sizes)))
    out = []
    for n in sizes:
        ranks = scipy_stats().rankdata(np.abs(d[:, :n]), axis=1)
        out.append(np.sum(ranks * (d[:, :n] > 0), axis=1).astype(np.int64))
    return np.stack(out, axis=1)
