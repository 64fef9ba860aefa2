"""`./testbed store compact --budget-mb`: which runs a session converts, so that the
JSONL it deletes stays within the budget and the newest runs go last."""
from __future__ import annotations

import argparse
import json

from testbed.commands import store_cmd
from testbed.records import store


def _run(root, experiment, run_id, mb):
    run = root / experiment / run_id
    run.mkdir(parents=True)
    (run / store.MANIFEST_NAME).write_text("{}\n")
    line = json.dumps({"schema": "testbed.cell/1", "cell_id": run_id, "repetition": 0, "pad": ""})
    line = line.replace('""', '"' + "x" * (999 - len(line)) + '"')  # 1000 bytes with its newline
    (run / store.RESULTS_NAME).write_text((line + "\n") * int(mb * 1000))
    return run


def test_pick_takes_superseded_runs_oldest_first_within_the_budget(tmp_path):
    old_a = _run(tmp_path, "a", "20261101T000000Z-0001", 2)
    old_b = _run(tmp_path, "b", "20261102T000000Z-0002", 2)
    _run(tmp_path, "a", "20261103T000000Z-0003", 1)  # a's current run
    _run(tmp_path, "b", "20261104T000000Z-0004", 1)  # b's current run
    assert store_cmd.pick([tmp_path], 4.5e6) == [old_a, old_b]  # both current runs wait
    assert store_cmd.pick([tmp_path], 3e6) == [old_a]  # the next does not fit: stop there
    assert store_cmd.pick([tmp_path], 7e6)[-1].name == "20261104T000000Z-0004"


def test_compact_with_budget_converts_and_status_reports_sizes(tmp_path, capsys):
    old = _run(tmp_path, "a", "20261101T000000Z-0001", 1)
    _run(tmp_path, "a", "20261103T000000Z-0003", 1)
    args = argparse.Namespace(action="compact", runs=[tmp_path], budget_mb=1.5)
    assert store_cmd.main(args) == 0
    assert (old / store.PARQUET_NAME).is_file() and not (old / store.RESULTS_NAME).exists()
    assert store_cmd.main(argparse.Namespace(action="status", root=tmp_path)) == 0
    out = capsys.readouterr().out
    assert "(was 1.00 MB JSONL)" in out and "compacted so far: 1.0 MB JSONL" in out


def test_compact_names_a_directory_that_is_not_a_run(tmp_path, capsys):
    args = argparse.Namespace(action="compact", runs=[tmp_path], budget_mb=None)
    assert store_cmd.main(args) == 2
    assert "not a run directory" in capsys.readouterr().err


def _speed_line(n):
    return {"group": f"g{n}", "repetition": n, "ms": 100 + n}


def test_compact_gzips_the_side_files_and_readers_see_the_same_lines(tmp_path, capsys):
    run = _run(tmp_path, "a", "20261101T000000Z-0001", 0.3)
    for n in range(200):
        store.append_line(run / store.SPEED_NAME, _speed_line(n))
    store.append_line(run / store.WORK_NAME, {"cell_id": "c", "status": "ok"})
    before = store.read_lines(run / store.SPEED_NAME)
    args = argparse.Namespace(action="compact", runs=[run], budget_mb=None)
    assert store_cmd.main(args) == 0
    assert "side files" in capsys.readouterr().out
    packed = run / (store.SPEED_NAME + store.PACK_SUFFIX)
    assert packed.is_file() and not (run / store.SPEED_NAME).exists()
    assert packed.stat().st_size < len("".join(json.dumps(x) + "\n" for x in before))
    assert store.read_lines(run / store.SPEED_NAME) == before
    assert store.read_lines(run / store.WORK_NAME) == [{"cell_id": "c", "status": "ok"}]
    first = packed.read_bytes()
    assert b"speed.jsonl\0" in first[:32]  # the gzip header names the plain file, not a .tmp
    assert store_cmd.main(args) == 0 and packed.read_bytes() == first  # nothing plain: unchanged


def test_lines_appended_after_packing_come_after_the_packed_ones(tmp_path):
    """A compacted run that is resumed appends to the plain file beside its .gz."""
    for n in range(3):
        store.append_line(tmp_path / store.SPEED_NAME, _speed_line(n))
    store.pack_side_files(tmp_path)
    store.append_line(tmp_path / store.SPEED_NAME, _speed_line(3))
    assert [x["repetition"] for x in store.read_lines(tmp_path / store.SPEED_NAME)] == [0, 1, 2, 3]
    store.pack_side_files(tmp_path)  # packing again folds them into one packed file, in order
    assert not (tmp_path / store.SPEED_NAME).exists()
    assert [x["repetition"] for x in store.read_lines(tmp_path / store.SPEED_NAME)] == [0, 1, 2, 3]


def test_a_torn_last_line_stays_skipped_once_packed(tmp_path):
    (tmp_path / store.SPEED_NAME).write_text(json.dumps(_speed_line(0)) + "\n" + '{"group": "g1", "rep')
    store.pack_side_files(tmp_path)
    assert store.read_lines(tmp_path / store.SPEED_NAME) == [_speed_line(0)]
