"""Two processes that belong together: supervision (a dead role takes its peer down
after a grace period, a hung one is killed at the deadline) and the verdict on the
pair (each role's cause named)."""
from __future__ import annotations

import time

from testbed.sweep import outcome, process


def procs(tmp_path, *scripts):
    return [process.Proc(["sh", "-c", s], {"PATH": "/usr/bin:/bin"}, tmp_path) for s in scripts]


def test_both_finish(tmp_path):
    outs = process.supervise(procs(tmp_path, "echo r", "echo s"), 10)
    assert [o.code for o in outs] == [0, 0] and outs[0].stdout == "r\n" and not outs[1].killed


def test_a_dead_role_takes_its_peer_down_after_the_grace_period(tmp_path):
    t0 = time.monotonic()
    outs = process.supervise(procs(tmp_path, "echo dying >&2; kill -ABRT $$", "sleep 60"), 30)
    took = time.monotonic() - t0
    assert took < process.GRACE_AFTER_PEER_FAILED_S + 5
    assert outs[0].code < 0 and outs[1].code is None and outs[1].killed == "peer failed"
    status, failure, code = outcome.roles_status({"receiver": (outs[0], ""), "sender": (outs[1], "")})
    assert status == "failed" and code == outs[0].code
    assert "receiver: killed by signal SIGABRT" in failure
    assert "sender: killed after the other process of this cell failed" in failure


def test_a_hung_role_is_killed_at_the_deadline(tmp_path):
    outs = process.supervise(procs(tmp_path, "echo ok", "sleep 60"), 1.0)
    assert outs[0].code == 0 and outs[1].code is None and outs[1].killed == "timeout"
    status, failure, code = outcome.roles_status({"receiver": (outs[0], ""), "sender": (outs[1], "")})
    assert status == "timeout" and code is None and failure.startswith("sender: cell timeout")


def test_bench_reported_timeout_and_bad_output_are_named_per_role(tmp_path):
    outs = process.supervise(procs(tmp_path, "exit 3", "echo x"), 10)
    status, failure, _ = outcome.roles_status({"receiver": (outs[0], ""),
                                               "sender": (outs[1], "malformed output: not JSON")})
    assert status == "failed"
    assert "receiver: bench reported a timeout" in failure and "sender: malformed output" in failure
