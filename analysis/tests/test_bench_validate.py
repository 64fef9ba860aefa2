"""The bench result validator, on small hand-made results (no binaries)."""
from __future__ import annotations

import copy
import re

import pytest

from testbed.bench import latency_histogram, validate
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
                    "max": 55.0, "mean": 12.5, "warmup": 10, "unit": "us", "measure": "rtt/2",
                    # ranks 50 and 99 (p50, p99) are 12 us and 20 us, in ns
                    "histogram": latency_histogram.to_json(latency_histogram.from_values(
                        [10_000] + [12_000] * 49 + [13_000] * 48 + [20_000, 55_000]))},
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
    ("throughput.span_seconds", 0.001, "span_seconds"),
    ("throughput.receiver_seconds", 0, "receiver_seconds"),
    ("latency.p90", 100.0, "not ordered"),
    ("latency.mean", 1.0, "mean"),
    ("latency.unit", "ms", "unit"),
    ("latency", KeyError, "must both be present"),
    ("latency.histogram", KeyError, "histogram is missing"),
    ("latency.histogram.total", 99, "histogram total"),
    ("latency.p99", 21.0, "histogram p99"),
    ("latency.histogram.counts", [0], "non-zero integer"),
    ("verify.ok", False, "verification failed"),
    ("verify.received", 999, "verify.received"),
    ("verify.stragglers", -1, "verify.stragglers must be a count"),
    ("verify.stragglers", 3, "only a lossy stream has a late tail"),  # good_result is lossless
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
    row = {"transport": "tcp", "probe": "tcp-nodelay", "msg_size": 64,
           "throughput": {"bytes_per_sec": 1e9, "msgs_per_sec": 1e9 / 64, "seconds": 0.1},
           "latency": copy.deepcopy(good_result()["latency"])}
    good = {"schema": "testbed.ceiling/2", "process_model": "two-process", "placement": {"sender": "0"},
            "rows": [row]}
    assert validate.ceiling_problems(good) == []
    bad = copy.deepcopy(good)
    bad["rows"][0]["latency"]["p50"] = 1e9
    assert validate.ceiling_problems(bad) != []
    neither = copy.deepcopy(good)
    neither["rows"][0].update(throughput=None, latency=None)
    assert any("neither" in p for p in validate.ceiling_problems(neither))
    assert validate.ceiling_problems({**good, "rows": []}) != []
    assert validate.ceiling_problems({**good, "schema": "testbed.ceiling/1"}) != []
    assert any("process_model" in p for p in validate.ceiling_problems({**good, "process_model": "x"}))


def test_pattern_names_and_argv():
    assert normalise_pattern("router-router_poll") == "ROUTER_ROUTER_POLL"
    with pytest.raises(ValueError, match="choose from"):
        normalise_pattern("REQREP")
    argv = bench_argv("/x/bench_pair", "ipc", 64, count=10, hwm=None)
    assert argv == ["/x/bench_pair", "--transport", "ipc", "--size", "64", "--count", "10"]
    with pytest.raises(ValueError, match="unknown bench option"):
        bench_argv("/x/bench_pair", "ipc", 64, colour=1)


# ---- roles, placement, the argv builder (issue 9) ----

from testbed.bench.command import Endpoints, join_roles, placement_pins, role_argvs  # noqa: E402
from testbed.bench.patterns import PATTERNS, binary_name, transports_for  # noqa: E402


def _with_placement(r: dict, role: str = "both", model: str = "one-process") -> dict:
    r["role"] = role
    r["settings"].update(process_model=model, mode="both")
    r["placement"] = {"sender": "0", "receiver": "1", "allowed": "0-1"}
    r["threads"] = [{"tid": 10, "name": "bench-main", "role": "main", "cpus": "0-1"}]
    return r


def role_lines() -> tuple[dict, dict]:
    receiver = _with_placement(good_result(), "receiver", "two-process")
    receiver["latency"] = None
    receiver["verify"].update(lat_received=0, lat_expected=0)
    sender = _with_placement(good_result(), "sender", "two-process")
    sender["throughput"] = None
    sender["sender_throughput"] = {"count": 1000, "warmup": 50, "sender_seconds": 0.001,
                                   "sender_msgs_per_sec": 1e6}
    sender["verify"].update(received=0, expected=0)
    return receiver, sender


def test_role_lines_and_their_join_are_valid():
    receiver, sender = role_lines()
    assert validate.bench_result_problems(_with_placement(good_result())) == []
    assert validate.bench_result_problems(receiver, count=1000) == []
    assert validate.bench_result_problems(sender, lat_count=100) == []
    joined = join_roles(receiver, sender)
    assert validate.bench_result_problems(joined, count=1000, lat_count=100) == []
    assert joined["role"] == "joined" and joined["latency"] == sender["latency"]
    assert joined["throughput"] == receiver["throughput"]
    assert {t["process"] for t in joined["threads"]} == {"receiver", "sender"}


