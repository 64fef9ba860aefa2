"""Checks that a bench binary's JSON (docs/data-formats.md section 3) is complete and
self-consistent. `bench_result_problems` returns a list of problems (empty = valid);
the sweep runner and `./testbed bench` both call it, so a malformed or impossible
result is never stored as if it were a measurement.

A line has a `role`: `both` (one process), `receiver` or `sender` (one line of a
two-process run; the receiver's carries the throughput, the sender's the latency and
its own rate in `sender_throughput`), or `joined` (the two lines joined by
testbed.bench.command.join_roles). Lines written before roles existed have none and
are checked as `both`, without the placement fields."""
from __future__ import annotations

import math
from typing import Any

from testbed.bench import latency_histogram
from testbed.bench.patterns import PROCESS_MODELS

SCHEMA = "testbed.bench/1"
RESULT_ROLES = ("both", "receiver", "sender", "joined")
CEILING_SCHEMA = "testbed.ceiling/2"
LATENCY_ORDER = ("min", "p50", "p90", "p99", "p999", "max")
_REL = 1e-6  # the binary prints 9 significant digits


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_REL, abs_tol=1e-9)


def _number(obj: dict, key: str, where: str, problems: list[str], positive: bool = False) -> float | None:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        problems.append(f"{where}.{key} is {value!r}, expected a finite number")
        return None
    if positive and value <= 0:
        problems.append(f"{where}.{key} is {value}, expected > 0")
    return float(value)


def latency_problems(lat: Any, where: str = "latency") -> list[str]:
    problems: list[str] = []
    if not isinstance(lat, dict):
        return [f"{where} is {type(lat).__name__}, expected an object"]
    values = [_number(lat, k, where, problems) for k in (*LATENCY_ORDER, "mean")]
    if None in values:
        return problems
    ordered = values[: len(LATENCY_ORDER)]
    if any(a > b for a, b in zip(ordered, ordered[1:])):
        problems.append(f"{where} percentiles are not ordered: "
                        + ", ".join(f"{k}={v}" for k, v in zip(LATENCY_ORDER, ordered)))
    mean = values[-1]
    if not ordered[0] - 1e-9 <= mean <= ordered[-1] + 1e-9:
        problems.append(f"{where}.mean {mean} lies outside [min, max]")
    if ordered[0] < 0:
        problems.append(f"{where}.min is negative")
    if lat.get("unit") != "us" or lat.get("measure") != "rtt/2":
        problems.append(f"{where} unit/measure are {lat.get('unit')!r}/{lat.get('measure')!r}, "
                        "expected 'us'/'rtt/2'")
    if not isinstance(lat.get("count"), int) or lat["count"] <= 0:
        problems.append(f"{where}.count is {lat.get('count')!r}, expected a positive integer")
    return problems


HISTOGRAM_TOLERANCE = 0.01  # the histogram's midpoints are within 0.78% (histogram.hpp), + 1 ns of rounding


def histogram_problems(lat: dict, where: str = "latency") -> list[str]:
    """The bench's latency histogram: present, readable, holding every round trip, and
    agreeing with the exact percentiles within its error bound."""
    try:
        hist = latency_histogram.of_result({"latency": lat})
    except latency_histogram.HistogramError as exc:
        return [f"{where}.histogram: {exc}"]
    if hist is None:
        return [f"{where}.histogram is missing (the bench writes one with every latency)"]
    problems = []
    if hist.total != lat.get("count"):
        problems.append(f"{where}.histogram holds {hist.total} round trips, "
                        f"latency.count is {lat.get('count')!r}")
    for key, q in (("p50", 0.5), ("p99", 0.99)):
        exact, approx = lat.get(key), hist.percentile(q) / 1000.0  # ns -> us
        if isinstance(exact, (int, float)) and abs(approx - exact) > HISTOGRAM_TOLERANCE * exact + 1e-3:
            problems.append(f"{where}.histogram {key} {approx:.4f} us is not within 1% "
                            f"of the exact {exact} us")
    return problems


