"""The bench's --security option (and $BENCH_SECURITY, the sweep's env axis) against
the real builds of libzmq-4.3.5 and zlink: CURVE runs carry every message and say so
in their settings, a NULL client cannot talk to a CURVE server (proof the mechanism
is really on), and CURVE where it cannot apply is refused with exit 2. Tiny counts:
behaviour, not performance."""
from __future__ import annotations

import pytest

from testbed.bench.command import bench_argv, local_endpoints, role_argvs, run_bench, run_two_process

pytestmark = pytest.mark.slow

LIBS = ("libzmq-4.3.5", "zlink")
COUNTS = {"count": 500, "lat_count": 20, "timeout_ms": 3000}


@pytest.fixture(scope="module", params=LIBS)
def lib(request, built_library):
    return built_library(request.param)


def with_env(argv, **env):
    """The argv run through env(1) with these variables set (run_bench takes no env)."""
    return ["env", *(f"{k}={v}" for k, v in env.items()), *argv]


@pytest.mark.parametrize("pattern,transport", [("PAIR", "tcp"), ("DEALER_ROUTER", "tcp"), ("PAIR", "ipc")])
def test_curve_run_carries_messages_and_records_it(lib, pattern, transport):
    argv = bench_argv(lib.bench_binary(pattern), transport, 1024, **COUNTS) + ["--security", "curve"]
    r = run_bench(argv, timeout_s=60)
    assert r.exit_code == 0, r.stderr
    assert r.result["settings"]["security"] == "curve"
    assert r.result["verify"]["ok"]


def test_environment_sets_the_mechanism(lib):
    argv = bench_argv(lib.bench_binary("PAIR"), "tcp", 64, **COUNTS)
    r = run_bench(with_env(argv, BENCH_SECURITY="curve"), timeout_s=60)
    assert r.exit_code == 0, r.stderr
    assert r.result["settings"]["security"] == "curve"
    plain = run_bench(argv, timeout_s=60)
    assert plain.exit_code == 0 and plain.result["settings"]["security"] == "null"


def test_null_client_cannot_reach_a_curve_server(lib):
    """The receiver is a CURVE server, the sender a NULL client: no handshake, so the
    sender times out (exit 3). If --security were ignored both would succeed."""
    receiver, sender = role_argvs(lib.bench_binary("PAIR"), "tcp", 64, local_endpoints("tcp"),
                                  mode="thr", count=100, timeout_ms=1500)
    run = run_two_process(receiver + ["--security", "curve"], sender + ["--security", "null"], timeout_s=30)
    assert run.sender.exit_code == 3 or run.receiver.exit_code == 3, (run.sender.stderr, run.receiver.stderr)
    assert run.result is None


@pytest.mark.parametrize("extra,message", [
    (["--transport", "inproc"], "needs tcp or ipc, not inproc"),
])
def test_curve_on_inproc_is_refused(lib, extra, message):
    argv = [str(lib.bench_binary("PAIR")), "--size", "64", "--security", "curve", *extra]
    r = run_bench(argv, timeout_s=30)
    assert r.exit_code == 2
    assert message in r.stderr


def test_bad_environment_value_is_named(lib):
    argv = bench_argv(lib.bench_binary("PAIR"), "tcp", 64, **COUNTS)
    r = run_bench(with_env(argv, BENCH_SECURITY="tls"), timeout_s=30)
    assert r.exit_code == 2
    assert "BENCH_SECURITY (environment): 'tls' is not one of null, curve" in r.stderr


def test_stream_refuses_curve(lib):
    argv = bench_argv(lib.bench_binary("STREAM"), "tcp", 64, **COUNTS) + ["--security", "curve"]
    r = run_bench(argv, timeout_s=30)
    assert r.exit_code == 2 and "raw TCP peer" in r.stderr
