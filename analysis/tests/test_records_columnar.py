"""The results store: results.parquet holds a run's records exactly (keys, key order,
types, absent keys and nulls), a real published run loads identically from either
file, and compaction refuses what it cannot keep."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from testbed import paths
from testbed.records import columnar, store
from testbed.records.run_dir import RunDir
from testbed.results import load

# Each record differs from the others in a way a naive columnar store would lose.
RECORDS = [
    {"schema": "testbed.cell/1", "cell_id": "a", "repetition": 0, "ok": True, "value": 3,
     "result": {"p50": 3.5, "count": 10, "threads": [{"tid": 1}], "env": {}}, "note": None},
    {"cell_id": "b", "schema": "testbed.cell/1", "repetition": 1, "ok": False, "value": 3.0,
     "result": {"p50": 4, "count": 11, "threads": [], "env": {"X": "1"}}},  # p50 an int here
    {"schema": "testbed.cell/1", "cell_id": "c", "repetition": 2, "value": 2 ** 70,
     "result": "failed before running", "odd": {"a.b": 1}, "text": "ünïcode"},
]


def _dumps(records: list[dict]) -> list[str]:
    return [json.dumps(r) for r in records]


def test_records_come_back_exactly(tmp_path):
    path = tmp_path / store.PARQUET_NAME
    columnar.write(RECORDS, path, journal_bytes=123)
    back = columnar.read(path)
    assert _dumps(back) == _dumps(RECORDS)  # key order, int vs float, null vs absent, {}
    assert type(back[1]["result"]["p50"]) is int and type(back[0]["result"]["p50"]) is float
    assert "note" in back[0] and "note" not in back[1]
    assert columnar.journal_bytes(path) == 123


def test_columns_are_typed_for_other_readers(tmp_path):
    path = tmp_path / store.PARQUET_NAME
    columnar.write(RECORDS, path)
    schema = pq.read_schema(path)
    types = {name: str(schema.field(name).type) for name in schema.names}
    assert types["repetition"] == "int64" and types["ok"] == "bool" and types["cell_id"] == "string"
    assert types["result.p50"] == "double"  # ints and floats mixed: a number column
    assert types["value"] == "string"  # 2**70 does not fit int64 or float64 exactly: JSON text
    assert schema.metadata[columnar.META_FORMAT] == columnar.FORMAT.encode()
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"


def test_unknown_format_and_damaged_file_are_named(tmp_path):
    bad = tmp_path / "results.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(columnar.ColumnarError, match="results.parquet: not a readable Parquet file"):
        columnar.read(bad)
    pq.write_table(pq.read_table(_written(tmp_path)).replace_schema_metadata({}), bad)
    with pytest.raises(columnar.ColumnarError, match="format 'missing'"):
        columnar.read(bad)


def _written(tmp_path: Path) -> Path:
    path = tmp_path / "good.parquet"
    columnar.write(RECORDS, path)
    return path


def _journal(run_dir: Path, records: list[dict], tail: str = "") -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / store.RESULTS_NAME
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


def test_compact_replaces_the_journal_and_reopen_restores_it(tmp_path):
    journal = _journal(tmp_path / "run", RECORDS)
    text = journal.read_text()
    was, now = store.compact(journal.parent)
    assert was == len(text.encode()) and not journal.exists() and now > 0
    assert _dumps(store.read_run(journal.parent)[0]) == _dumps(RECORDS)
    with pytest.raises(ValueError, match="compacted"):
        store.ResultStore(journal.parent)  # a journal behind the parquet's back would be ignored
    assert store.reopen(journal.parent)
    assert journal.read_text() == text and not (journal.parent / store.PARQUET_NAME).exists()


def test_a_finished_run_is_compacted_only_when_parquet_saves_space(tmp_path, monkeypatch):
    journal = _journal(tmp_path / "run", RECORDS)
    assert not store.compact_finished(journal.parent) and journal.exists()  # a few hundred bytes
    monkeypatch.setattr(store, "COMPACT_MIN_BYTES", journal.stat().st_size)
    assert store.compact_finished(journal.parent) and not journal.exists()


def test_compact_refuses_a_torn_journal(tmp_path):
    journal = _journal(tmp_path / "run", RECORDS[:1], tail='{"cell_id": "to')
    with pytest.raises(ValueError, match="torn last line"):
        store.compact(journal.parent)
    assert journal.exists() and not (journal.parent / store.PARQUET_NAME).exists()


# A small published run: the test turns a copy into both forms, so it holds whichever
# form the repository keeps the run in.
REAL_RUN = paths.REPORTS_DIR / "io-threads" / "20261122T083807Z-df79"


@pytest.mark.skipif(not (REAL_RUN / store.MANIFEST_NAME).is_file(), reason=f"{REAL_RUN} not here")
def test_a_published_run_loads_the_same_from_jsonl_and_parquet(tmp_path):
    run = tmp_path / REAL_RUN.name
    shutil.copytree(REAL_RUN, run)
    store.reopen(run)
    from_jsonl, cells = load.load_run(run), RunDir.at(run).cells()
    store.compact(run)
    assert not (run / store.RESULTS_NAME).exists()
    pd.testing.assert_frame_equal(load.load_run(run), from_jsonl, check_exact=True)
    assert RunDir.at(run).cells() == cells
