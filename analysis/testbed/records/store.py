"""The files of a run directory, each named once here (the sweep writes them, the
analysis reads them; docs/data-formats.md §4), and results.jsonl itself: append-only,
one JSON object per finished cell attempt. A finished run is compacted into
results.parquet (columnar.py) holding the same records; `read_run` reads whichever
the run has, so no reader needs to know which.

Each line is flushed and fsynced before the next cell starts, so a power cut or
kill -9 loses at most the cell that was running. A torn last line (the process died
mid-write) is moved aside on resume, never silently dropped.
"""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

RESULTS_NAME = "results.jsonl"
PARQUET_NAME = "results.parquet"       # records/columnar.py: the same records, compacted
TORN_NAME = "torn-lines.txt"
MANIFEST_NAME = "manifest.json"        # records/manifest.py
SPEED_NAME = "speed.jsonl"             # records/speed_reference.py
CALIBRATION_NAME = "calibration.jsonl"  # sweep/calibrate.py
WORK_NAME = "work.jsonl"               # sweep/work.py: work per message, one line per cell
CEILING_RUN_NAME = "ceiling.jsonl"     # sweep/ceiling.py: the probe measured inside the run
CEILING_HOST_NAME = "ceiling.json"     # `./testbed ceiling` before the run (results/ceiling.py)
SLICES_NAME = "slices.jsonl"           # records/slices.py: the slices of every arms run
COUNTING_NAME = "counting.jsonl"       # sweep/counting.py: the counting runs' records (never timed)
FLAMEGRAPHS_DIR = "flamegraphs"        # sweep/flamegraphs.py
TOML_COPY_NAME = "experiment.toml"     # the experiment as it ran (sweep/runner.py)
# A finished run's side files that a compact or a publish stores gzipped (<name>.gz):
# the speed reference alone was 12 MB of JSONL over the published runs, ~8x smaller
# packed. read_lines reads the packed lines first, then any appended since (a resumed
# run appends to the plain file), so no reader needs to know which a run has.
PACKED_SIDE_FILES = (SPEED_NAME, WORK_NAME, CEILING_RUN_NAME, COUNTING_NAME)
PACK_SUFFIX = ".gz"


class CorruptLine(ValueError):
    """A line that is not JSON before the last one: corruption, not an interruption."""


def parse_lines(data: bytes, path: Path | str, strict: bool = True) -> tuple[list[dict], str, int]:
    """The one rule for every JSONL file of a run directory: (records, torn tail, offset
    where the torn tail starts). The last non-empty line, with or without its newline,
    is torn when it is not valid JSON (the writer died mid-line): it is returned apart,
    never a record and never an error, whichever file or reader. A complete object
    lacking only its newline is a record. A bad line before the last one raises
    CorruptLine when `strict` (the results journal: nothing else writes it); side files
    (speed, work, calibration, ceiling, slices) skip it, since append_line closes a
    torn line off with a newline before it appends, leaving it mid-file."""
    records, torn, torn_at = [], "", len(data)
    starts, lines = [], []
    at = 0
    for raw in data.split(b"\n"):
        if raw.strip():
            starts.append(at)
            lines.append(raw)
        at += len(raw) + 1
    for n, line in enumerate(lines):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if n == len(lines) - 1:
                torn, torn_at = line.decode("utf-8", "replace"), starts[n]
            elif strict:
                number = data[: starts[n]].count(b"\n") + 1
                raise CorruptLine(f"{path}:{number}: not valid JSON, and not the last line: "
                                  f"corrupt ({exc})") from None
    return records, torn, torn_at


def read_records(path: Path) -> tuple[list[dict], str]:
    """All complete records of the results journal, plus the text of a torn last line
    ("" if none; parse_lines). A bad line before the last one raises CorruptLine."""
    if not path.exists():
        return [], ""
    records, torn, _ = parse_lines(path.read_bytes(), path)
    return records, torn


def repair(path: Path) -> str:
    """Cut a torn last line off `path` (saving it in torn-lines.txt); return it."""
    data = path.read_bytes() if path.exists() else b""
    _, torn, torn_at = parse_lines(data, path)
    if torn:
        keep = data[:torn_at]
        with open(path.parent / TORN_NAME, "a") as f:
            f.write(torn + "\n")
        _rewrite(path, keep)
    elif data and not data.endswith(b"\n"):
        _rewrite(path, data + b"\n")  # complete last record lacking its newline
    return torn


