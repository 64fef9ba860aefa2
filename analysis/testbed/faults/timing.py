"""When the libraries noticed a fault and when delivery came back, on the one clock
every process of a cell shares (CLOCK_MONOTONIC).

  detect_ms     first DISCONNECTED monitor event of a process that lived through the
                fault start (the killed one cannot notice), at or after the fault start and
                before the senders stop (the closing of the sockets at the end is no fault)
  reconnect_ms  first HANDSHAKE_SUCCEEDED at or after the fault end (a restarted peer's
                own handshake included): the connection is usable again
  resume_ms     one-way patterns: the first intact delivery of a message sent at or
                after the fault end (so a backlog that drains late counts); REQ/REP:
                the first intact reply received at or after the fault end
A time the run never reached is None ("not seen").
"""

from __future__ import annotations

from .records import RECEIVED, REPLY, Record

DETECT_EVENTS = ("DISCONNECTED",)


def detect(events_by_process: list[tuple[int, list[dict]]], fault_start: int, until: int) -> dict:
    """events_by_process: (process start time ns, its events). Returns detect_ms and
    which socket and event, or detect_ms None."""
    best = None
    for started, events in events_by_process:
        if started > fault_start:
            continue  # a process started after the fault (a restart) did not live through it
        for e in events:
            if (
                e.get("what") == "monitor"
                and e.get("event") in DETECT_EVENTS
                and fault_start <= e["t"] < until
            ):
                if best is None or e["t"] < best["t"]:
                    best = e
                break
    if best is None:
        return {"detect_ms": None}
    return {"detect_ms": (best["t"] - fault_start) / 1e6, "detect_by": f"{best['socket']}:{best['event']}"}


def reconnect(events_by_process: list[tuple[int, list[dict]]], fault_end: int) -> float | None:
    times = [
        e["t"]
        for _started, events in events_by_process
        for e in events
        if e.get("what") == "monitor" and e.get("event") == "HANDSHAKE_SUCCEEDED" and e["t"] >= fault_end
    ]
    return (min(times) - fault_end) / 1e6 if times else None


def resume(delivery_logs: list[list[Record]], fault_end: int, reqrep: bool) -> float | None:
    if reqrep:
        times = [
            r.t_ns for log in delivery_logs for r in log if r.kind == REPLY and r.ok and r.t_ns >= fault_end
        ]
    else:
        times = [
            r.t_ns for log in delivery_logs for r in log if r.kind == RECEIVED and r.ok and r.aux >= fault_end
        ]
    return (min(times) - fault_end) / 1e6 if times else None


def resources(events_by_process: list[tuple[int, list[dict]]], summaries: list[dict]) -> dict:
    """Peak RSS (VmHWM of processes that ended, and the samples of those that did not)
    and peak open descriptors, over the cell's processes."""
    rss = [s["peak_rss_kb"] for s in summaries if "peak_rss_kb" in s]
    fds = [s["peak_fds"] for s in summaries if "peak_fds" in s]
    for _started, events in events_by_process:
        for e in events:
            if e.get("what") == "sample":
                rss.append(e["rss_kb"])
                fds.append(e["fds"])
    return {"peak_rss_kb": max(rss) if rss else None, "peak_fds": max(fds) if fds else None}
