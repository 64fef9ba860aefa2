"""The bench result validator, on small hand-made results (no binaries)."""
from __future__ import annotations

import copy

import pytest

from testbed.bench import validate
from testbed.bench.command import bench_argv
from testbed.bench.patterns import normalise_pattern


def good_result() -> dict:
    count, secs, size = 1000, 0.002, 64
    rate = count / secs
    return {
        "schema": "testbed.bench/1",
        "library": {"name": "libzmq-4.3.5", "version": "4.3.5", "build_id": "ab12cd34ef567890"},
        "pattern": "PAIR", "transport": "tcp", "msg_size": size,
        "throughput": {"count": count, "warmup": 50, "receiver_seconds": secs, "sender_seconds": 0.001,
                       "msgs_per_sec": rate, "bytes_per_sec": rate * size, "mb_per_sec": rate * size / 1e6,
                       "sender_msgs_per_sec": count / 0.001, "mb_unit": "1e6 bytes"},
        "latency": {"count": 100, "min": 10.0, "p50": 12.0, "p90": 13.0, "p99": 20.0, "p999": 40.0,
                    "max": 55.0, "mean": 12.5, "warmup": 10, "unit": "us", "measure": "rtt/2"},
        "verify": {"ok": True, "received": count, "expected": count, "lat_received": 100, "lat_expected": 100,
                   "method": "sequence+sampled-body"},
        "settings": {"hwm": 0, "io_threads": 1, "linger": 0, "sndbuf": -1, "rcvbuf": -1,
                     "clock": "std::chrono::steady_clock"},
        "env": {"BENCH_IO_THREADS": "1"},
    }


def test_good_result_has_no_problems():
    assert validate.bench_result_problems(good_result(), pattern="PAIR", transport="tcp", msg_size=64,
                                          library="libzmq-4.3.5", count=1000, lat_count=100) == []


def test_null_latency_is_allowed_when_excluded():
    r = good_result()
    r["latency"] = None
    r["verify"]["lat_received"] = r["verify"]["lat_expected"] = 0
    assert validate.bench_result_problems(r) == []


def _mutated(path: str, value):
    r = good_result()
    *parents, last = path.split(".")
    node = r
    for p in parents:
        node = node[p]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return r


@pytest.mark.parametrize("path,value,fragment", [
    ("schema", "other/1", "schema"),
    ("throughput.msgs_per_sec", 1.0, "count/receiver_seconds"),
    ("throughput.bytes_per_sec", 5.0, "bytes_per_sec"),
    ("throughput.mb_unit", "MiB", "mb_unit"),
    ("throughput.receiver_seconds", 0, "receiver_seconds"),
    ("latency.p90", 100.0, "not ordered"),
    ("latency.mean", 1.0, "mean"),
    ("latency.unit", "ms", "unit"),
    ("latency", KeyError, "must both be present"),
    ("verify.ok", False, "verification failed"),
    ("verify.received", 999, "verify.received"),
    ("library.build_id", "", "library"),
    ("env", {"PATH": "/bin"}, "env"),
    ("settings", {}, "settings"),
])
def test_inconsistent_results_are_caught(path, value, fragment):
    problems = validate.bench_result_problems(_mutated(path, value))
    assert any(fragment in p for p in problems), problems


def test_expectations_are_checked():
    problems = validate.bench_result_problems(good_result(), pattern="PUBSUB", msg_size=128, build_id="ffff",
                                              count=5)
    joined = "\n".join(problems)
    for fragment in ("pattern", "msg_size", "build_id", "throughput.count"):
        assert fragment in joined


def test_not_an_object():
    assert validate.bench_result_problems([1, 2]) != []


def test_ceiling_validator():
    row = {"transport": "tcp", "probe": "tcp-loopback-nodelay", "msg_size": 64,
           "throughput": {"bytes_per_sec": 1e9, "msgs_per_sec": 1e9 / 64, "seconds": 0.1},
           "latency": copy.deepcopy(good_result()["latency"])}
    good = {"schema": "testbed.ceiling/1", "rows": [row]}
    assert validate.ceiling_problems(good) == []
    bad = copy.deepcopy(good)
    bad["rows"][0]["latency"]["p50"] = 1e9
    assert validate.ceiling_problems(bad) != []
    assert validate.ceiling_problems({"schema": "testbed.ceiling/1", "rows": []}) != []


def test_pattern_names_and_argv():
    assert normalise_pattern("router-router_poll") == "ROUTER_ROUTER_POLL"
    with pytest.raises(ValueError, match="choose from"):
        normalise_pattern("REQREP")
    argv = bench_argv("/x/bench_pair", "ipc", 64, count=10, hwm=None)
    assert argv == ["/x/bench_pair", "--transport", "ipc", "--size", "64", "--count", "10"]
    with pytest.raises(ValueError, match="unknown bench option"):
        bench_argv("/x/bench_pair", "ipc", 64, colour=1)
