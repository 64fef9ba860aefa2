"""Benchmark processes under supervision: each in its own process group (so a kill
takes its children, e.g. perf's workload, with it), output captured in files (a
chatty process can never block on a full pipe), and a hard deadline.

A process group, not a session: with the kernel's autogroup scheduling
(/proc/sys/kernel/sched_autogroup_enabled = 1, the Debian default) every new
session is a scheduling group of its own. Two roles in two sessions on one core
made every small round trip bimodal for both libraries (~26-28 us or ~15-20 us per
run, 2026-11-24, docs/profiling/2026-11-24-autogroup.md); in one session, as when
a user starts both from one shell, they are not. So the roles stay in the runner's
session: one scheduling group, the user's regime.

`supervise` runs several processes that belong together (the two roles of a cell):
when one of them fails, the others get a short grace period to notice and are then
killed, so a dead receiver never leaves its sender hanging until the cell timeout.
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

GRACE_AFTER_PEER_FAILED_S = 3.0
POLL_S = 0.02


@dataclass
class Outcome:
    code: int | None          # exit status; negative = signal; None = killed by us
    stdout: str
    stderr: str
    seconds: float
    killed: str = ""          # why we killed it: "timeout" or "peer failed"


class Proc:
    def __init__(self, argv: list[str], env: dict, workdir: Path):
        self.argv = argv
        self._out = tempfile.TemporaryFile(dir=workdir)
        self._err = tempfile.TemporaryFile(dir=workdir)
        self.t0 = time.monotonic()
        self.popen = subprocess.Popen(argv, stdout=self._out, stderr=self._err, env=env,
                                      stdin=subprocess.DEVNULL, process_group=0)
        self.killed = ""
        self.t1: float | None = None

    def poll(self) -> int | None:
        code = self.popen.poll()
        if code is not None and self.t1 is None:
            self.t1 = time.monotonic()
        return code

    def kill(self, why: str) -> None:
        if self.poll() is not None:
            return
        self.killed = why
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait()
        self.t1 = time.monotonic()

    def outcome(self) -> Outcome:
        code = None if self.killed else self.popen.returncode
        texts = []
        for f in (self._out, self._err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
            f.close()
        return Outcome(code, texts[0], texts[1], (self.t1 or time.monotonic()) - self.t0, self.killed)


def failed(code: int | None) -> bool:
    return code is not None and code != 0


def supervise(procs: list[Proc], timeout_s: float) -> list[Outcome]:
    """Wait for all; kill everything at the deadline, and the survivors shortly after
    one of them fails. Ctrl-C kills them all and propagates."""
    deadline = time.monotonic() + timeout_s
    grace_end: float | None = None
    try:
        while any(p.poll() is None for p in procs):
            now = time.monotonic()
            if now >= deadline:
                for p in procs:
                    p.kill("timeout")
                break
            if grace_end is None and any(failed(p.poll()) for p in procs):
                grace_end = now + GRACE_AFTER_PEER_FAILED_S
            if grace_end is not None and now >= grace_end:
                for p in procs:
                    p.kill("peer failed")
                break
            time.sleep(POLL_S)
    except BaseException:
        for p in procs:
            p.kill("interrupted")
        raise
    return [p.outcome() for p in procs]


def run(argv: list[str], env: dict, timeout_s: float, workdir: Path) -> Outcome:
    """One process, deadline `timeout_s`."""
    return supervise([Proc(argv, env, workdir)], timeout_s)[0]