@pytest.mark.parametrize("which,path,value,fragment", [
    ("receiver", "latency", {"count": 1}, "carries no latency"),
    ("receiver", "throughput", None, "must carry the throughput"),
    ("sender", "throughput", "receiver", "carries no throughput"),
    ("sender", "latency", None, "must carry the latency"),
    ("sender", "sender_throughput", None, "sender_throughput"),
    ("sender", "role", "client", "role is 'client'"),
    ("receiver", "placement", {"sender": 0}, "placement"),
    ("receiver", "threads", [], "threads"),
    ("receiver", "threads", [{"tid": "1", "name": "x", "role": "main", "cpus": "0"}], "threads[0]"),
    ("sender", "settings.process_model", "one process, two threads", "process_model"),
    ("sender", "settings.process_model", "one-process", "does not fit role"),
])
def test_role_line_problems_are_caught(which, path, value, fragment):
    receiver, sender = role_lines()
    line = receiver if which == "receiver" else sender
    if value == "receiver":
        value = receiver["throughput"]
    *parents, last = path.split(".")
    node = line
    for p in parents:
        node = node[p]
    node[last] = value
    problems = validate.bench_result_problems(line)
    assert any(fragment in p for p in problems), problems


def test_join_refuses_mismatched_lines():
    receiver, sender = role_lines()
    with pytest.raises(ValueError, match="receiver and a sender"):
        join_roles(sender, receiver)
    sender["msg_size"] = 128
    with pytest.raises(ValueError, match="msg_size"):
        join_roles(receiver, sender)


def test_argv_builder_spells_every_new_flag():
    argv = bench_argv("/x/bench_pair", "tcp", 64, role="sender", connect="tcp://10.77.0.1:5555",
                      pin_sender=[0, 2], pin_receiver=1, process_model="two-host", control="tcp://h:9")
    assert argv[5:] == ["--role", "sender", "--connect", "tcp://10.77.0.1:5555", "--pin-sender", "0,2",
                        "--pin-receiver", "1", "--process-model", "two-host", "--control", "tcp://h:9"]
    with pytest.raises(ValueError, match="role"):
        bench_argv("/x/bench_pair", "tcp", 64, role="client")
    with pytest.raises(ValueError, match="process_model"):
        bench_argv("/x/bench_pair", "tcp", 64, process_model="three-host")


def test_role_argvs_give_each_process_its_side():
    ep = Endpoints("tcp://0.0.0.0:5555", "tcp://10.77.0.1:5555")
    receiver, sender = role_argvs("/x/bench_pair", "tcp", 64, ep, process_model="two-host", count=10)
    assert receiver == ["/x/bench_pair", "--transport", "tcp", "--size", "64", "--role", "receiver", "--bind",
                        "tcp://0.0.0.0:5555", "--count", "10", "--process-model", "two-host"]
    assert sender[5:9] == ["--role", "sender", "--connect", "tcp://10.77.0.1:5555"]
    with pytest.raises(ValueError, match="sets 'role'"):
        role_argvs("/x/bench_pair", "tcp", 64, ep, role="both")


def test_placement_pins():
    assert placement_pins("split", [0, 1]) == {"pin_sender": "0", "pin_receiver": "1"}
    assert placement_pins("one-core", [3]) == {"pin_sender": "3", "pin_receiver": "3"}
    assert placement_pins("free", []) == {"pin_sender": None, "pin_receiver": None}
    with pytest.raises(ValueError, match="'split' needs 2 CPU"):
        placement_pins("split", [0])
    with pytest.raises(ValueError, match="unknown placement"):
        placement_pins("spread", [0, 1])


def test_pattern_list_is_the_one_list():
    assert {"PUSH_PULL", "REQ_REP"} <= set(PATTERNS)
    assert binary_name("req-rep") == "bench_req_rep"
    assert transports_for("PAIR") == ("tcp", "ipc", "inproc")
    assert transports_for("PAIR", "two-process") == ("tcp", "ipc")
    assert transports_for("STREAM", "two-host") == ("tcp",)
    with pytest.raises(ValueError, match="process model"):
        transports_for("PAIR", "cluster")


def test_cmake_builds_one_binary_per_listed_pattern():
    from testbed import paths
    text = (paths.BENCH_SRC_DIR / "CMakeLists.txt").read_text()
    listed = re.search(r"set\(BENCH_PATTERNS([^)]*)\)", text).group(1).split()
    assert sorted(f"bench_{p}" for p in listed) == sorted(binary_name(p) for p in PATTERNS)
