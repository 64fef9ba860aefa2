"""The bench harness against the real libzmq-4.3.5 build (and zlink where stated):
every pattern x transport x size completes with self-consistent numbers; bad
arguments, missing peers and injected faults end with the documented exit statuses.
Counts are tiny: these tests check behaviour, not performance. Placement and the
two-process roles are tested in test_bench_roles.py."""
from __future__ import annotations

import glob
import json
import os
import time
from pathlib import Path

import pytest

from testbed import cli
from testbed.bench import validate
from testbed.bench.command import bench_argv, local_endpoints, run_bench
from testbed.bench.patterns import PATTERN_TRANSPORTS, PATTERNS

pytestmark = pytest.mark.slow

LIB = "libzmq-4.3.5"
SIZES = (64, 1024, 65536, 262144)
# (count, lat_count) per size: enough to exercise warm-up, sampling and percentiles.
SMALL_COUNTS = {64: (3000, 60), 1024: (2000, 60), 65536: (300, 30), 262144: (100, 20)}


@pytest.fixture(scope="module")
def lib(built_library):
    return built_library(LIB)


def run(lib, pattern, transport, size, *extra, env=None, **options):
    argv = bench_argv(lib.bench_binary(pattern), transport, size, **options) + list(extra)
    return run_bench(argv, timeout_s=60) if env is None else _run_env(argv, env)


def _run_env(argv, env):
    old = dict(os.environ)
    os.environ.update(env)
    try:
        return run_bench(argv, timeout_s=60)
    finally:
        os.environ.clear()
        os.environ.update(old)


MATRIX = [(p, t, s) for p in PATTERNS for t in PATTERN_TRANSPORTS[p] for s in SIZES]


@pytest.mark.parametrize("pattern,transport,size", MATRIX, ids=[f"{p}-{t}-{s}" for p, t, s in MATRIX])
def test_pattern_transport_size(lib, pattern, transport, size):
    count, lat_count = SMALL_COUNTS[size]
    # Lossless: PUB drops at a finite HWM (its default included), so it runs unlimited
    # here; test_pubsub_at_a_finite_hwm_counts_its_losses covers the default.
    hwm = 0 if pattern == "PUBSUB" else None
    r = run(lib, pattern, transport, size, count=count, lat_count=lat_count, timeout_ms=8000, hwm=hwm)
    assert r.exit_code == 0, r.stderr
    res = r.result
    assert validate.bench_result_problems(res, pattern=pattern, transport=transport, msg_size=size,
                                          library=LIB, build_id=lib.info["build_id"], count=count,
                                          lat_count=lat_count) == []
    thr, lat, ver = res["throughput"], res["latency"], res["verify"]
    # Restated here so that a lenient validator cannot hide an inconsistency.
    assert thr["count"] == ver["received"] == ver["expected"] == count
    assert thr["msgs_per_sec"] == pytest.approx(count / thr["receiver_seconds"], rel=1e-6)
    assert thr["bytes_per_sec"] == pytest.approx(thr["msgs_per_sec"] * size, rel=1e-6)
    assert lat["count"] == ver["lat_received"] == lat_count
    assert lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    assert 0 < lat["min"] <= lat["mean"] <= lat["max"]
    # The binary really ran against the library under test, not a system copy.
    assert Path(res["library"]["loaded_from"]).is_relative_to(lib.prefix.resolve())
    assert res["settings"]["linger"] == 0
    # Nothing set but what the run asked for: the library's own HWM (1000), buffers
    # (-1: the OS default) and one IO thread, as the library itself reports them.
    want_hwm = 0 if pattern == "PUBSUB" else 1000
    assert res["settings"]["hwm"] == want_hwm
    assert res["settings"]["hwm_requested"] == (hwm if hwm is not None else -1)
    assert res["settings"]["library_reports"] == {"sndhwm": want_hwm, "rcvhwm": want_hwm, "sndbuf": -1,
                                                  "rcvbuf": -1, "io_threads": 1}
    assert thr["delivery"] == "lossless"
    assert f"{pattern} {transport} {size} B" in r.stderr  # the readable summary line


