"""What libzmq 4.3.5's perf programs print, turned into a result object the rest of
the testbed reads like the bench's (throughput.msgs_per_sec, mb_per_sec in MB/s,
latency.mean in microseconds), or a clear reason why the text is not a sane report.

The programs print (perf/local_thr.cpp, inproc_thr.cpp; remote_lat.cpp, inproc_lat.cpp):

    message size: 64 [B]                 roundtrip count: 10000 (lat)
    message count: 100000 (thr)          average latency: 47.123 [us] (lat)
    mean throughput: 4012345 [msg/s]     (thr)
    mean throughput: 2054.321 [Mb/s]     (thr)

Their average latency is half the mean round trip (elapsed / (2 x round trips)): the
only latency figure they give, so it is stored as `latency.mean` (tidy `lat_mean_us`),
never as a percentile. A report whose size or count differs from what was asked, a
figure that is missing, not a number or not positive, is malformed: the cell fails.
"""
from __future__ import annotations

import math
import re

SCHEMA = "testbed.perf-tools/1"
_NUMBER = r"(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|-?nan|-?inf)"
_LINES = {
    "message_size": re.compile(r"^message size: " + _NUMBER + r" \[B\]\s*$", re.M),
    "message_count": re.compile(r"^message count: " + _NUMBER + r"\s*$", re.M),
    "roundtrip_count": re.compile(r"^roundtrip count: " + _NUMBER + r"\s*$", re.M),
    "msgs_per_sec": re.compile(r"^mean throughput: " + _NUMBER + r" \[msg/s\]\s*$", re.M),
    "megabits_per_sec": re.compile(r"^mean throughput: " + _NUMBER + r" \[Mb/s\]\s*$", re.M),
    "latency_us": re.compile(r"^average latency: " + _NUMBER + r" \[us\]\s*$", re.M),
}
NEEDED = {"thr": ("message_size", "message_count", "msgs_per_sec", "megabits_per_sec"),
          "lat": ("message_size", "roundtrip_count", "latency_us")}


class MalformedOutput(ValueError):
    """The program's text is not the report it should print; the message says what is wrong."""


def _figures(text: str, names: tuple[str, ...]) -> dict[str, float]:
    out = {}
    for name in names:
        found = _LINES[name].findall(text)
        if len(found) != 1:
            what = "missing" if not found else f"printed {len(found)} times"
            raise MalformedOutput(f"'{name.replace('_', ' ')}' line {what}")
        value = float(found[0])
        if not math.isfinite(value):
            raise MalformedOutput(f"'{name.replace('_', ' ')}' is {found[0]}")
        out[name] = value
    return out


def parse(kind: str, text: str, size: int, count: int) -> dict:
    """The result object of one run of the reporting program (local_thr or inproc_thr
    for thr, remote_lat or inproc_lat for lat); MalformedOutput when it is not sane."""
    if kind not in NEEDED:
        raise ValueError(f"kind {kind!r}: expected thr or lat")
    fig = _figures(text, NEEDED[kind])
    if int(fig["message_size"]) != size:
        raise MalformedOutput(f"reported message size {fig['message_size']:g} B, asked for {size} B")
    counted = fig["message_count" if kind == "thr" else "roundtrip_count"]
    if int(counted) != count:
        raise MalformedOutput(f"reported count {counted:g}, asked for {count}")
    base = {"schema": SCHEMA, "kind": kind, "msg_size": size, "count": count}
    if kind == "thr":
        if fig["msgs_per_sec"] <= 0 or fig["megabits_per_sec"] <= 0:
            raise MalformedOutput(f"throughput not positive ({fig['msgs_per_sec']:g} msg/s, "
                                  f"{fig['megabits_per_sec']:g} Mb/s)")
        # The tools' Mb/s is megabits (msg/s x size x 8 / 10^6); the testbed's mb_per_sec
        # (tidy throughput_mbps) is megabytes per second: the same figure / 8.
        rate, megabits = fig["msgs_per_sec"], fig["megabits_per_sec"]
        return {**base, "throughput": {"msgs_per_sec": rate, "mb_per_sec": megabits / 8,
                                       "megabits_per_sec": megabits, "seconds": count / rate}}
    if fig["latency_us"] <= 0:
        raise MalformedOutput(f"latency not positive ({fig['latency_us']:g} us)")
    return {**base, "latency": {"mean": fig["latency_us"], "count": count,
                                "seconds": 2 * count * fig["latency_us"] / 1e6}}
