"""Statistics of one cell (summary, plot band) and of published summaries (Welch
interval of a ratio of means). No pandas here: plain arrays in, numbers out, so each
function is easy to test against a known answer. Verdicts on repetitions: decide.py."""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from .lazy_scipy import scipy_stats

N_BOOT = 2000
LEVEL = 0.95
MDE_POWER = 0.80


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    q1: float
    q3: float
    cv: float  # std/mean (ddof=1); NaN below 2 values

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


def summarize(values) -> Summary:
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return Summary(0, math.nan, math.nan, math.nan, math.nan)
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    cv = float(np.std(v, ddof=1) / np.mean(v)) if v.size > 1 and np.mean(v) != 0 else math.nan
    return Summary(int(v.size), float(med), float(q1), float(q3), cv)


def seed_for(key: str) -> int:
    """A seed from the cell's identity, so a cell's interval does not depend on which
    other cells were analysed or in what order."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")


def bootstrap_median(values, key: str, n_boot: int = N_BOOT, level: float = LEVEL):
    """Percentile bootstrap interval of one sample's median: the bands of the plots."""
    v = np.asarray(values, dtype=float)
    rng = np.random.Generator(np.random.PCG64(seed_for(key)))
    meds = np.median(v[rng.integers(0, v.size, (n_boot, v.size))], axis=1)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(meds, [alpha, 1 - alpha])
    return float(lo), float(hi)


def summary_ratio(mean_c, std_c, n_c, mean_r, std_r, n_r, level: float = LEVEL, power: float = MDE_POWER):
    """Interval of mean_c / mean_r from published mean +/- std of n runs each (delta
    method, Welch degrees of freedom), Welch's t-test p, and the relative change this
    design would detect with `power`. For reports that kept only summaries: an honest
    interval where the raw runs are gone. Returns (ratio, lo, hi, p, mde)."""
    ratio = mean_c / mean_r
    var_c, var_r = std_c ** 2 / n_c, std_r ** 2 / n_r
    rel_se = math.sqrt(var_c / mean_c ** 2 + var_r / mean_r ** 2)
    if var_c + var_r > 0:
        dof = (var_c + var_r) ** 2 / (var_c ** 2 / (n_c - 1) + var_r ** 2 / (n_r - 1))
    else:
        dof = n_c + n_r - 2
    sps = scipy_stats()
    t = float(sps.t.ppf(1 - (1 - level) / 2, dof))
    p = float(sps.ttest_ind_from_stats(mean_c, std_c, n_c, mean_r, std_r, n_r, equal_var=False).pvalue)
    mde = (t + float(sps.t.ppf(power, dof))) * rel_se
    return ratio, ratio * (1 - t * rel_se), ratio * (1 + t * rel_se), p, mde