def _rewrite(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def has_results(run_dir: Path) -> bool:
    return (Path(run_dir) / PARQUET_NAME).is_file() or (Path(run_dir) / RESULTS_NAME).is_file()


def results_file(run_dir: Path) -> Path:
    """results.parquet when the run was compacted, else the journal (which may not exist)."""
    parquet = Path(run_dir) / PARQUET_NAME
    return parquet if parquet.is_file() else Path(run_dir) / RESULTS_NAME


def read_run(run_dir: Path) -> tuple[list[dict], str]:
    """Every record of a run directory in the order written, plus the journal's torn
    tail ("" if none; a compacted run has none)."""
    path = results_file(run_dir)
    if path.name == PARQUET_NAME:
        from . import columnar  # pyarrow only when a compacted run is read
        return columnar.read(path), ""
    return read_records(path)


def compact(run_dir: Path) -> tuple[int, int]:
    """Store a finished run's journal as results.parquet, check that it reads back as the
    same records, then remove the journal. Returns (journal bytes, parquet bytes). A torn
    last line means the run did not finish cleanly: refused, nothing changes."""
    from . import columnar
    run_dir = Path(run_dir)
    journal, parquet = run_dir / RESULTS_NAME, run_dir / PARQUET_NAME
    if not journal.is_file():
        if parquet.is_file():
            return 0, parquet.stat().st_size  # compacted before
        raise FileNotFoundError(f"{run_dir}: no {RESULTS_NAME} to compact")
    records, torn = read_records(journal)
    if torn:
        raise ValueError(f"{journal}: torn last line {torn[:60]!r}; repair it (./testbed run ... --resume "
                         "cuts it off) before compacting")
    if not records:
        raise ValueError(f"{journal}: holds no records; nothing to compact")
    columnar.write(records, parquet, journal.stat().st_size)
    if [json.dumps(r) for r in columnar.read(parquet)] != [json.dumps(r) for r in records]:
        parquet.unlink()
        raise ValueError(f"{parquet}: does not read back as {journal}; kept the journal")
    size = journal.stat().st_size
    with open(parquet, "rb") as f:
        os.fsync(f.fileno())
    journal.unlink()
    return size, parquet.stat().st_size


# A journal smaller than this stays JSONL when its run finishes: Parquet's per-column
# metadata (~20-40 KB) outweighs the saving, and writing it costs the sweep a pyarrow
# and pandas import (~1-2 s). Measured: a 61 KB journal -> 42 KB, 14.3 MB -> 1.0 MB.
COMPACT_MIN_BYTES = 256 * 1024


def compact_finished(run_dir: Path) -> bool:
    """Compact a run that just finished, if its journal is worth it; True if it was."""
    journal = Path(run_dir) / RESULTS_NAME
    if not journal.is_file() or journal.stat().st_size < COMPACT_MIN_BYTES:
        return False
    compact(run_dir)
    return True


def reopen(run_dir: Path) -> bool:
    """Turn a compacted run back into a live one (its records as results.jsonl again),
    so a resumed run appends to a journal; True if it was compacted."""
    from . import columnar
    parquet = Path(run_dir) / PARQUET_NAME
    if not parquet.is_file():
        return False
    journal = Path(run_dir) / RESULTS_NAME
    if journal.is_file():
        raise ValueError(f"{run_dir}: holds both {PARQUET_NAME} and {RESULTS_NAME}; "
                         f"`./testbed store compact {run_dir}` settles which is current")
    _rewrite(journal, "".join(json.dumps(r) + "\n" for r in columnar.read(parquet)).encode())
    parquet.unlink()
    return True


class ResultStore:
    def __init__(self, run_dir: Path):
        if (run_dir / PARQUET_NAME).is_file():  # appending behind the parquet's back loses records
            raise ValueError(f"{run_dir}: compacted ({PARQUET_NAME}); reopen it (store.reopen) first")
        self.path = run_dir / RESULTS_NAME
        self._f = open(self.path, "a", encoding="utf-8")

    def append(self, record: dict) -> None:
        self._f.write(json.dumps(record, sort_keys=False) + "\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def done_keys(records: list[dict]) -> set[tuple[str, int]]:
    return {(r["cell_id"], r["repetition"]) for r in records}


def append_line(path: Path, obj: dict) -> None:
    """Append one JSON line to a side file (calibration, work), fsynced; a torn last
    line left by a kill is closed off first so it cannot swallow this one."""
    torn = path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n")
    with open(path, "a", encoding="utf-8") as f:
        f.write(("\n" if torn else "") + json.dumps(obj) + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_lines(path: Path) -> list[dict]:
    """Every complete JSON line of a side file (parse_lines, not strict): a torn or
    broken line is skipped (the work it described is simply done again). Its packed
    lines (<name>.gz, pack_side_files) come first, then the plain file's."""
    data = _packed_bytes(path) + (path.read_bytes() if path.exists() else b"")
    return parse_lines(data, path, strict=False)[0] if data else []


def packed_path(path: Path) -> Path:
    return path.with_name(path.name + PACK_SUFFIX)


def _packed_bytes(path: Path) -> bytes:
    packed = packed_path(path)
    return gzip.decompress(packed.read_bytes()) if packed.is_file() else b""


def write_packed(packed: Path, data: bytes) -> None:
    """`data` gzipped into `packed` through a .tmp file: no timestamp in the header (the
    same lines give the same bytes), read back and compared, fsynced, then renamed, so
    a failure leaves what was there before. The header names the plain file (gzip
    takes the name given, less .gz; left to itself it would name the .tmp file)."""
    tmp = packed.with_name(packed.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(packed.name, mode="wb", fileobj=raw, mtime=0) as sink:
        sink.write(data)
    if gzip.decompress(tmp.read_bytes()) != data:
        tmp.unlink()
        raise ValueError(f"{packed}: does not read back as the lines written into it; nothing replaced")
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, packed)


def pack_side_files(run_dir: Path) -> tuple[int, int]:
    """Gzip a finished run's PACKED_SIDE_FILES into <name>.gz (lines packed before come
    first), check the packed file reads back as the same bytes, then remove the plain
    one. Deterministic output (no timestamp), so a re-pack changes no committed byte.
    Returns (plain bytes removed, packed bytes now)."""
    removed = packed_now = 0
    for name in PACKED_SIDE_FILES:
        plain = Path(run_dir) / name
        if not plain.is_file():
            continue
        data = _packed_bytes(plain) + plain.read_bytes()
        if data and not data.endswith(b"\n"):
            data += b"\n"  # a complete last line lacking its newline (parse_lines keeps it)
        packed = packed_path(plain)
        write_packed(packed, data)
        removed += plain.stat().st_size
        plain.unlink()
        packed_now += packed.stat().st_size
    return removed, packed_now


def write_json_atomic(path: Path, obj: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
