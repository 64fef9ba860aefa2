"""The run's record of other work on the host: a busy process at the normal policy is
counted as competing and named; the same process under SCHED_IDLE is not."""
from __future__ import annotations

import os
import subprocess
import sys

from testbed.sweep import hostload

BUSY = "import time\nend = time.time() + 5\nwhile time.time() < end: pass\n"


def _busy(idle: bool) -> subprocess.Popen:
    def policy():  # explicit both ways: the suite itself may run under SCHED_IDLE
        os.sched_setscheduler(0, os.SCHED_IDLE if idle else os.SCHED_OTHER, os.sched_param(0))
    return subprocess.Popen([sys.executable, "-c", BUSY], preexec_fn=policy)


def test_a_busy_normal_process_competes_and_is_named():
    child = _busy(idle=False)
    try:
        load = hostload.competing_cpu(window_s=0.5)
    finally:
        child.kill()
        child.wait()
    assert load["normal_cpus"] >= 0.1
    assert child.pid in [b["pid"] for b in load["busiest"]]
    assert "CPUs at a normal scheduling policy" in (hostload.warning(load) or "")


def test_the_same_process_under_sched_idle_does_not_compete():
    child = _busy(idle=True)
    try:
        load = hostload.competing_cpu(window_s=0.5)
    finally:
        child.kill()
        child.wait()
    assert child.pid not in [b["pid"] for b in load["busiest"]]


def test_no_warning_for_a_quiet_host():
    assert hostload.warning({"normal_cpus": 0.05, "idle_cpus": 1.9, "busiest": []}) is None
