"""Two-process cells end to end with fake benches that really talk over loopback: the
receiver binds, the sender connects, their lines are joined into one result; a role
that dies or hangs fails its cell with the cause while the sweep goes on; placement
pins reach the bench and the threads' affinities are checked."""
from __future__ import annotations

import json
import os

import pytest

from test_sweep_support import (
    assert_failure_named,
    env_for,
    make_prebuilt,
    only_run_dir,
    read_results,
    run_testbed,
    write_experiment,
)

TWO_CPUS = len(os.sched_getaffinity(0)) >= 2


def experiment(tmp_path, axes: str, transports='["tcp"]', sizes="[64, 1024]"):
    text = (write_experiment(tmp_path).read_text()
            .replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]')
            .replace('transports = ["tcp"]', f"transports = {transports}")
            .replace("sizes = [64, 1024]", f"sizes = {sizes}")
            .replace("repetitions = 2", "repetitions = 1")
            .replace("io_threads = [1]", "io_threads = [1]\n" + axes))
    return write_experiment(tmp_path, text.replace("[profiles.quick]\nrepetitions = 1\n", ""))


def run(tmp_path, exp, behaviours=None):
    listing = make_prebuilt(tmp_path, behaviours or {"libzmq-4.3.5": {}, "zlink": {}})
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing), timeout=300)
    run_dir = only_run_dir(tmp_path / "out")
    return proc, read_results(run_dir), json.loads((run_dir / "manifest.json").read_text())


@pytest.mark.skipif(not TWO_CPUS, reason="split placement needs two usable CPUs")
def test_two_process_cells_join_receiver_and_sender_lines(tmp_path):
    exp = experiment(tmp_path, 'process_model = ["two-process"]\nplacement = ["split"]',
                     transports='["tcp", "ipc"]')
    proc, recs, m = run(tmp_path, exp)
    assert proc.returncode == 0, proc.stderr
    assert len(recs) == 2 * 2 * 2 * 2 and all(r["status"] == "ok" for r in recs)
    for r in recs:
        res = r["result"]
        assert r["process_model"] == "two-process" and res["role"] == "joined"
        # throughput timed by the receiver (real bytes over loopback), latency by the sender
        assert res["throughput"]["count"] == 1000 and res["throughput"]["receiver_seconds"] > 0
        assert res["latency"]["count"] == 1000 and res["sender_throughput"]["sender_seconds"] > 0
        assert {t["process"] for t in res["threads"]} == {"receiver", "sender"}
        receiver_argv, sender_argv = r["command"]["receiver"], r["command"]["sender"]
        assert receiver_argv[receiver_argv.index("--role") + 1] == "receiver"
        assert sender_argv[sender_argv.index("--role") + 1] == "sender"
        assert "--bind" in receiver_argv and "--connect" in sender_argv
        cpus = m["placement"]["cpus"]
        assert r["pins"] == {"sender": str(cpus[0]), "receiver": str(cpus[1])}
        assert r["placement_check"]["ok"] is True and r["placement_check"]["checked"] == 2
        if m["perf"]["available"]:  # both processes counted
            assert r["perf"]["processes"] == 2 and r["roles"]["sender"]["perf"]["available"]
    assert m["placement"]["threads"]["split"]["verified"] == len(recs)


def test_a_dead_role_fails_its_cell_with_the_cause_and_the_sweep_goes_on(tmp_path):
    exp = experiment(tmp_path, 'process_model = ["two-process"]')
    behaviours = {"libzmq-4.3.5": {}, "zlink": {"64:receiver": "crash-after-connect", "1024:sender": "hang"}}
    text = exp.read_text().replace("timeout_s = 20", "timeout_s = 4")
    proc, recs, m = run(tmp_path, write_experiment(tmp_path, text), behaviours)
    assert proc.returncode == 1, proc.stderr
    by = {(r["library"], r["msg_size"], r["config"]): r for r in recs}
    assert len(recs) == 8
    for cfg in ("baseline", "16 KiB"):
        dead = by[("zlink", 64, cfg)]
        assert dead["status"] == "failed" and dead["result"] is None
        assert "receiver: killed by signal SIGABRT" in dead["failure"]
        assert "sender:" in dead["failure"]  # the sender's side of it is named too
        assert "crashing after connect" in dead["roles"]["receiver"]["stderr_tail"]
        assert_failure_named(proc.stderr, dead, "receiver: killed by signal SIGABRT")
        assert dead["wall_seconds"] < 4  # the peer was not left to hang until the cell timeout
        hung = by[("zlink", 1024, cfg)]
        assert hung["status"] == "timeout" and "sender: cell timeout" in hung["failure"]
        assert by[("libzmq-4.3.5", 64, cfg)]["status"] == "ok"
    assert len(m["summary"]["failures"]) == 4