def test_settings_and_environment_are_reported(lib):
    r = run(lib, "PAIR", "tcp", 64, "--hwm", "5000", count=500, lat_count=20,
            env={"BENCH_IO_THREADS": "2", "ZMQ_ASIO_EXAMPLE": "7"})
    assert r.exit_code == 0, r.stderr
    s = r.result["settings"]
    assert (s["io_threads"], s["hwm"], s["clock"]) == (2, 5000, "std::chrono::steady_clock")
    assert r.result["env"]["BENCH_IO_THREADS"] == "2" and r.result["env"]["ZMQ_ASIO_EXAMPLE"] == "7"


@pytest.mark.parametrize("mode", ["thr", "lat"])
def test_mode_leaves_the_other_measure_null(lib, mode):
    r = run(lib, "DEALER_ROUTER", "inproc", 64, count=500, lat_count=20, mode=mode)
    assert r.exit_code == 0, r.stderr
    assert (r.result["throughput"] is None) == (mode == "lat")
    assert (r.result["latency"] is None) == (mode == "thr")
    assert validate.bench_result_problems(r.result) == []


BAD_ARGS = [
    ([], "--transport is required"),
    (["--transport", "tcp"], "--size is required"),
    (["--transport", "udp", "--size", "64"], "--transport"),
    (["--transport", "tcp", "--size", "abc"], "--size"),
    (["--transport", "tcp", "--size", "-1"], "--size"),
    (["--transport", "tcp", "--size", "64", "--count", "0"], "--count"),
    (["--transport", "tcp", "--size", "64", "--io-threads", "0"], "--io-threads"),
    (["--transport", "tcp", "--size", "64", "--mode", "fast"], "--mode"),
    (["--transport", "tcp", "--size", "64", "--bogus", "1"], "unknown option"),
    (["--transport", "tcp", "--size", "64", "--count"], "needs a value"),
    (["--transport", "tcp", "--size", "64", "--inject-fault", "melt"], "--inject-fault"),
    (["--transport", "tcp", "--size", "64", "stray"], "unexpected argument"),
]


@pytest.mark.parametrize("args,fragment", BAD_ARGS, ids=[f for _, f in BAD_ARGS])
def test_bad_arguments_exit_2_with_usage(lib, args, fragment):
    r = run_bench([str(lib.bench_binary("PAIR")), *args], timeout_s=30)
    assert r.exit_code == 2
    assert fragment in r.stderr.splitlines()[0]
    assert "usage: bench_pair" in r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("args,fragment", [
    (["--transport", "ipc", "--size", "64"], "supports tcp only"),
    (["--transport", "inproc", "--size", "64"], "supports tcp only"),
    (["--transport", "tcp", "--size", "0"], "--size"),
])
def test_stream_refuses_what_it_cannot_do(lib, args, fragment):
    r = run_bench([str(lib.bench_binary("STREAM")), *args], timeout_s=30)
    assert r.exit_code == 2 and fragment in r.stderr and "usage:" in r.stderr


def test_bad_environment_io_threads_exit_2(lib):
    r = run(lib, "PAIR", "tcp", 64, env={"BENCH_IO_THREADS": "many"})
    assert r.exit_code == 2 and "BENCH_IO_THREADS" in r.stderr


NO_PEER = [("PAIR", "tcp"), ("PUBSUB", "ipc"), ("ROUTER_ROUTER_POLL", "inproc"), ("STREAM", "tcp")]


@pytest.mark.parametrize("pattern,transport", NO_PEER)
def test_missing_peer_times_out_with_exit_3(lib, pattern, transport):
    start = time.monotonic()
    r = run(lib, pattern, transport, 64, "--no-peer", timeout_ms=600)
    elapsed = time.monotonic() - start
    assert r.exit_code == 3, r.stderr
    assert "timeout" in r.stderr and r.stdout == ""
    assert 0.5 < elapsed < 5.0


@pytest.mark.parametrize("pattern", ["PAIR", "ROUTER_ROUTER_POLL", "STREAM"])
def test_stalled_sender_times_out_with_exit_3(lib, pattern):
    start = time.monotonic()
    r = run(lib, pattern, "tcp", 1024, "--inject-fault", "stall", count=2000, timeout_ms=700, mode="thr")
    assert r.exit_code == 3, r.stderr
    assert "timeout" in r.stderr
    assert time.monotonic() - start < 6.0


