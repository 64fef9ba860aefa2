"""Expand an experiment into cells, give each a stable id, split into shards and
decide the order in which (cell, repetition) pairs run.

Order matters for fairness: a machine drifts (thermal, other tenants), so the
libraries of one configuration run back to back (A B, then B A in the next
repetition) and repetitions are the outer loop; the order of configurations inside a
repetition is shuffled with a recorded seed.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import random
from dataclasses import dataclass, field

from testbed.sweep.config import Experiment


@dataclass(frozen=True)
class Cell:
    cell_id: str
    group: str          # id of the configuration shared by all libraries (pairs them)
    library: str        # label used in results (alias or registered name)
    library_name: str   # registered library name
    kind: str
    pattern: str
    transport: str
    msg_size: int
    io_threads: int
    params: dict = field(hash=False)  # env variable -> value ("unset" = not set)
    config: str = ""
    count: int = 0
    lat_count: int = 0

    def fields(self) -> dict:
        """The values selectors ([[sweep.exclude]], [[perf.record]]) match against."""
        out = {"library": self.library, "pattern": self.pattern, "transport": self.transport,
               "msg_size": str(self.msg_size), "io_threads": str(self.io_threads), "config": self.config}
        out.update(self.params)
        return out


def _hash(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def _env_configs(exp: Experiment) -> list[tuple[dict, str]]:
    """Every env combination with its human label: crossed axes x zipped groups."""
    axes: list[list[tuple[dict, str | None]]] = []
    for name, values in exp.env_axes.items():
        varying = len(values) > 1
        axes.append([({name: v}, f"{name}={v}" if varying else None) for v in values])
    for group in exp.zipped:
        n = len(group.labels)
        axes.append([({k: vals[i] for k, vals in group.env.items()}, group.labels[i]) for i in range(n)])
    out = []
    for combo in itertools.product(*axes):
        env: dict = {}
        labels = []
        for part, label in combo:
            env.update(part)
            if label is not None:
                labels.append(label)
        out.append((env, " / ".join(labels) or "default"))
    return out


def matches(selector: dict, fields: dict) -> bool:
    return all(fields.get(k) in values for k, values in selector.items())


def expand(exp: Experiment) -> list[Cell]:
    cells = []
    for pattern, transport, size, io_threads, (env, label) in itertools.product(
            exp.patterns, exp.transports, exp.sizes, exp.io_threads, _env_configs(exp)):
        identity = {
            "kind": exp.kind, "pattern": pattern, "transport": transport, "msg_size": size,
            "io_threads": io_threads, "params": env, "count": exp.count_for(size),
            "lat_count": exp.lat_count_for(size), "warmup": exp.warmup, "mode": exp.mode,
            "hwm": exp.hwm,
        }
        group = _hash(identity)
        for lib in exp.libraries:
            cell = Cell(
                cell_id=_hash({**identity, "library": lib.label, "library_name": lib.name}),
                group=group, library=lib.label, library_name=lib.name, kind=exp.kind,
                pattern=pattern, transport=transport, msg_size=size, io_threads=io_threads,
                params=dict(env), config=label, count=identity["count"],
                lat_count=identity["lat_count"],
            )
            if not any(matches(sel, cell.fields()) for sel in exp.exclude):
                cells.append(cell)
    return cells


def shard(cells: list[Cell], index: int, total: int) -> list[Cell]:
    """Shard `index` (1-based) of `total`: whole configuration groups, dealt round-robin
    over the groups in their sorted order, so both libraries of a pair share a shard
    and the split depends on nothing but the cells themselves."""
    groups = sorted({c.group for c in cells})
    mine = {g for i, g in enumerate(groups) if i % total == index - 1}
    return [c for c in cells if c.group in mine]


def parse_shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard {text!r}: expected I/N with integers, e.g. 1/2") from None
    if not (n >= 1 and 1 <= i <= n):
        raise ValueError(f"--shard {text!r}: need 1 <= I <= N")
    return i, n


def order(cells: list[Cell], repetitions: int, seed: int, shuffle: bool = True,
          interleave: bool = True) -> list[tuple[Cell, int]]:
    """(cell, repetition) pairs in run order; see the module comment."""
    rng = random.Random(seed)
    by_group: dict[str, list[Cell]] = {}
    for c in cells:
        by_group.setdefault(c.group, []).append(c)
    groups = list(by_group)
    if not interleave:
        # Library-major: every cell of one library, then the next (for comparison only).
        libs = list(dict.fromkeys(c.library for c in cells))
        by_lib = sorted(cells, key=lambda c: libs.index(c.library))  # stable: plan order within
        return [(c, rep) for rep in range(repetitions) for c in by_lib]
    out = []
    for rep in range(repetitions):
        keys = groups[:]
        if shuffle:
            rng.shuffle(keys)
        for g in keys:
            libs = by_group[g]
            k = rep % len(libs)
            out += [(c, rep) for c in libs[k:] + libs[:k]]  # A B, then B A, ...
    return out


# Rough cost model for --dry-run: loopback figures of an otherwise idle 2-core host
# (/work/shared/FACTS.md) with bandwidth halved for margin. A host busy with other
# work runs about 2x slower than this (measured with load average ~12). Measured wall
# times of earlier runs doing the same work replace the model where available.
PROCESS_OVERHEAD_S = 0.35          # fork/exec, connect, perf stat start, teardown
PER_MESSAGE_S = {"tcp": 0.30e-6, "ipc": 0.28e-6, "inproc": 0.20e-6}
BYTES_PER_S = {"tcp": 0.8e9, "ipc": 0.9e9, "inproc": 3.0e9}  # loaded-host loopback figures
RTT_BASE_S = {"tcp": 90e-6, "ipc": 70e-6, "inproc": 50e-6}
STARTUP_PROCESS_S = 0.05           # one bench process with tiny counts (measured ~25 ms)


def history_key(pattern, transport, msg_size, io_threads, count, lat_count, kind) -> tuple:
    return (pattern, transport, int(msg_size), int(io_threads), int(count), int(lat_count), kind)


def cell_history_key(cell: Cell) -> tuple:
    return history_key(cell.pattern, cell.transport, cell.msg_size, cell.io_threads, cell.count,
                       cell.lat_count, cell.kind)


def estimate_cell_seconds(cell: Cell, exp: Experiment, hyperfine_runs: int = 10,
                          history: dict | None = None) -> float:
    """Measured median wall time of the same work in an earlier run if known, else the model."""
    if history and cell_history_key(cell) in history:
        return history[cell_history_key(cell)]
    t = cell.transport
    per_msg = PER_MESSAGE_S[t] + cell.msg_size / BYTES_PER_S[t]
    thr = 0.0 if exp.mode == "lat" else (cell.count + exp.warmup) * per_msg
    lat = 0.0 if exp.mode == "thr" else cell.lat_count * (RTT_BASE_S[t] + 2 * cell.msg_size / BYTES_PER_S[t])
    if cell.kind == "startup":  # hyperfine: 1 warm-up + N timed processes, each ~50 ms plus its work
        return PROCESS_OVERHEAD_S + (hyperfine_runs + 1) * (STARTUP_PROCESS_S + thr + lat)
    return PROCESS_OVERHEAD_S + thr + lat
