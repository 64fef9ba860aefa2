"""Expand an experiment into cells, give each a stable id, split into shards and
decide the order in which (cell, repetition) pairs run.

Order matters for fairness: a machine drifts (thermal, other tenants), so every cell
of one block runs back to back in a balanced order (block_order), and repetitions are
the outer loop; the order of blocks inside a repetition is shuffled with a recorded
seed. A block is one workload point (pattern, transport, size,
IO threads, placement, ...) with all its libraries *and* all its configurations: so
repetition i of a library in one configuration ran next to repetition i of the same
library in another configuration, and configuration comparisons are paired like the
library comparisons are.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import random
from dataclasses import dataclass, field

from testbed.sweep.config import Experiment
from testbed.sweep.config_net import DIRECT_LINK


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
    count: int = 0              # declared counts; calibration may choose others at run time
    lat_count: int = 0
    placement: str = "free"
    process_model: str = "one-process"
    link: str = DIRECT_LINK
    block: str = ""     # id of the workload point shared by all configurations (pairs them)

    @property
    def block_id(self) -> str:
        """The block this cell runs in (a cell made without one is its own configuration's)."""
        return self.block or self.group

    def fields(self) -> dict:
        """The values selectors ([[sweep.exclude]], [[perf.record]]) match against."""
        out = {"library": self.library, "pattern": self.pattern, "transport": self.transport,
               "msg_size": str(self.msg_size), "io_threads": str(self.io_threads), "config": self.config,
               "placement": self.placement, "process_model": self.process_model, "link": self.link}
        out.update(self.params)
        return out

    @property
    def label(self) -> str:
        """One line naming the cell for people (progress, errors)."""
        where = f"{self.placement} {self.process_model}" + (f" link={self.link}" if self.link != DIRECT_LINK
                                                             else "")
        return (f"{self.library} {self.pattern} {self.transport} {self.msg_size}B io{self.io_threads} "
                f"{self.config} {where}")


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


def _topologies(exp: Experiment, transport: str) -> list[tuple[str, str]]:
    """(process_model, link) pairs a transport can take: inproc lives in one process;
    only two-host cells have a link to shape (the others run on loopback)."""
    out = []
    for model in exp.process_model:
        if transport == "inproc":
            model = "one-process"
        links = exp.link if model == "two-host" else (DIRECT_LINK,)
        out += [(model, link) for link in links if (model, link) not in out]
    return out


def _identity(exp: Experiment, pattern, transport, size, io_threads, env, placement, model, link) -> dict:
    """What makes a configuration; v1 keys keep their ids when the new axes are at their
    v1 meaning (free, one-process, direct), so old runs still resume."""
    identity = {
        "kind": exp.kind, "pattern": pattern, "transport": transport, "msg_size": size,
        "io_threads": io_threads, "params": env, "count": exp.count_for(size),
        "lat_count": exp.lat_count_for(size), "warmup": exp.warmup, "mode": exp.mode, "hwm": exp.hwm,
    }
    if (placement, model, link) != ("free", "one-process", DIRECT_LINK):
        identity.update(placement=placement, process_model=model, link=link)
    return identity


def expand(exp: Experiment) -> list[Cell]:
    cells, seen = [], set()
    for pattern, transport, size, io_threads, (env, label), placement in itertools.product(
            exp.patterns, exp.transports, exp.sizes, exp.io_threads, _env_configs(exp), exp.placement):
        for model, link in _topologies(exp, transport):
            identity = _identity(exp, pattern, transport, size, io_threads, env, placement, model, link)
            group = _hash(identity)
            block = _hash({**{k: v for k, v in identity.items() if k != "params"}, "block": True})
            if group in seen:  # e.g. inproc under two process models: one cell
                continue
            seen.add(group)
            for lib in exp.libraries:
                cell = Cell(
                    cell_id=_hash({**identity, "library": lib.label, "library_name": lib.name}),
                    group=group, library=lib.label, library_name=lib.name, kind=exp.kind,
                    pattern=pattern, transport=transport, msg_size=size, io_threads=io_threads,
                    params=dict(env), config=label, count=identity["count"],
                    lat_count=identity["lat_count"], placement=placement, process_model=model, link=link,
                    block=block,
                )
                if not any(matches(sel, cell.fields()) for sel in exp.exclude):
                    cells.append(cell)
    return cells


def shard(cells: list[Cell], index: int, total: int) -> list[Cell]:
    """Shard `index` (1-based) of `total`: whole blocks, dealt round-robin over the
    blocks in their sorted order, so every pair (libraries, configurations) shares a
    shard and the split depends on nothing but the cells themselves."""
    blocks = sorted({c.block_id for c in cells})
    mine = {b for i, b in enumerate(blocks) if i % total == index - 1}
    return [c for c in cells if c.block_id in mine]


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
        by_group.setdefault(c.block_id, []).append(c)
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
            out += [(c, rep) for c in block_order(by_group[g], rep)]
    return out


def _rotated(items: list, k: int) -> list:
    k %= len(items)
    return items[k:] + items[:k]


def block_order(cells: list[Cell], rep: int) -> list[Cell]:
    """The run order of one block at repetition `rep`, balanced for both kinds of pair:
    the libraries of a configuration run back to back, alternating who goes first (A
    B, then B A); the configurations rotate by one every two repetitions and run in
    reverse at odd ones, so any two configurations swap places between repetitions 2m
    and 2m + 1 (who runs first is never tied to a configuration)."""
    by_config: dict[str, list[Cell]] = {}
    for c in cells:
        by_config.setdefault(c.config, []).append(c)
    configs = _rotated(list(by_config), rep // 2)
    if rep % 2:
        configs.reverse()
    return [c for cfg in configs for c in _rotated(by_config[cfg], rep)]
