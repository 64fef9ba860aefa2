"""slices.jsonl: the slices of every arms run of a run directory, one line per run
(docs/data-formats.md §4). The records (results.jsonl) hold what the verdicts judge,
one per cell and run, pooled over the run's slices; the slices stay for analysis (the
spread within a run, order effects, warm-up) and are never judged as repetitions.

A line keeps each slice's own figures (count, seconds, p50/p99, counters) but not its
latency histogram: the run's merged histogram is in each cell's record, and the
slices' would make the file ten times larger.

Versioned: every line carries `schema`; `read` migrates older versions (MIGRATIONS)
and refuses newer ones, naming the file.
"""
from __future__ import annotations

from pathlib import Path

from testbed.records import run_writer, store

FILE_NAME = store.SLICES_NAME
VERSION = 1
SCHEMA = f"testbed.slices/{VERSION}"
DROPPED = ("histogram", "counters_by_role")   # per-slice detail the records already pool

# from-version -> function turning a line into the next version's shape.
MIGRATIONS: dict[int, object] = {}


def line(block: str, repetition: int, cell_ids: list[str], seed: int, joined: dict) -> dict:
    """The slices line of one arms run from its joined bench line."""
    rounds = [{**{k: v for k, v in r.items() if k != "slices"},
               "slices": [{k: v for k, v in s.items() if k not in DROPPED} for s in r.get("slices") or []]}
              for r in joined.get("rounds") or []]
    return {"schema": SCHEMA, "block": block, "repetition": repetition, "cell_ids": cell_ids, "seed": seed,
            "counters": joined.get("counters"), "rounds": rounds}


def append(run_dir: Path, obj: dict) -> None:
    run_writer.append(run_dir, "slices", obj)


def _version(obj: dict, path: Path) -> int:
    tag = str(obj.get("schema", ""))
    prefix = "testbed.slices/"
    if not tag.startswith(prefix) or not tag[len(prefix):].isdigit():
        raise ValueError(f"{path}: a line's schema is {tag!r}; expected {SCHEMA}")
    return int(tag[len(prefix):])


def migrate(obj: dict, path: Path) -> dict:
    version = _version(obj, path)
    if version > VERSION:
        raise ValueError(f"{path}: schema {obj['schema']} is newer than this code reads ({SCHEMA})")
    while version < VERSION:
        obj = MIGRATIONS[version](obj)  # type: ignore[operator]
        version += 1
    return {**obj, "schema": SCHEMA}


def read(run_dir: Path) -> list[dict]:
    """Every run's slices line (a torn last line is skipped: store.read_lines), the
    latest per (block, repetition) when a resumed run measured one again."""
    path = Path(run_dir) / FILE_NAME
    latest: dict[tuple[str, int], dict] = {}
    for obj in store.read_lines(path):
        obj = migrate(obj, path)
        latest[(obj["block"], obj["repetition"])] = obj
    return list(latest.values())
