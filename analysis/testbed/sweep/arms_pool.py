"""One arm's figures for one run, pooled over the run's measured slices of that arm.

An arms run (sweep/arms.py) measures every arm in many short slices; the sweep stores
one record per arm and run, as a block run stores one per cell and repetition, so the
paired verdicts judge runs, never slices (issue 41: each run's pair of arms carries its
own offset, so slices of one run are not independent repetitions). Pooled:

- throughput: messages / span seconds (receiver seconds where a slice has no span),
  summed over the throughput slices (the sender's rate likewise);
- latency: p50/p90/p99/p99.9/max from the slices' histograms merged into one
  (nearest rank over every round trip of the run, as the bench's own percentiles);
- counted work: every counter the bench counted, summed over the throughput slices
  (both processes), per message; bytes per data system call (DATA_SYSCALLS: the
  read/write/send/recv family, not the waiting calls).

Pure functions on the joined bench line; no I/O.
"""
from __future__ import annotations

from testbed.bench import latency_histogram

# The system calls that move data (bench/README.md "Counted work per slice" names each);
# the waiting ones (poll, epoll_wait, futex) are counted in `syscalls` but carry no bytes.
DATA_SYSCALLS = tuple(f"syscalls_{n}" for n in ("read", "write", "readv", "writev", "sendto", "recvfrom",
                                                "sendmsg", "recvmsg"))


def arm_slices(line: dict, arm: int, kind: str) -> list[dict]:
    """The measured (not warm-up) slices of arm index `arm` of this kind (thr/lat)."""
    return [s for rnd in line.get("rounds") or [] if not rnd.get("warmup")
            for s in rnd.get("slices") or [] if s.get("arm") == arm and s.get("kind") == kind]


def _sum(slices: list[dict], key: str) -> float | None:
    values = [s.get(key) for s in slices]
    if not values or any(not isinstance(v, (int, float)) for v in values):
        return None
    return float(sum(values))


def throughput(slices: list[dict], msg_size: int) -> dict | None:
    """On one host a slice is timed by its span (the sender's last warm-up send to the
    receiver's last arrival, one clock): a receiver scheduled late starts its own window
    late, up to 22x off in short slices (docs/design/2026-12-02-arms.md, As built)."""
    basis = "span_seconds" if all(isinstance(s.get("span_seconds"), (int, float)) for s in slices) \
        else "receiver_seconds"
    count, secs = _sum(slices, "count"), _sum(slices, basis)
    if not count or not secs or secs <= 0:
        return None
    rate = count / secs
    out = {"count": int(count), "slices": len(slices), "seconds": secs, "timed_by": basis,
           "receiver_seconds": _sum(slices, "receiver_seconds"), "msgs_per_sec": rate,
           "bytes_per_sec": rate * msg_size, "mb_per_sec": rate * msg_size / 1e6, "mb_unit": "1e6 bytes"}
    sender = _sum(slices, "sender_seconds")
    if sender and sender > 0:
        out.update(sender_seconds=sender, sender_msgs_per_sec=count / sender)
    return out


PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999, "max": 1.0}


def latency(slices: list[dict]) -> dict | None:
    """Percentiles of every round trip of the run's latency slices of one arm (us)."""
    hists = [latency_histogram.decode(s["histogram"]) for s in slices if isinstance(s.get("histogram"), dict)]
    if not hists or len(hists) != len(slices):
        return None
    merged = latency_histogram.merge(hists)
    if merged.total == 0:
        return None
    scale = 1000.0 if merged.unit == "ns" else 1.0
    out = {"count": merged.total, "slices": len(slices), "unit": "us", "measure": "rtt/2",
           "min": merged.percentile(0.0) / scale}
    out.update({k: merged.percentile(q) / scale for k, q in PERCENTILES.items()})
    out["mean"] = _mean(merged) / scale
    out["histogram"] = latency_histogram.to_json(merged)
    return out


def _mean(h: latency_histogram.Histogram) -> float:
    return sum(n * h.representative(i) for i, n in enumerate(h.counts) if n) / h.total


def counted(slices: list[dict], msg_size: int, events: list[str]) -> dict | None:
    """Counters summed over the throughput slices, and per message. Only events the
    bench says it counted (`counters.events`); a missing value is never read as 0."""
    messages = _sum(slices, "count")
    if not messages or not events:
        return None
    totals: dict[str, float] = {}
    for event in events:
        values = [(s.get("counters") or {}).get(event) for s in slices]
        if values and all(isinstance(v, (int, float)) for v in values):
            totals[event] = float(sum(values))
    if not totals:
        return None
    data = sum(v for k, v in totals.items() if k in DATA_SYSCALLS)
    has_data = any(k in DATA_SYSCALLS for k in totals)
    return {"messages": int(messages), "bytes": int(messages) * msg_size, "totals": totals,
            "per_msg": {k: v / messages for k, v in totals.items()},
            "data_syscalls": data if has_data else None,
            "bytes_per_data_syscall": (messages * msg_size / data) if has_data and data > 0 else None}


def unavailable(line: dict) -> dict:
    """event -> why the bench could not count it (`counters.unavailable`, of each role's
    process where two ran): what a report says instead of a figure, never a zero."""
    header = line.get("counters") or {}
    out = {}
    for part in [header, *(header.get("by_role") or {}).values()]:
        for event, why in ((part or {}).get("unavailable") or {}).items():
            out.setdefault(str(event), str(why))
    return out


def arm_result(line: dict, arm: int, msg_size: int, mode: str) -> dict:
    """The cell result of arm `arm`: the shape of a bench result (throughput, latency)
    plus `counted` and `arms` (where the arm stood in the run)."""
    thr = arm_slices(line, arm, "thr")
    lat = arm_slices(line, arm, "lat")
    events = list(((line.get("counters") or {}).get("events")) or [])
    info = (line.get("arms") or [])[arm]
    keep = ("schema", "role", "pattern", "transport", "msg_size", "settings", "placement", "threads",
            "verify", "sender_settings")
    out = {k: line[k] for k in keep if k in line}
    out.update(library=info.get("library") or {"name": info.get("lib")}, env=info.get("env") or {},
               throughput=throughput(thr, msg_size) if mode != "lat" else None,
               latency=latency(lat) if mode != "thr" else None,
               counted={"source": (line.get("counters") or {}).get("source", "none"), "events": events,
                        **({"unavailable": gone} if (gone := unavailable(line)) else {}),
                        **(counted(thr, msg_size, events) or {})} if thr else None,
               arms={"index": arm, "label": info.get("label"), "arms": len(line.get("arms") or []),
                     "rounds": sum(1 for r in line.get("rounds") or [] if not r.get("warmup"))})
    return out


def missing(result: dict, mode: str) -> str:
    """Why a pooled result cannot stand for the arm ("" = it can)."""
    if mode != "lat" and not result.get("throughput"):
        return "no measured throughput slice of this arm in the run's output"
    if mode != "thr" and not result.get("latency"):
        return "no measured latency slice (with a histogram) of this arm in the run's output"
    return ""
