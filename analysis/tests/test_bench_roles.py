"""Placement and process models of the bench harness, against the real builds of
libzmq-4.3.5 and zlink: every pattern x transport in one process and as a
receiver/sender pair of processes; pins honoured and proven from /proc (each side's
thread and its library's IO threads on that side's CPUs); a CPU the process may not
use refused with exit 2; an absent or dying peer ends with exit 3, never a hang.
Counts are tiny: behaviour, not performance."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from testbed.bench import validate
from testbed.bench.command import (
    bench_argv,
    join_roles,
    local_endpoints,
    role_argvs,
    run_bench,
    run_two_process,
)
from testbed.bench.patterns import PATTERN_TRANSPORTS, PATTERNS, transports_for

pytestmark = pytest.mark.slow

LIBS = ("libzmq-4.3.5", "zlink")
COUNTS = {"count": 2000, "lat_count": 40, "timeout_ms": 8000}
CPUS = sorted(os.sched_getaffinity(0))


@pytest.fixture(scope="module", params=LIBS)
def lib(request, built_library):
    return built_library(request.param)


def needs_two_cpus():
    if len(CPUS) < 2:
        pytest.skip(f"split placement needs 2 CPUs; this process may use {CPUS}")


ONE_PROCESS = [(p, t) for p in PATTERNS for t in PATTERN_TRANSPORTS[p]]


@pytest.mark.parametrize("pattern,transport", ONE_PROCESS, ids=[f"{p}-{t}" for p, t in ONE_PROCESS])
def test_one_process_every_pattern(lib, pattern, transport):
    r = run_bench(bench_argv(lib.bench_binary(pattern), transport, 1024, **COUNTS), timeout_s=60)
    assert r.exit_code == 0, r.stderr
    res = r.result
    assert validate.bench_result_problems(res, pattern=pattern, transport=transport, msg_size=1024,
                                          library=lib.name, count=2000, lat_count=40) == []
    assert res["role"] == "both" and res["settings"]["process_model"] == "one-process"
    thr = res["throughput"]
    _check_delivery(pattern, thr)
    assert thr["span_seconds"] >= thr["receiver_seconds"]  # one clock: the span contains the window
    # Each side has its own context, except inproc, which needs one.
    assert res["settings"]["contexts"] == (1 if transport == "inproc" else 2)


TWO_PROCESS = [(p, t) for p in PATTERNS for t in transports_for(p, "two-process")]


@pytest.mark.parametrize("pattern,transport", TWO_PROCESS, ids=[f"{p}-{t}" for p, t in TWO_PROCESS])
def test_two_process_every_pattern(lib, pattern, transport):
    endpoints = local_endpoints(transport)
    receiver, sender = role_argvs(lib.bench_binary(pattern), transport, 1024, endpoints, **COUNTS)
    pair = run_two_process(receiver, sender, timeout_s=60)
    assert pair.receiver.exit_code == 0, pair.receiver.stderr
    assert pair.sender.exit_code == 0, pair.sender.stderr
    r, s = pair.receiver.result, pair.sender.result
    assert (r["role"], s["role"]) == ("receiver", "sender")
    for line in (r, s):
        assert validate.bench_result_problems(line, pattern=pattern, transport=transport, msg_size=1024,
                                              library=lib.name) == []
        assert line["settings"]["process_model"] == "two-process" and line["settings"]["contexts"] == 1
    assert r["throughput"].get("sent", r["throughput"]["count"]) == 2000 and r["latency"] is None
    _check_delivery(pattern, r["throughput"])
    assert r["throughput"]["span_seconds"] >= r["throughput"]["receiver_seconds"]  # one host, one clock
    assert s["throughput"] is None and s["latency"]["count"] == 40
    # The receiver's line carries the sender's own seconds, sent over the control link.
    sender_seconds = s["sender_throughput"]["sender_seconds"]
    assert r["throughput"]["sender_seconds"] == pytest.approx(sender_seconds, rel=1e-9)
    joined = pair.result
    assert validate.bench_result_problems(joined, pattern=pattern, count=2000, lat_count=40) == []
    assert joined == join_roles(r, s)


def _check_delivery(pattern, thr):
    """At the libraries' default HWM (1000) PUB may drop; every other pattern blocks."""
    if pattern == "PUBSUB":
        assert thr["delivery"] == "lossy" and thr["sent"] == 2000 and 0 < thr["count"] <= 2000
    else:
        assert thr["delivery"] == "lossless" and thr["count"] == 2000


