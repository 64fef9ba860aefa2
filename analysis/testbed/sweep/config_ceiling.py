"""The `[ceiling]` table of experiment.toml: the host's own limit measured inside the
run (issue 27.5). For every block of tcp/ipc cells at one of `sizes`, the runner runs
bench/ceiling's ceiling_probe (a plain socket pump, no messaging library) once per
repetition, inside the block's batch, with the cells' placement, process model, size
and socket buffers (sweep/ceiling.py); the report shows each library's share of it.

    [ceiling]
    sizes = [65536]            # required: workload sizes whose tcp/ipc cells get a probe
    bytes = 33554432           # streamed per try (each write size x way of waiting)
    write_sizes = [262144, 1048576]  # optional: the probe's write sizes to try (best counts)
    io_waits = ["coalesce", "handoff"]  # optional: the probe's ways of waiting to try
    source_messages = 16       # optional: the probe's sender writes from a ring of this many
                               # message-sized buffers (default 1: one cache-hot buffer), to
                               # bound cells that send zero-copy from a ring of that size
    lat_count = 300            # round trips per latency row (mode lat/both)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from testbed.sweep.toml_reader import Section

TRANSPORTS = ("tcp", "ipc")          # a socket pump bounds these; inproc is not a socket
PROCESS_MODELS = ("one-process", "two-process")  # the probe runs on this host only
IO_WAITS = ("blocking", "poll", "coalesce", "handoff")  # bench/ceiling/stream_io.hpp
MIN_BYTES = 1 << 20                  # ceiling_probe --bytes' own lower bound
# Defaults: four tries of 32 MiB each (~15-40 ms apiece on loopback here): the two ways
# of waiting that won the probe rows in bench/README.md ("The ceiling is above the
# cells": handoff 9 of 12, coalesce 3) at two write sizes, and as many round trips as
# the cells' lat_counts at 64 KiB. Measured on the loaded 2-core host (2026-11-27):
# `./testbed ceiling` with these settings took 0.6-1.5 s per transport and size,
# Python start-up included; the full 12 tries 1.0-2.0 s.
DEFAULT_BYTES = 32 << 20
DEFAULT_WRITE_SIZES = (262144, 1048576)
DEFAULT_IO_WAITS = ("coalesce", "handoff")
DEFAULT_LAT_COUNT = 300


@dataclass(frozen=True)
class CeilingSpec:
    sizes: tuple[int, ...]
    bytes: int = DEFAULT_BYTES
    write_sizes: tuple[int, ...] = DEFAULT_WRITE_SIZES
    io_waits: tuple[str, ...] = DEFAULT_IO_WAITS
    lat_count: int = DEFAULT_LAT_COUNT
    source_messages: int = 1

    def as_manifest(self) -> dict:
        return {"sizes": list(self.sizes), "transports": list(TRANSPORTS), "bytes": self.bytes,
                "write_sizes": list(self.write_sizes), "io_waits": list(self.io_waits),
                "lat_count": self.lat_count, "source_messages": self.source_messages,
                "process_models": list(PROCESS_MODELS)}


def all_sizes(doc: dict) -> tuple[set[int], set[str]]:
    """Every size and transport the experiment lists in [workload] or any profile (the
    probe's sizes must bound cells of at least one profile)."""
    profiles = doc.get("profiles", {}) if isinstance(doc.get("profiles"), dict) else {}
    tables = [doc.get("workload", {})] + [p for p in profiles.values() if isinstance(p, dict)]
    tables = [t for t in tables if isinstance(t, dict)]
    sizes = {s for t in tables for s in t.get("sizes", []) if isinstance(s, int)}
    transports = {s for t in tables for s in t.get("transports", []) if isinstance(s, str)}
    return sizes, transports


def parse(path: Path, top: Section, doc: dict, kind: str, sweep: dict) -> CeilingSpec | None:
    """[ceiling] -> CeilingSpec, or None when the table is absent."""
    if "ceiling" not in top.table:
        top.seen.add("ceiling")
        return None
    sec = top.sub("ceiling")
    if kind != "bench":
        raise sec.err("", f"a probe bounds bench cells, and this experiment's kind is {kind!r}",
                      'remove [ceiling], or kind = "bench"')
    sizes = sec.int_list("sizes", 1)
    known, transports = all_sizes(doc)
    for size in sizes:
        if size not in known:
            raise sec.err("sizes", f"{size} is not a size of [workload] or any profile, so no cell would "
                          "be bounded", ", ".join(str(s) for s in sorted(known)))
    if not set(transports) & set(TRANSPORTS):
        raise sec.err("", "no tcp or ipc cells to bound (inproc is not a socket)",
                      "[workload].transports with tcp or ipc, or remove [ceiling]")
    if not set(sweep["process_model"]) & set(PROCESS_MODELS):
        raise sec.err("", "the probe runs on this host only, and every cell is two-host",
                      "[sweep].process_model with one-process or two-process, or remove [ceiling]")
    spec = CeilingSpec(
        sizes=sizes,
        bytes=_bounded(sec, "bytes", DEFAULT_BYTES, MIN_BYTES, 1 << 40),
        write_sizes=_write_sizes(sec),
        io_waits=sec.str_list("io_waits", IO_WAITS, DEFAULT_IO_WAITS),
        lat_count=_bounded(sec, "lat_count", DEFAULT_LAT_COUNT, 1, 10_000_000),
        source_messages=_bounded(sec, "source_messages", 1, 1, 4096),  # ceiling_probe's bounds
    )
    sec.done()
    return spec


def _bounded(sec: Section, name: str, default: int, low: int, high: int) -> int:
    allowed = f"an integer in {low}..{high}"
    value = sec.get(name, int, default, allowed=allowed)
    if not low <= value <= high:
        raise sec.err(name, f"bad value {value!r}", allowed)
    return value


def _write_sizes(sec: Section) -> tuple[int, ...]:
    values = sec.int_list("write_sizes", 1, DEFAULT_WRITE_SIZES)
    for v in values:
        if v > 1 << 30:
            raise sec.err("write_sizes", f"bad value {v!r}", "integers in 1..1073741824 (bytes per write)")
    return values

