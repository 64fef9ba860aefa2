"""records/fault_run_dir.py: a fault run's journals follow store.parse_lines' rule for
a torn line, its manifest is replaced whole, publishing gzips the journals (and a
published run reads back the same records), a directory without a manifest is named."""
from __future__ import annotations

import json

import pytest

from testbed.records.fault_run_dir import FaultRunDir, FaultRunError, published_under, runs_under


def test_a_torn_last_line_is_no_record_and_the_next_append_closes_it_off(tmp_path):
    run = FaultRunDir.at(tmp_path)
    run.append({"key": "a", "repetition": 0})
    with open(tmp_path / "cells.jsonl", "a") as f:
        f.write('{"key": "b", "repe')  # killed mid-write
    assert run.records() == [{"key": "a", "repetition": 0}]
    run.append({"key": "b", "repetition": 0})  # the resumed run redoes b
    assert run.records() == [{"key": "a", "repetition": 0}, {"key": "b", "repetition": 0}]


def test_the_manifest_is_replaced_whole_and_a_missing_one_is_named(tmp_path):
    with pytest.raises(FaultRunError, match="no faults-run.json"):
        FaultRunDir.open(tmp_path)
    run = FaultRunDir.at(tmp_path)
    run.write_manifest({"status": "running"})
    run.write_manifest({"status": "complete"})
    assert FaultRunDir.open(tmp_path).manifest() == {"status": "complete"}
    assert [p.name for p in tmp_path.iterdir()] == ["faults-run.json"]  # no .tmp left behind
    (tmp_path / "faults-run.json").write_text("{not json")
    with pytest.raises(FaultRunError, match="faults-run.json: not valid JSON"):
        run.manifest()


def test_publishing_gzips_the_journals_and_the_published_run_reads_the_same(tmp_path):
    run = FaultRunDir.at(tmp_path / "results" / "faults" / "r1")
    run.path.mkdir(parents=True)
    run.write_manifest({"status": "complete"})
    for n in range(3):
        run.append({"key": f"k{n}"})
    with run.rewrite("samples") as samples:
        samples.add({"t_s": 1.0})
    run.report_path().write_text("# report\n")
    (run.cell_logs("k0")).mkdir(parents=True)  # raw logs stay behind
    first = run.publish(tmp_path / "reports" / "faults" / "r1")
    names = sorted(p.name for p in first.path.iterdir())
    assert names == ["cells.jsonl.gz", "faults-run.json", "report.md", "samples.jsonl.gz"]
    assert first.records() == run.records() and first.records("samples") == [{"t_s": 1.0}]
    again = run.publish(tmp_path / "again")
    assert (again.path / "cells.jsonl.gz").read_bytes() == (first.path / "cells.jsonl.gz").read_bytes()
    assert [r.name for r in published_under(tmp_path / "reports", "faults")] == ["r1"]
    assert [r.name for r in runs_under(tmp_path / "results" / "faults")] == ["r1"]
    (run.path / "report.md").unlink()
    (first.path / "report.md").unlink()
    assert published_under(tmp_path / "reports", "faults") == []


def test_a_run_without_journals_has_no_records(tmp_path):
    assert FaultRunDir.at(tmp_path).records() == []
    (tmp_path / "cells.jsonl").write_text(json.dumps({"key": "a"}))  # complete, lacking its newline
    assert FaultRunDir.at(tmp_path).records() == [{"key": "a"}]