def _by_role(threads):
    out = {}
    for t in threads:
        out.setdefault(t["role"], []).append(t)
    return out


@pytest.mark.parametrize("transport", ["tcp", "ipc"])
def test_split_placement_one_process(lib, transport):
    needs_two_cpus()
    pins = {"pin_sender": str(CPUS[0]), "pin_receiver": str(CPUS[1])}
    r = run_bench(bench_argv(lib.bench_binary("PAIR"), transport, 64, **COUNTS, **pins), timeout_s=60)
    assert r.exit_code == 0, r.stderr
    res = r.result
    assert res["placement"] == {"sender": pins["pin_sender"], "receiver": pins["pin_receiver"],
                                "allowed": res["placement"]["allowed"]}
    roles = _by_role(res["threads"])
    assert [t["cpus"] for t in roles["sender"]] == [pins["pin_sender"]]
    assert [t["cpus"] for t in roles["receiver"]] == [pins["pin_receiver"]]
    # The library's IO threads were started on the side's pinned thread: they are there.
    for side in ("sender", "receiver"):
        lib_threads = roles.get(f"library:{side}", [])
        assert lib_threads, f"no library thread attributed to the {side}: {res['threads']}"
        assert {t["cpus"] for t in lib_threads} == {pins[f"pin_{side}"]}, lib_threads
    assert "library" not in roles, roles.get("library")  # every library thread has a side


def test_inproc_shares_one_context_on_the_receiver(lib):
    needs_two_cpus()
    pins = {"pin_sender": str(CPUS[0]), "pin_receiver": str(CPUS[1])}
    r = run_bench(bench_argv(lib.bench_binary("PAIR"), "inproc", 64, **COUNTS, **pins), timeout_s=60)
    assert r.exit_code == 0, r.stderr
    roles = _by_role(r.result["threads"])
    assert r.result["settings"]["contexts"] == 1
    assert "library:sender" not in roles
    assert {t["cpus"] for t in roles["library:receiver"]} == {pins["pin_receiver"]}


def test_split_placement_two_process(lib):
    needs_two_cpus()
    pins = {"pin_sender": str(CPUS[0]), "pin_receiver": str(CPUS[1])}
    receiver, sender = role_argvs(lib.bench_binary("DEALER_DEALER"), "tcp", 64, local_endpoints("tcp"),
                                  **COUNTS, **pins)
    pair = run_two_process(receiver, sender, timeout_s=60)
    assert pair.receiver.exit_code == pair.sender.exit_code == 0, pair.receiver.stderr + pair.sender.stderr
    for line, side in ((pair.receiver.result, "receiver"), (pair.sender.result, "sender")):
        # A role process pins itself whole: every thread, its library's included.
        assert {t["cpus"] for t in line["threads"]} == {pins[f"pin_{side}"]}, line["threads"]
        assert any(t["role"] == f"library:{side}" for t in line["threads"])


@pytest.mark.parametrize("flag", ["--pin-sender", "--pin-receiver"])
def test_pin_outside_the_allowed_cpus_exits_2(lib, flag):
    bad = str(max(CPUS) + 1)
    argv = [str(lib.bench_binary("PAIR")), "--transport", "tcp", "--size", "64", flag, bad]
    r = run_bench(argv, timeout_s=30)
    assert r.exit_code == 2 and r.stdout == ""
    first = r.stderr.splitlines()[0]
    assert flag in first and bad in first and "allowed" in first, first


@pytest.mark.parametrize("args,fragment", [
    (["--pin-sender", "x"], "--pin-sender"),
    (["--pin-receiver", "3-1"], "--pin-receiver"),
    (["--role", "server"], "--role"),
    (["--role", "receiver", "--transport", "inproc"], "inproc works only"),
    (["--role", "sender", "--bind", "tcp://127.0.0.1:5555"], "--bind is for"),
    (["--role", "receiver", "--connect", "tcp://127.0.0.1:5555"], "--connect is for"),
    (["--process-model", "two-host"], "does not fit --role both"),
    (["--role", "sender", "--process-model", "one-process"], "does not fit"),
    (["--bind", "ipc:///tmp/x"], "is not a tcp endpoint"),
    (["--role", "receiver", "--bind", "tcp://127.0.0.1:*"], "give --control"),
    (["--role", "sender", "--connect", "tcp://host"], "--connect"),
    (["--role", "receiver", "--no-peer"], "--no-peer"),
])
def test_bad_role_arguments_exit_2(lib, args, fragment):
    argv = [str(lib.bench_binary("PAIR")), "--transport", "tcp", "--size", "64", *args]
    if "--transport" in args:
        argv[1:3] = []
    r = run_bench(argv, timeout_s=30)
    assert r.exit_code == 2, r.stderr
    assert fragment in r.stderr.splitlines()[0]


