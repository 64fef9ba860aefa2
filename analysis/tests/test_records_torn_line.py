"""One rule for a torn last line (issue 43, item 4): a writer killed mid-line leaves a
last line that is not JSON. Every path that reads a run directory's JSONL files (the
results journal through RunDir, the tidy loader, the sweep's resume and merge; the
side files: work, speed, ceiling, calibration, slices) leaves it out and keeps every
complete record, with or without a newline after the torn line. Before, the tidy
loader and the journal reader disagreed on a torn line followed by a newline (one
skipped it, the other raised)."""
from __future__ import annotations

import json

import pytest

from fixtures.factory import make_run
from testbed.records import run_writer, store
from testbed.records.run_dir import RunDir, RunDirError
from testbed.results import load

TORN = '{"cell_id": "PAIR|tcp|64|zl'


def _journal(run_dir):
    return run_dir / store.RESULTS_NAME


@pytest.fixture(params=["no newline", "newline"])
def torn_run(request, tmp_path):
    """A fixture run on JSONL whose journal ends in a torn line (then a newline or not)."""
    run_dir = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64, 1024), reps=4,
                       ceiling=False)
    journal = _journal(run_dir)
    complete = [json.loads(x) for x in journal.read_text().splitlines()]
    journal.write_text(journal.read_text() + TORN + ("\n" if request.param == "newline" else ""))
    return run_dir, complete


def _readers(run_dir):
    """Every way the code base reads a run's records: name -> the records it returns."""
    return {
        "RunDir.raw_records": RunDir.open(run_dir).raw_records()[0],
        "RunDir.cells": RunDir.open(run_dir).cells(warn=False),
        "store.read_records": store.read_records(_journal(run_dir))[0],
        "store.read_run": store.read_run(run_dir)[0],
        "run_writer.records (sweep resume)": run_writer.records(run_dir)[0],
        "run_writer.any_records (merge, estimate)": run_writer.any_records(run_dir)[0],
    }


def test_every_reader_leaves_out_a_torn_last_line_and_keeps_the_rest(torn_run):
    run_dir, complete = torn_run
    key = [(r["cell_id"], r["repetition"]) for r in complete]
    for name, records in _readers(run_dir).items():
        assert [(r["cell_id"], r["repetition"]) for r in records] == key, name
    assert RunDir.open(run_dir).raw_records()[1] == TORN
    assert len(load.load_run(run_dir)) > 0


def test_repair_cuts_the_torn_line_whatever_follows_it(torn_run):
    run_dir, complete = torn_run
    assert store.repair(_journal(run_dir)) == TORN
    assert [json.loads(x) for x in _journal(run_dir).read_text().splitlines()] == complete
    assert (run_dir / store.TORN_NAME).read_text() == TORN + "\n"


def test_a_bad_line_before_the_last_is_corruption_for_every_journal_reader(tmp_path):
    run_dir = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64,), reps=4, ceiling=False)
    lines = _journal(run_dir).read_text().splitlines()
    _journal(run_dir).write_text("\n".join([lines[0], TORN, *lines[1:]]) + "\n")
    for read in (lambda: RunDir.open(run_dir).cells(),
                 lambda: run_writer.records(run_dir), lambda: store.read_run(run_dir)):
        with pytest.raises((RunDirError, store.CorruptLine), match=":2: not valid JSON"):
            read()


@pytest.mark.parametrize("kind", sorted(run_writer.SIDE_FILES))
@pytest.mark.parametrize("ending", ["", "\n"])
def test_side_files_leave_out_a_torn_last_line_the_same_way(tmp_path, kind, ending):
    lines = [{"cell_id": "a", "status": "ok", "block": "b", "repetition": 0},
             {"cell_id": "b", "status": "ok", "block": "b", "repetition": 1}]
    path = tmp_path / run_writer.side_file_name(kind)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + TORN + ending)
    assert run_writer.lines(tmp_path, kind) == lines
    run_writer.append(tmp_path, kind, {"cell_id": "c", "status": "ok"})  # closes the torn line off first
    assert run_writer.lines(tmp_path, kind) == [*lines, {"cell_id": "c", "status": "ok"}]


def test_the_report_side_readers_see_the_same_lines_as_the_sweep(tmp_path):
    """work.jsonl as the report reads it (RunDir.work) and as the sweep resumes it."""
    ok = {"cell_id": "a", "status": "ok", "instructions_per_msg": 10.0}
    path = tmp_path / run_writer.side_file_name("work")
    path.write_text(json.dumps(ok) + "\n" + TORN)
    assert RunDir.at(tmp_path).work() == {"a": ok}
    assert run_writer.lines(tmp_path, "work") == [ok]