def _throughput_problems(thr: Any, msg_size: int) -> list[str]:
    problems: list[str] = []
    if not isinstance(thr, dict):
        return [f"throughput is {type(thr).__name__}, expected an object"]
    count = thr.get("count")
    if not isinstance(count, int) or count <= 0:
        return [f"throughput.count is {count!r}, expected a positive integer"]
    fields = {k: _number(thr, k, "throughput", problems, positive=k.endswith("seconds"))
              for k in ("receiver_seconds", "sender_seconds", "msgs_per_sec", "bytes_per_sec",
                        "mb_per_sec", "sender_msgs_per_sec")}
    if problems:
        return problems
    if not _close(fields["msgs_per_sec"], count / fields["receiver_seconds"]):
        problems.append(f"throughput.msgs_per_sec {fields['msgs_per_sec']} != count/receiver_seconds "
                        f"{count / fields['receiver_seconds']}")
    # PUB at a finite HWM drops by design: count is what arrived, `sent` what was sent.
    sent = _lossy_sent(thr, count, problems)
    if not _close(fields["sender_msgs_per_sec"], sent / fields["sender_seconds"]):
        problems.append("throughput.sender_msgs_per_sec != sent/sender_seconds")
    if not _close(fields["bytes_per_sec"], fields["msgs_per_sec"] * msg_size):
        problems.append("throughput.bytes_per_sec != msgs_per_sec * msg_size")
    if not _close(fields["mb_per_sec"], fields["bytes_per_sec"] / 1e6):
        problems.append("throughput.mb_per_sec != bytes_per_sec / 1e6")
    span, window = thr.get("span_seconds"), fields["receiver_seconds"]
    if span is not None and (not isinstance(span, (int, float)) or span < window * (1 - _REL)):
        problems.append(f"throughput.span_seconds {span!r} is shorter than receiver_seconds "
                        f"{window} (the span contains the receiver's window)")
    if thr.get("mb_unit") != "1e6 bytes":
        problems.append(f"throughput.mb_unit is {thr.get('mb_unit')!r}, expected '1e6 bytes'")
    if not isinstance(thr.get("warmup"), int) or thr["warmup"] < 1:
        problems.append(f"throughput.warmup is {thr.get('warmup')!r}, expected an integer >= 1")
    return problems


def _lossy_sent(thr: dict, count: int, problems: list[str]) -> int:
    """How many measured messages were sent: `sent` of a lossy run (delivery "lossy",
    sent >= count, lost = sent - count), else count."""
    if thr.get("delivery") != "lossy":
        return count
    sent, lost = thr.get("sent"), thr.get("lost")
    if not isinstance(sent, int) or sent < count or lost != sent - count:
        problems.append(f"throughput: a lossy run needs sent >= count and lost = sent - count "
                        f"(sent {sent!r}, count {count}, lost {lost!r})")
        return count
    return sent