@pytest.mark.parametrize("role", ["receiver", "sender"])
def test_absent_peer_exits_3_within_the_timeout(lib, role):
    ep = local_endpoints("tcp")
    flag = {"receiver": ("bind", ep.bind), "sender": ("connect", ep.connect)}[role]
    start = time.monotonic()
    r = run_bench(bench_argv(lib.bench_binary("PAIR"), "tcp", 64, role=role, timeout_ms=700,
                             **{flag[0]: flag[1]}), timeout_s=30)
    elapsed = time.monotonic() - start
    assert r.exit_code == 3 and r.stdout == "", r.stderr
    assert "timeout" in r.stderr and ("control" in r.stderr or "connected" in r.stderr)
    assert 0.6 < elapsed < 4.0


def _start_pair(lib, pattern, transport, **options):
    endpoints = local_endpoints(transport)
    receiver, sender = role_argvs(lib.bench_binary(pattern), transport, 64, endpoints, **options)
    procs = []
    for argv in (receiver, sender):
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    return procs


@pytest.mark.parametrize("victim", ["receiver", "sender"])
@pytest.mark.parametrize("pattern", ["PAIR", "PUBSUB"])
def test_peer_killed_mid_run_exits_3(lib, victim, pattern):
    # PAIR blocks at a finite HWM (bounded memory); PUB would drop there, so it keeps
    # HWM 0 and the run is cut short instead.
    receiver, sender = _start_pair(lib, pattern, "tcp", count=50_000_000, timeout_ms=5000, mode="thr",
                                   hwm=1000 if pattern == "PAIR" else 0)
    killed, survivor = (receiver, sender) if victim == "receiver" else (sender, receiver)
    time.sleep(0.5)  # inside the throughput phase
    assert survivor.poll() is None and killed.poll() is None
    killed.send_signal(signal.SIGKILL)
    start = time.monotonic()
    out, err = survivor.communicate(timeout=30)
    elapsed = time.monotonic() - start
    killed.communicate()
    assert survivor.returncode == 3, err
    # Usually "during throughput"; on a loaded host the kill may still find it shaking hands.
    assert "control connection closed during" in err and out == ""
    assert elapsed < 2.0  # the closed control connection is seen at once, not after a timeout


def test_settings_mismatch_is_refused_by_both(lib):
    ep = local_endpoints("tcp")
    receiver = bench_argv(lib.bench_binary("PAIR"), "tcp", 64, role="receiver", bind=ep.bind, count=1000)
    sender = bench_argv(lib.bench_binary("PAIR"), "tcp", 64, role="sender", connect=ep.connect, count=2000)
    pair = run_two_process(receiver, sender, timeout_s=30)
    assert pair.receiver.exit_code == pair.sender.exit_code == 2
    assert "count: receiver 1000, sender 2000" in pair.sender.stderr
    assert "the sender refused the run" in pair.receiver.stderr


def test_explicit_process_model_and_control_are_recorded(lib):
    ep = local_endpoints("tcp")
    port = int(ep.bind.rsplit(":", 1)[1])
    control = f"tcp://127.0.0.1:{port + 1}"
    receiver, sender = role_argvs(lib.bench_binary("PAIR"), "tcp", 64, ep, process_model="two-host",
                                  **COUNTS)
    pair = run_two_process(receiver, sender, timeout_s=60)
    assert pair.receiver.exit_code == 0, pair.receiver.stderr
    for line in (pair.receiver.result, pair.sender.result):
        assert line["settings"]["process_model"] == "two-host"
        assert line["settings"]["control"] == control
    # Two hosts have two clocks: no span is claimed.
    assert pair.receiver.result["throughput"]["span_seconds"] is None
