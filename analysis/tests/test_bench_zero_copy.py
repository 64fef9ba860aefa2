"""The bench's zero-copy send path (--send-buffers N, and $BENCH_SEND_BUFFERS, the
sweep's env axis) against the real builds of libzmq-4.3.5 and zlink: payloads built
in a ring of N buffers and sent with zmq_msg_init_data + zmq_msg_send arrive whole and
in order on every transport and with routing-id frames, a ring of two buffers (a
send waits for the library to free the one before last) still runs, one is refused, a corrupted payload is
caught as in the copying path, and the setting is recorded. Tiny counts: behaviour,
not performance."""
from __future__ import annotations

import pytest

from testbed.bench import validate
from testbed.bench.command import bench_argv, local_endpoints, role_argvs, run_bench, run_two_process

pytestmark = pytest.mark.slow

LIBS = ("libzmq-4.3.5", "zlink")
COUNTS = {"count": 300, "lat_count": 20, "timeout_ms": 5000}


@pytest.fixture(scope="module", params=LIBS)
def lib(request, built_library):
    return built_library(request.param)


def with_env(argv, **env):
    return ["env", *(f"{k}={v}" for k, v in env.items()), *argv]


@pytest.mark.parametrize("pattern,transport,size", [
    ("PUSH_PULL", "tcp", 262144), ("PUSH_PULL", "ipc", 65536), ("PAIR", "inproc", 65536),
    ("ROUTER_ROUTER", "tcp", 1024), ("REQ_REP", "ipc", 4096), ("PUBSUB", "tcp", 512),
])
def test_zero_copy_runs_deliver_every_message_and_record_it(lib, pattern, transport, size):
    argv = bench_argv(lib.bench_binary(pattern), transport, size, **COUNTS) + ["--send-buffers", "4"]
    r = run_bench(argv, timeout_s=60)
    assert r.exit_code == 0, r.stderr
    assert r.result["verify"]["ok"], r.result["verify"]
    assert r.result["verify"]["received"] == COUNTS["count"]
    assert r.result["settings"]["send_buffers"] == 4
    assert validate.bench_result_problems(r.result) == []


@pytest.mark.parametrize("transport", ["tcp", "inproc"])
def test_a_ring_of_two_buffers_waits_for_each_free_and_still_runs(lib, transport):
    """inproc: the receiver holds the last message (the sender's buffer) until its next
    receive, in both phases; two buffers are enough not to wait for oneself."""
    argv = bench_argv(lib.bench_binary("PUSH_PULL"), transport, 65536, **COUNTS) + ["--send-buffers", "2"]
    r = run_bench(argv, timeout_s=60)
    assert r.exit_code == 0, r.stderr
    assert r.result["verify"]["ok"]


def test_two_processes_agree_on_the_setting(lib):
    receiver, sender = role_argvs(lib.bench_binary("PUSH_PULL"), "ipc", 65536, local_endpoints("ipc"),
                                  mode="thr", count=300, timeout_ms=5000)
    run = run_two_process(receiver + ["--send-buffers", "8"], sender + ["--send-buffers", "8"], timeout_s=60)
    assert run.result is not None, (run.receiver.stderr, run.sender.stderr)
    assert run.result["verify"]["ok"]
    assert run.result["settings"]["send_buffers"] == 8
    # A sender whose payload path differs from the receiver's is refused, as any setting.
    receiver, sender = role_argvs(lib.bench_binary("PUSH_PULL"), "ipc", 65536, local_endpoints("ipc"),
                                  mode="thr", count=300, timeout_ms=3000)
    run = run_two_process(receiver, sender + ["--send-buffers", "8"], timeout_s=60)
    assert run.result is None
    assert "send_buffers" in run.receiver.stderr + run.sender.stderr


def test_a_corrupted_zero_copy_payload_fails_verification(lib):
    argv = bench_argv(lib.bench_binary("PAIR"), "tcp", 1024, count=1000, lat_count=10, timeout_ms=5000)
    r = run_bench(argv + ["--send-buffers", "4", "--inject-fault", "corrupt"], timeout_s=60)
    assert r.exit_code == 4, r.stderr
    assert "corrupt" in r.result["verify"]["error"]


def test_environment_sets_the_ring(lib):
    argv = bench_argv(lib.bench_binary("PAIR"), "tcp", 4096, **COUNTS)
    r = run_bench(with_env(argv, BENCH_SEND_BUFFERS="16"), timeout_s=60)
    assert r.exit_code == 0, r.stderr
    assert r.result["settings"]["send_buffers"] == 16
    plain = run_bench(argv, timeout_s=60)
    assert plain.exit_code == 0 and plain.result["settings"]["send_buffers"] == 0


@pytest.mark.parametrize("argv_tail,env,message", [
    (["--send-buffers", "5000"], {}, "--send-buffers: '5000' is not an integer in 0..4096"),
    (["--send-buffers", "1"], {}, "--send-buffers 1: a ring needs at least 2 buffers"),
    ([], {"BENCH_SEND_BUFFERS": "many"}, "BENCH_SEND_BUFFERS (environment): 'many'"),
])
def test_bad_values_are_named(lib, argv_tail, env, message):
    argv = bench_argv(lib.bench_binary("PAIR"), "tcp", 64, **COUNTS) + argv_tail
    r = run_bench(with_env(argv, **env) if env else argv, timeout_s=30)
    assert r.exit_code == 2
    assert message in r.stderr


def test_stream_refuses_zero_copy(lib):
    argv = bench_argv(lib.bench_binary("STREAM"), "tcp", 64, **COUNTS) + ["--send-buffers", "4"]
    r = run_bench(argv, timeout_s=30)
    assert r.exit_code == 2 and "plain TCP peer" in r.stderr
