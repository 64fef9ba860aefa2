"""scipy.stats on first use. Importing it takes 1-2 s; every `./testbed` command that
imports the statistics (a run imports them through its stopping rule) paid that at
start-up even when it never tested anything, and the test suite starts hundreds."""
from __future__ import annotations

from functools import cache


@cache
def scipy_stats():
    from scipy import stats

    return stats