def test_watchdog_ends_a_hang_where_no_socket_timeout_applies(lib):
    start = time.monotonic()
    r = run(lib, "PAIR", "inproc", 64, "--inject-fault", "hang", count=500, lat_count=10, timeout_ms=400)
    assert r.exit_code == 3, r.stderr
    assert "watchdog" in r.stderr and r.stdout == ""  # nothing printed that looks like a result
    assert time.monotonic() - start < 8.0


@pytest.mark.parametrize("transport,hwm,mode", [("inproc", 10, "thr"), ("tcp", None, "both")])
def test_pubsub_at_a_finite_hwm_counts_its_losses(lib, transport, hwm, mode):
    # PUB drops at the HWM by design (10 here; the library default 1000 over tcp): the
    # run neither fails nor hangs; it reports the delivered rate and the loss. (At HWM
    # 10 over tcp the latency phase times out, before this change too: its first probe
    # is lost; so the small HWM runs throughput only.)
    count = 200000
    start = time.monotonic()
    r = run(lib, "PUBSUB", transport, 1024, count=count, lat_count=10, hwm=hwm, mode=mode, timeout_ms=5000)
    assert r.exit_code == 0, r.stderr
    assert time.monotonic() - start < 30
    res = r.result
    assert validate.bench_result_problems(res, pattern="PUBSUB", transport=transport, msg_size=1024,
                                          count=count, lat_count=10 if mode == "both" else None) == []
    thr, ver = res["throughput"], res["verify"]
    assert thr["delivery"] == "lossy" and thr["sent"] == count == ver["expected"]
    assert 0 < thr["count"] == ver["received"] <= count and thr["lost"] == count - thr["count"]
    assert thr["loss"] == pytest.approx(thr["lost"] / count)
    assert thr["msgs_per_sec"] == pytest.approx(thr["count"] / thr["receiver_seconds"], rel=1e-6)
    assert res["settings"]["library_reports"]["sndhwm"] == (hwm or 1000)
    if mode == "both":
        assert res["latency"]["count"] == 10  # round trips: one message in flight, nothing dropped
    assert "delivered" in r.stderr


def test_a_lossy_tail_that_arrives_after_the_window_is_skipped_before_the_first_probe(lib):
    # The sender says it is done half way, waits for the receiver to end its window
    # (100 ms of silence), then sends the rest: the tail CI's loaded host once delivered
    # late, which the echo side took for a lost latency probe (exit 4).
    count = 4000
    r = run(lib, "PUBSUB", "tcp", 1024, "--inject-fault", "late-tail", count=count, lat_count=20,
            timeout_ms=5000)
    assert r.exit_code == 0, r.stderr
    res = r.result
    assert validate.bench_result_problems(res, pattern="PUBSUB", transport="tcp", msg_size=1024,
                                          count=count, lat_count=20) == []
    thr, ver = res["throughput"], res["verify"]
    assert thr["delivery"] == "lossy"
    assert thr["count"] <= count - 100 and thr["lost"] >= 100  # the 100-message tail is not in the window
    assert 0 < ver["stragglers"] <= 100
    assert res["latency"]["count"] == ver["lat_received"] == 20


@pytest.mark.parametrize("pattern,extra", [("PAIR", ()), ("PUBSUB", ("--hwm", "0"))])
def test_a_late_tail_needs_a_lossy_stream(lib, pattern, extra):
    r = run(lib, pattern, "tcp", 1024, "--inject-fault", "late-tail", *extra, count=100, lat_count=10)
    assert r.exit_code == 2 and "late-tail needs a pattern that drops" in r.stderr


def test_pubsub_lossy_needs_a_sequence_number(lib):
    r = run(lib, "PUBSUB", "inproc", 4, count=100, lat_count=10)
    assert r.exit_code == 2 and "--size >= 8" in r.stderr


FAULTS = [(p, f) for p in PATTERNS for f in ("skip", "corrupt")]


