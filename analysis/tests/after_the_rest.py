"""For a `beside` test that times something (marked `after_the_rest` too): wait, before
measuring, until the rest of the tests has ended.

`./testbed test` runs the `beside` tests in a second pytest under SCHED_IDLE while the
suites and the rest of pytest run (suites/runners.py). Builds and rendering lose
nothing that way; a timed comparison does: a CI run once found the bisect test's two
builds of the same code AMBIGUOUS against a 40% margin, its bench starved in turns by
the timed tests beside it. runners.finish_pytest_beside creates the file named in
REST_DONE_ENV once the rest has ended (after raising this run to its own class); a
pytest not started beside anything has no such variable and does not wait.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from testbed.suites.runners import REST_DONE_ENV

LIMIT_S = 3600.0  # a guard against a rest that never ends; CI's whole budget is 90 minutes


def wait_for_the_rest(limit_s: float = LIMIT_S, poll_s: float = 1.0) -> str:
    """Blocks until the rest has ended (or at once when run on its own); says what it did."""
    named = os.environ.get(REST_DONE_ENV)
    if not named:
        return "not run beside the rest: measuring at once"
    started = time.monotonic()
    while not Path(named).exists():
        if time.monotonic() - started > limit_s:
            return f"the rest had not ended after {limit_s:.0f} s ({named} absent): measuring anyway"
        time.sleep(poll_s)
    return f"waited {time.monotonic() - started:.0f} s for the rest to end"