def bench_result_problems(result: Any, *, pattern: str | None = None, transport: str | None = None,
                          msg_size: int | None = None, library: str | None = None,
                          build_id: str | None = None, count: int | None = None,
                          lat_count: int | None = None) -> list[str]:
    """Everything wrong with one bench result; keyword arguments are expectations
    (what was asked for) that the result must match when given."""
    if not isinstance(result, dict):
        return [f"result is {type(result).__name__}, expected a JSON object"]
    problems: list[str] = []
    if result.get("schema") != SCHEMA:
        problems.append(f"schema is {result.get('schema')!r}, expected {SCHEMA!r}")
    lib = result.get("library")
    if not isinstance(lib, dict) or not all(isinstance(lib.get(k), str) and lib.get(k) for k in
                                            ("name", "version", "build_id")):
        problems.append(f"library is {lib!r}, expected name/version/build_id strings")
        lib = {}
    expected = {"pattern": pattern, "transport": transport, "msg_size": msg_size}
    for key, want in expected.items():
        if want is not None and result.get(key) != want:
            problems.append(f"{key} is {result.get(key)!r}, expected {want!r}")
    size = result.get("msg_size")
    if not isinstance(size, int) or size < 0:
        problems.append(f"msg_size is {size!r}, expected a non-negative integer")
        size = 0
    if library is not None and lib.get("name") != library:
        problems.append(f"library.name is {lib.get('name')!r}, expected {library!r}")
    if build_id is not None and lib.get("build_id") != build_id:
        problems.append(f"library.build_id is {lib.get('build_id')!r}, expected {build_id!r} "
                        "(stale bench build?)")
    role = result.get("role", "both")
    thr, lat = result.get("throughput", "missing"), result.get("latency", "missing")
    if thr == "missing" or lat == "missing":
        problems.append("throughput and latency must both be present (null when --mode excluded them)")
    problems += _role_problems(result, role, thr, lat)
    if thr not in (None, "missing"):
        problems += _throughput_problems(thr, size)
        lossy = isinstance(thr, dict) and thr.get("delivery") == "lossy"
        key = "sent" if lossy else "count"  # a lossy run sent `count`; fewer arrived
        if count is not None and isinstance(thr, dict) and thr.get(key) != count:
            problems.append(f"throughput.{key} is {thr.get(key)!r}, expected {count}")
    if lat not in (None, "missing"):
        problems += latency_problems(lat)
        if isinstance(lat, dict):
            problems += histogram_problems(lat)
        if lat_count is not None and isinstance(lat, dict) and lat.get("count") != lat_count:
            problems.append(f"latency.count is {lat.get('count')!r}, expected {lat_count}")
    problems += _verify_problems(result.get("verify"), thr, lat)
    if "role" in result:
        problems += _placement_problems(result)
    settings = result.get("settings")
    required = ("hwm", "io_threads", "linger", "sndbuf", "rcvbuf", "clock")
    if not isinstance(settings, dict) or not all(k in settings for k in required):
        problems.append("settings must hold hwm, io_threads, linger, sndbuf, rcvbuf and clock")
    env = result.get("env")
    if not isinstance(env, dict) or not all(isinstance(v, str) and k.startswith(("ZMQ_ASIO_", "BENCH_"))
                                            for k, v in env.items()):
        problems.append("env must map ZMQ_ASIO_*/BENCH_* names to strings")
    return problems


def _role_problems(result: dict, role: Any, thr: Any, lat: Any) -> list[str]:
    """What each role's line must and must not carry."""
    if role not in RESULT_ROLES:
        return [f"role is {role!r}, expected one of {', '.join(RESULT_ROLES)}"]
    mode = (result.get("settings") or {}).get("mode", "both")
    problems = []
    if role in ("both", "joined") and thr is None and lat is None:
        problems.append("neither throughput nor latency was measured")
    if role == "receiver" and lat is not None:
        problems.append("a receiver line carries no latency (the sender measures round trips)")
    if role == "receiver" and mode != "lat" and thr is None:
        problems.append("a receiver line must carry the throughput (mode is not 'lat')")
    if role == "sender":
        if thr is not None:
            problems.append("a sender line carries no throughput (the receiver's clock times it)")
        if mode != "thr" and lat is None:
            problems.append("a sender line must carry the latency (mode is not 'thr')")
        if mode != "lat":
            problems += _sender_throughput_problems(result.get("sender_throughput"))
    return problems


def _sender_throughput_problems(st: Any) -> list[str]:
    if not isinstance(st, dict):
        return [f"sender_throughput is {st!r}, expected an object"]
    problems: list[str] = []
    seconds = _number(st, "sender_seconds", "sender_throughput", problems, positive=True)
    rate = _number(st, "sender_msgs_per_sec", "sender_throughput", problems)
    count = st.get("count")
    if not isinstance(count, int) or count <= 0:
        problems.append(f"sender_throughput.count is {count!r}, expected a positive integer")
    elif not problems and seconds and not _close(rate, count / seconds):
        problems.append("sender_throughput.sender_msgs_per_sec != count/sender_seconds")
    return problems