@pytest.mark.parametrize("pattern,fault", FAULTS, ids=[f"{p}-{f}" for p, f in FAULTS])
def test_injected_fault_fails_verification_with_exit_4(lib, pattern, fault):
    # A skipped sequence number is a loss only where the run is lossless (PUB: HWM 0).
    hwm = 0 if pattern == "PUBSUB" else None
    r = run(lib, pattern, "tcp", 1024, "--inject-fault", fault, count=1000, lat_count=10, timeout_ms=5000,
            hwm=hwm)
    assert r.exit_code == 4, r.stderr
    assert "verification failed" in r.stderr
    assert r.result["verify"]["ok"] is False
    expected = "lost" if fault == "skip" else "corrupt"
    assert expected in r.result["verify"]["error"]
    assert validate.bench_result_problems(r.result) != []


def test_small_messages_are_checked_by_content(lib):
    r = run(lib, "PAIR", "inproc", 4, "--inject-fault", "corrupt", count=1000)
    assert r.exit_code == 4 and r.result["verify"]["method"] == "count+pattern"


def test_ipc_endpoints_are_removed(lib):
    before = set(glob.glob("/tmp/bench-ipc-*"))
    r = run(lib, "PUBSUB", "ipc", 64, count=300, lat_count=10)
    assert r.exit_code == 0, r.stderr
    assert set(glob.glob("/tmp/bench-ipc-*")) <= before


def test_cli_bench_prints_validated_json(lib, capsys):
    code = cli.main(["bench", "router_router", "--lib", LIB, "--transport", "ipc", "--size", "1024",
                     "--count", "500", "--lat-count", "20", "--timeout-ms", "5000"])
    out = capsys.readouterr().out
    assert code == 0
    result = json.loads(out)
    assert result["pattern"] == "ROUTER_ROUTER" and result["throughput"]["count"] == 500


@pytest.mark.parametrize("argv", [
    ["bench", "reqrep", "--lib", LIB, "--transport", "tcp", "--size", "64"],
    ["bench", "stream", "--lib", LIB, "--transport", "ipc", "--size", "64"],
])
def test_cli_bench_rejects_bad_pattern_or_transport(argv, capsys):
    assert cli.main(argv) == 2
    assert "testbed bench:" in capsys.readouterr().err


def test_cli_bench_unknown_library(capsys):
    code = cli.main(["bench", "pair", "--lib", "no-such-lib", "--transport", "tcp", "--size", "64"])
    assert code == 1
    assert "no-such-lib" in capsys.readouterr().err


@pytest.mark.parametrize("model", ["one-process", "two-process"])
def test_ceiling_reports_every_probe(lib, capsys, model):
    # The lowest and highest CPU this process may use (not CPU 0 by name: a cpuset may exclude it).
    allowed = os.sched_getaffinity(0)
    pins = ["--pin-sender", str(min(allowed)), "--pin-receiver", str(max(allowed))]
    code = cli.main(["ceiling", "--sizes", "64,65536", "--bytes", "4194304", "--lat-count", "100", "--json",
                     "--process-model", model, *pins])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert validate.ceiling_problems(result) == []
    assert result["process_model"] == model
    rows = {(r["transport"], r["msg_size"]): r for r in result["rows"]}
    assert set(rows) == {(t, s) for t in ("tcp", "ipc", "inproc") for s in (64, 65536)}
    for (transport, size), row in rows.items():
        thr = row["throughput"]
        assert thr["bytes_per_sec"] > 0 and thr["bytes"] >= 4194304 * 0.99
        assert thr["msgs_per_sec"] == pytest.approx(thr["bytes_per_sec"] / size, rel=1e-6)
        assert (row["latency"] is None) == (transport == "inproc")
        if transport != "inproc":  # the best of the write sizes x ways of waiting tried is the ceiling
            tried = {(t["write_size"], t["io"]): t["bytes_per_sec"] for t in thr["tried"]}
            waits = ("blocking", "poll", "coalesce", "handoff")
            assert set(tried) == {(w, io) for w in (65536, 262144, 1048576) for io in waits}
            assert thr["bytes_per_sec"] == pytest.approx(max(tried.values()))
            assert tried[(thr["write_size"], thr["io"])] == max(tried.values())
    # The probe ran where the cells would: its own threads on the pinned CPUs.
    sides = {t["role"]: t["cpus"] for t in result["threads"] if t["role"] in ("sender", "receiver")}
    assert sides == {"sender": pins[1], "receiver": pins[3]}
    assert result["host"]["cpus"] >= 1