@pytest.mark.skipif(not TWO_CPUS, reason="split placement needs two usable CPUs")
def test_one_process_placement_reaches_the_bench_and_a_misplaced_thread_is_caught(tmp_path):
    exp = experiment(tmp_path, 'placement = ["split", "one-core"]', sizes="[64]")
    proc, recs, m = run(tmp_path, exp, {"libzmq-4.3.5": {}, "zlink": {"64": "misplace"}})
    assert proc.returncode == 0, proc.stderr  # misplaced threads are recorded, not a failure
    cpus = [str(c) for c in m["placement"]["cpus"][:2]]
    for r in recs:
        argv = r["command"]
        want = cpus if r["placement"] == "split" else [cpus[0], cpus[0]]
        assert argv[argv.index("--pin-sender") + 1] == want[0]
        assert argv[argv.index("--pin-receiver") + 1] == want[1]
        assert r["placement_check"]["ok"] is (r["library"] == "libzmq-4.3.5")
    zl = next(r for r in recs if r["library"] == "zlink" and r["placement"] == "split")
    assert {x["role"] for x in zl["placement_check"]["mismatches"]} == {"sender", "receiver"}
    summary = m["placement"]["threads"]
    assert summary["split"]["verified"] == 2 and summary["split"]["mismatched"] == 2


FAKE_SSH = """#!/bin/sh
# A stand-in for ssh: skip the options, "reach" the host by running the command here.
while [ "$#" -gt 0 ]; do case "$1" in -o) shift 2 ;; --) shift; break ;; *) host="$1"; shift ;; esac; done
if [ "$host" = "unreachable" ]; then
  echo "ssh: connect to host unreachable port 22: No route to host" >&2; exit 255
fi
echo "$host" >> "$(dirname "$0")/hosts-reached"
exec sh -c "$*"
"""


def ssh_experiment(tmp_path, receiver: str):
    text = (experiment(tmp_path, 'process_model = ["two-host"]', sizes="[1024]").read_text()
            + f'\n[hosts]\ndriver = "ssh"\nreceiver = "{receiver}"\nsender = "host-b"\n'
              'receiver_address = "127.0.0.1"\nport = 47311\n')
    return write_experiment(tmp_path, text)


def with_fake_ssh(tmp_path, env: dict) -> dict:
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    (bindir / "ssh").write_text(FAKE_SSH)
    (bindir / "ssh").chmod(0o755)
    return {**env, "PATH": f"{bindir}:{env['PATH']}"}


def test_the_ssh_driver_runs_each_role_on_its_host(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    env = with_fake_ssh(tmp_path, env_for(listing))
    proc = run_testbed(["run", str(ssh_experiment(tmp_path, "host-a")), "--out", str(tmp_path / "out")], env,
                       timeout=300)
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    recs = read_results(run_dir)
    assert len(recs) == 4 and all(r["status"] == "ok" for r in recs)
    for r in recs:
        assert r["hosts"] == {"receiver": "ssh host-a", "sender": "ssh host-b"}
        sender = r["command"]["sender"]
        assert sender[:1] == ["ssh"] and "tcp://127.0.0.1:47311" in sender[-1]
        assert "timeout --signal=KILL" in r["command"]["receiver"][-1]
        assert r["roles"]["receiver"]["perf"]["reason"] == "perf is not run on ssh hosts"
    reached = (tmp_path / "fakebin" / "hosts-reached").read_text().split()
    assert {"host-a", "host-b"} <= set(reached)
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["hosts"]["driver"] == "ssh" and m["hosts"]["receiver"]["name"] == "ssh host-a"
    assert m["hosts"]["sender"]["kernel"]  # described through the same driver


def test_an_unreachable_host_fails_the_two_host_cells_with_the_cause(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    env = with_fake_ssh(tmp_path, env_for(listing))
    proc = run_testbed(["run", str(ssh_experiment(tmp_path, "unreachable")), "--out", str(tmp_path / "out")],
                       env, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "two-host cells cannot run here" in proc.stderr
    recs = read_results(only_run_dir(tmp_path / "out"))
    assert len(recs) == 4
    for r in recs:
        assert r["status"] == "failed" and r["result"] is None
        assert r["failure"].startswith("two-host: ssh unreachable is unreachable")
        assert "No route" in r["failure"]
        assert_failure_named(proc.stderr, r, "ssh unreachable is unreachable")