def _placement_problems(result: dict) -> list[str]:
    """placement (as asked), threads (as read from /proc), settings.process_model."""
    problems = []
    placement = result.get("placement")
    if not isinstance(placement, dict) or not all(
            placement.get(k) is None or isinstance(placement.get(k), str) for k in ("sender", "receiver")) \
            or not {"sender", "receiver"} <= set(placement):
        problems.append(f"placement is {placement!r}, "
                        "expected {'sender': CPUS|null, 'receiver': CPUS|null}")
    threads = result.get("threads")
    if not isinstance(threads, list) or not threads:
        problems.append("threads must be a non-empty list (read from /proc after the run)")
    else:
        for i, t in enumerate(threads):
            if not (isinstance(t, dict) and isinstance(t.get("tid"), int) and
                    all(isinstance(t.get(k), str) for k in ("name", "role", "cpus"))):
                problems.append(f"threads[{i}] is {t!r}, expected tid/name/role/cpus")
    model = (result.get("settings") or {}).get("process_model")
    if model not in PROCESS_MODELS:
        problems.append(f"settings.process_model is {model!r}, expected one of {', '.join(PROCESS_MODELS)}")
    elif (model == "one-process") != (result.get("role") == "both"):
        problems.append(f"settings.process_model {model!r} does not fit role {result.get('role')!r}")
    return problems


def _is_count(value: Any) -> bool:
    """An integer >= 0 (JSON's true/false are not counts, though Python's bool is an int)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _verify_problems(verify: Any, thr: Any, lat: Any) -> list[str]:
    if not isinstance(verify, dict) or not isinstance(verify.get("ok"), bool):
        return ["verify must be an object with a boolean 'ok'"]
    if not verify["ok"]:
        return [f"verification failed: {verify.get('error', '(no reason given)')}"]
    problems = []
    expected = thr.get("sent", thr.get("count")) if isinstance(thr, dict) else None
    if isinstance(thr, dict) and not (verify.get("received") == thr.get("count")
                                      and verify.get("expected") == expected):
        problems.append(f"verify.received {verify.get('received')} / expected {verify.get('expected')} "
                        f"do not match throughput.count {thr.get('count')}")
    lat_counts = (verify.get("lat_received"), verify.get("lat_expected"))
    if isinstance(lat, dict) and not lat_counts[0] == lat_counts[1] == lat.get("count"):
        problems.append("verify.lat_received / lat_expected do not match latency.count")
    stragglers = verify.get("stragglers", 0)
    if not _is_count(stragglers):
        problems.append(f"verify.stragglers must be a count (an integer >= 0), not {stragglers!r}")
    elif stragglers and not (isinstance(thr, dict) and thr.get("delivery") == "lossy"):
        problems.append(f"verify.stragglers is {stragglers}, but only a lossy stream has a late tail")
    return problems


def ceiling_problems(result: Any) -> list[str]:
    """Everything wrong with a ceiling_probe result (schema testbed.ceiling/2): rows
    keyed by (transport, msg_size), each with a throughput or a latency (a role line
    has only its own), plus the placement and process model it ran with."""
    if not isinstance(result, dict) or result.get("schema") != CEILING_SCHEMA:
        return [f"not a {CEILING_SCHEMA} object"]
    rows = result.get("rows")
    if not isinstance(rows, list) or not rows:
        return ["rows must be a non-empty list"]
    problems: list[str] = []
    if result.get("process_model") not in PROCESS_MODELS:
        problems.append(f"process_model is {result.get('process_model')!r}, "
                        f"expected one of {', '.join(PROCESS_MODELS)}")
    if not isinstance(result.get("placement"), dict):
        problems.append("placement must be an object (the pins as asked)")
    for i, row in enumerate(rows):
        problems += _ceiling_row_problems(row, f"rows[{i}]")
    return problems


def _ceiling_row_problems(row: Any, where: str) -> list[str]:
    if not isinstance(row, dict) or row.get("transport") not in ("tcp", "ipc", "inproc"):
        return [f"{where}.transport must be tcp, ipc or inproc"]
    problems: list[str] = []
    if not isinstance(row.get("msg_size"), int) or row["msg_size"] <= 0:
        problems.append(f"{where}.msg_size is {row.get('msg_size')!r}, expected a positive integer")
    thr, lat = row.get("throughput"), row.get("latency")
    if thr is None and lat is None:
        problems.append(f"{where} has neither throughput nor latency")
    if thr is not None:
        if not isinstance(thr, dict):
            problems.append(f"{where}.throughput must be an object or null")
        else:
            for key in ("bytes_per_sec", "msgs_per_sec", "seconds"):
                _number(thr, key, f"{where}.throughput", problems, positive=True)
    if lat is not None:
        problems += latency_problems(lat, f"{where}.latency")
    return problems