@pytest.mark.parametrize("model", ["one-process", "two-process"])
def test_ceiling_handoff_counts_exactly_the_streamed_bytes(lib, capsys, model):
    # handoff alone, so its own count and clock are what the row reports.
    code = cli.main(["ceiling", "--sizes", "65536", "--transports", "tcp,ipc", "--bytes", "4194304",
                     "--write-sizes", "65536", "--io-waits", "handoff", "--mode", "thr", "--json",
                     "--process-model", model])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert validate.ceiling_problems(result) == []
    for row in result["rows"]:
        thr = row["throughput"]
        assert thr["io"] == "handoff" and thr["bytes"] == 4194304 and thr["seconds"] > 0


def test_ceiling_source_ring_streams_the_same_bytes(lib, capsys):
    """--source-messages: the sender walks a ring of 5 x 64 KiB with 128 KiB writes (so
    a write that would run past the ring's end starts again at its beginning); the row
    still counts exactly the streamed bytes, and the setting is echoed."""
    code = cli.main(["ceiling", "--sizes", "65536", "--transports", "tcp,ipc", "--bytes", "4194304",
                     "--write-sizes", "131072", "--io-waits", "blocking", "--mode", "thr", "--json",
                     "--process-model", "two-process", "--source-messages", "5"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert validate.ceiling_problems(result) == []
    assert result["settings"]["source_messages"] == 5
    assert sorted(r["transport"] for r in result["rows"]) == ["ipc", "tcp"]
    for row in result["rows"]:
        assert row["throughput"]["bytes"] == 4194304 and row["throughput"]["write_size"] == 131072


def test_ceiling_table_and_bad_arguments(lib, capsys):
    assert cli.main(["ceiling", "--sizes", "1024", "--bytes", "2097152", "--lat-count", "50"]) == 0
    out = capsys.readouterr().out
    assert "tcp-nodelay" in out and "memcpy" in out and "RTT/2" in out
    probe = str(lib.bench_dir / "ceiling_probe")
    for args, fragment in ((["--sizes", "64,x"], "--sizes"), (["--pin-sender", "99999"], "--pin-sender"),
                           (["--role", "sender"], "--connect is required"),
                           (["--role", "receiver", "--bind", "inproc://x"], "--bind"),
                           (["--io-waits", "spin"], "--io-waits"),
                           (["--source-messages", "0"], "--source-messages")):
        r = run_bench([probe, *args], timeout_s=30)
        assert r.exit_code == 2 and fragment in r.stderr, (args, r.stderr)


def test_ceiling_probe_without_its_peer_exits_3(lib):
    ep = local_endpoints("tcp")
    start = time.monotonic()
    r = run_bench([str(lib.bench_dir / "ceiling_probe"), "--role", "receiver", "--bind", ep.bind,
                   "--timeout-ms", "500"], timeout_s=30)
    assert r.exit_code == 3 and "no probe sender connected" in r.stderr
    assert time.monotonic() - start < 4.0


def test_tcp_endpoints_avoid_the_ephemeral_range(tmp_path, monkeypatch):
    """A port from the kernel's ephemeral range can be taken as some outgoing
    connection's source port before the receiver binds it; bench ports come from
    outside that range, and the control port beside it is free too."""
    from testbed.bench import command
    for text, (low, high) in (("32768\t60999\n", (10000, 32768)), ("1024 60999\n", (61000, 65536))):
        (tmp_path / "range").write_text(text)
        monkeypatch.setattr(command, "EPHEMERAL_RANGE", tmp_path / "range")
        for _ in range(20):
            ep = local_endpoints("tcp")
            port = int(ep.bind.rsplit(":", 1)[1])
            assert low <= port and port + 1 < high and ep.connect == ep.bind
            assert command._port_pair_free(port, "127.0.0.1")
