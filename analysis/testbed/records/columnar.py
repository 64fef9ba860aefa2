"""results.parquet: a finished run's cell records as typed, zstd-compressed columns
(docs/data-formats.md §4). The JSONL journal (store.py) is what a live run appends
to, one fsynced line per cell; once the run is over the same records are stored here,
about 20x smaller, and read back as the very same dicts (same keys, key order, types
and nulls), so every reader of a run sees no difference.

Layout: each leaf of a record's nested objects is a column named by its dotted path
("result.throughput.msgs_per_sec"), typed bool/int64/float64/string when every record
agrees on its type; a list, or a leaf whose type varies between records, is a string
column holding its JSON text (named in the file's metadata). Which keys a record has,
in which order, is its shape: the distinct shapes are stored once in the metadata and
each row names its own in the SHAPE_COLUMN, so an absent key and a JSON null differ.
DuckDB or pandas read the columns directly.
"""
from __future__ import annotations

import json
from pathlib import Path

FORMAT = "testbed.results-parquet/1"  # bump with a reader for the old layout
META_FORMAT, META_SHAPES, META_JSON = b"testbed.format", b"testbed.shapes", b"testbed.json_columns"
META_NUMBER = b"testbed.number_columns"
META_SOURCE = b"testbed.journal_bytes"  # the JSONL it replaced, for the store's size figures
SHAPE_COLUMN = "__shape__"
SEP = "."
INT64 = (-(2 ** 63), 2 ** 63 - 1)
FLOAT_EXACT = 2 ** 53  # every int up to this survives a trip through float64
INT_MARK = "#int"  # a number column's companion: true where the record held an int
ZSTD_LEVEL = 9  # measured on a scorecard run: 14.3 MB JSONL -> see docs; higher levels gain little


class ColumnarError(ValueError):
    pass


def _flatten(obj: dict, prefix: str, columns: dict[str, list], row: int, n: int) -> dict:
    """The record's shape (key -> column name, or a nested shape), filling `columns`."""
    shape = {}
    for key, value in obj.items():
        name = prefix + key
        if not prefix and SEP in key:
            raise ColumnarError(f"a record has the key {key!r}: top-level keys may not contain {SEP!r}")
        if isinstance(value, dict) and not any(SEP in k for k in value):
            shape[key] = _flatten(value, name + SEP, columns, row, n)
            continue
        if name == SHAPE_COLUMN:
            raise ColumnarError(f"a record has the key {SHAPE_COLUMN!r}, reserved for the row's shape")
        if name not in columns:
            columns[name] = [_ABSENT] * n
        columns[name][row] = value
        shape[key] = name
    return shape


class _Absent:
    pass


_ABSENT = _Absent()


def _kind(values: list) -> str:
    """bool, int, float or str when every present, non-null value has that type; number
    when ints and floats mix (a JSON writer prints 3.0 as 3 only sometimes); else json."""
    kinds = {type(v) for v in values if v is not None and v is not _ABSENT}
    if kinds == {int, float}:
        exact = all(abs(v) <= FLOAT_EXACT for v in values if type(v) is int)
        return "number" if exact else "json"
    if len(kinds) != 1:
        return "json" if kinds else "str"
    kind = kinds.pop()
    if kind is int and not all(INT64[0] <= v <= INT64[1] for v in values if isinstance(v, int)):
        return "json"
    return {bool: "bool", int: "int", float: "float", str: "str"}.get(kind, "json")


def write(records: list[dict], path: Path, journal_bytes: int | None = None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(records)
    columns: dict[str, list] = {}
    shapes: dict[str, int] = {}
    shape_ids = []
    for row, record in enumerate(records):
        if not isinstance(record, dict):
            raise ColumnarError(f"record {row + 1} is a {type(record).__name__}, not a JSON object")
        text = json.dumps(_flatten(record, "", columns, row, n))
        shape_ids.append(shapes.setdefault(text, len(shapes)))
    arrays, json_columns, number_columns = {SHAPE_COLUMN: pa.array(shape_ids, pa.int32())}, [], []
    types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string()}
    for name, values in columns.items():
        kind = _kind(values)
        if kind == "number" and name + INT_MARK in columns:
            kind = "json"  # the companion's name is taken by a real key: keep the JSON text
        if kind == "number":
            number_columns.append(name)
            arrays[name] = pa.array([None if v is _ABSENT or v is None else float(v) for v in values],
                                    pa.float64())
            arrays[name + INT_MARK] = pa.array([type(v) is int for v in values], pa.bool_())
        elif kind == "json":
            json_columns.append(name)
            values = [None if v is _ABSENT else json.dumps(v) for v in values]
            arrays[name] = pa.array(values, pa.string())
        else:
            arrays[name] = pa.array([None if v is _ABSENT else v for v in values], types[kind])
    table = pa.table(arrays)
    meta = {META_FORMAT: FORMAT.encode(), META_SHAPES: json.dumps(list(shapes)).encode(),
            META_JSON: json.dumps(json_columns).encode(), META_NUMBER: json.dumps(number_columns).encode()}
    if journal_bytes is not None:
        meta[META_SOURCE] = str(journal_bytes).encode()
    table = table.replace_schema_metadata(meta)
    tmp = Path(path).with_suffix(".parquet.tmp")
    pq.write_table(table, tmp, compression="zstd", compression_level=ZSTD_LEVEL)
    tmp.replace(path)


def read(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        table = pq.ParquetFile(path).read()  # not pq.read_table: it imports pandas via pyarrow.dataset
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise ColumnarError(f"{path}: not a readable Parquet file ({exc})") from None
    meta = table.schema.metadata or {}
    found = meta.get(META_FORMAT, b"").decode()
    if found != FORMAT:
        raise ColumnarError(f"{path}: format {found or 'missing'!r}, this reader knows {FORMAT!r}")
    shapes = [json.loads(s) for s in json.loads(meta[META_SHAPES])]
    json_columns = set(json.loads(meta[META_JSON]))
    number_columns = json.loads(meta[META_NUMBER])
    columns = {}
    for name in table.column_names:
        values = table.column(name).to_pylist()
        if name in json_columns:
            values = [None if v is None else json.loads(v) for v in values]
        columns[name] = values
    for name in number_columns:
        columns[name] = [int(v) if was_int else v
                         for v, was_int in zip(columns[name], columns.pop(name + INT_MARK), strict=True)]
    return [_build(shapes[s], columns, row) for row, s in enumerate(columns.pop(SHAPE_COLUMN))]


def _build(shape: dict, columns: dict[str, list], row: int) -> dict:
    return {key: _build(sub, columns, row) if isinstance(sub, dict) else columns[sub][row]
            for key, sub in shape.items()}


def journal_bytes(path: Path) -> int | None:
    """The size of the JSONL this file replaced, if compaction recorded it."""
    import pyarrow.parquet as pq
    value = (pq.ParquetFile(Path(path)).schema_arrow.metadata or {}).get(META_SOURCE)
    return int(value) if value else None
