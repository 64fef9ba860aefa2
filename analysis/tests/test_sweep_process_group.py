"""Bench processes run in a process group of their own (a kill takes perf's child
with it) but in the runner's session: a session per role is an autogroup per role,
which made small round trips on one core bimodal (testbed/sweep/process.py)."""
from __future__ import annotations

import os
import sys
import time

from testbed.sweep import process

PRINT_IDS = "import os; print(os.getsid(0), os.getpgid(0), os.getpid())"


def test_roles_share_the_runner_session_each_in_its_own_group(tmp_path):
    procs = [process.Proc([sys.executable, "-c", PRINT_IDS], dict(os.environ), tmp_path) for _ in range(2)]
    outcomes = process.supervise(procs, timeout_s=30)
    ids = [tuple(int(x) for x in o.stdout.split()) for o in outcomes]
    for sid, pgid, pid in ids:
        assert sid == os.getsid(0), "a role got a session (an autogroup) of its own"
        assert pgid == pid, "a role is not the leader of its own process group"
    assert ids[0][1] != ids[1][1]


def dead(pid: int) -> bool:
    """Gone, or a zombie waiting for a reaper (SIGKILL has done its work)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_a_kill_takes_the_whole_group(tmp_path):
    # The child starts a grandchild that would outlive a kill of the child alone.
    script = ("import subprocess, sys, time; "
              "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
              "print(g.pid, flush=True); time.sleep(60)")
    p = process.Proc([sys.executable, "-c", script], dict(os.environ), tmp_path)
    outcome = process.supervise([p], timeout_s=1.5)[0]
    assert outcome.killed == "timeout"
    grandchild = int(outcome.stdout.split()[0])
    deadline = time.monotonic() + 5
    while not dead(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert dead(grandchild), "the grandchild survived the kill of its group"
