"""Counted work per message: what an arms run's counters say one message cost, read
from a record's `result.counted` (sweep/arms_pool.py) into the metrics the verdicts
judge beside the timings (issue 41: a second judge, per configuration and library).

Counted work is what the process did (context switches and page faults in every timed
run; system calls and bytes per data call where a run counted the syscall tracepoints,
which timed runs do not: they slow every call), summed over a run's throughput slices
of one arm and divided by its messages: the kernel's and the library's work, not the host's speed, so a slow
spell of the host moves it far less than a time. It is judged per run, paired, like
the timings (the run is the unit of replication).

Add-one: a count is judged as (events + 1) / messages (bytes per data call as bytes /
(calls + 1)), so that a run with no page fault at all still has a ratio; one event per
run is far below what any comparison here resolves (runs count thousands of messages).
The records keep the exact totals.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CountedMetric:
    name: str                 # tidy metric name (records/schema.py)
    event: str                # the bench counter it reads ("" for bytes per data call)
    higher_is_better: bool
    unit: str
    label: str
    short: str                # the name in one-line answers ("context switches/msg")


METRICS = (
    CountedMetric("cw_syscalls_per_msg", "syscalls", False, "calls/msg", "System calls per message",
                  "system calls/msg"),
    CountedMetric("cw_bytes_per_syscall", "", True, "B/call", "Bytes per data system call",
                  "bytes/data call"),
    CountedMetric("cw_context_switches_per_msg", "context_switches", False, "switches/msg",
                  "Context switches per message", "context switches/msg"),
    CountedMetric("cw_page_faults_per_msg", "page_faults", False, "faults/msg", "Page faults per message",
                  "page faults/msg"),
)
# Shown beside the judged ones, not judged: CPU time is time, and hardware instructions
# exist only where the host counts them (callgrind's are work.jsonl's).
SHOWN = (
    CountedMetric("cw_task_clock_ns_per_msg", "task_clock_ns", False, "ns/msg", "CPU time per message",
                  "CPU time/msg"),
    CountedMetric("cw_instructions_per_msg", "instructions", False, "instr/msg",
                  "Instructions per message (counted)", "instructions/msg"),
    # The part of the context switches the process asked for (getrusage's voluntary
    # ones); the rest are preemptions, which follow the host's load. Recorded to learn
    # whether it is the steadier judge on loaded hosts before it becomes one.
    CountedMetric("cw_voluntary_switches_per_msg", "voluntary_context_switches", False, "switches/msg",
                  "Voluntary context switches per message", "voluntary switches/msg"),
)
BY_NAME = {m.name: m for m in METRICS + SHOWN}
JUDGED = tuple(m.name for m in METRICS)
# The counted judge the summary and the inflection table pair with throughput: context
# switches, which every timed arms run counts (perf's software events, or getrusage);
# system calls are counted by counting runs only (their tracepoints slow the timing).
HEADLINE = "cw_context_switches_per_msg"
# What only counting runs count ([run].counting_runs, sweep/counting.py): the syscall
# tracepoints slow every call, so timed runs never count them and a counting run's
# times are never judged. Its records live in their own journal (counting.jsonl) and
# reach the tidy table as rows of this table (results/load.py), for these metrics only.
TRACEPOINT = ("cw_syscalls_per_msg", "cw_bytes_per_syscall")
COUNTING_TABLE = "counting"


def from_counting_runs(layout: str | None) -> tuple[str, ...]:
    """The metrics a run's counting runs give the tidy table: the tracepoints' alone in
    an arms run (its timed runs count the rest per slice); every judged one in a blocks
    run (sweep/counting.py: its timed runs are whole bench processes, whose perf stat
    totals hold start-up and the latency phase, so its counting runs count them all)."""
    return JUDGED if layout == "blocks" else TRACEPOINT


def values(result: dict | None, only: tuple[str, ...] | None = None) -> dict[str, float]:
    """tidy metric -> value of one record's result (empty when it has no counts);
    `only`: these metrics alone (a counting run's record gives TRACEPOINT only)."""
    counted = (result or {}).get("counted") or {}
    totals, messages = counted.get("totals") or {}, counted.get("messages")
    if not isinstance(messages, (int, float)) or messages <= 0:
        return {}
    out = {}
    for m in METRICS + SHOWN:
        if m.event and isinstance(totals.get(m.event), (int, float)):
            out[m.name] = (totals[m.event] + (0 if m in SHOWN else 1)) / messages
    data = counted.get("data_syscalls")
    if isinstance(data, (int, float)) and isinstance(counted.get("bytes"), (int, float)):
        out["cw_bytes_per_syscall"] = counted["bytes"] / (data + 1)
    return out if only is None else {k: v for k, v in out.items() if k in only}


def value(result: dict | None, name: str) -> float | None:
    return values(result).get(name)
