"""A library above its ceiling is flagged, never silent: in the ceiling study (round by
round against the probe) and in a run's report (results.ceiling.broken, which reads the
probe's ceiling.json beside the cells). Small hand-made values, no binaries."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from testbed.bench.study import against_probe
from testbed.records.run_dir import RunDir
from testbed.results import ceiling as ceil


def test_study_counts_the_rounds_a_library_beat_the_probe():
    bound = against_probe([90.0, 120.0, 80.0], [100.0, 100.0, 100.0])
    assert bound["rounds_above_probe"] == 1
    assert bound["ratios_per_round"] == pytest.approx([0.9, 1.2, 0.8])
    assert bound["ratio_per_round_summary"]["max"] == pytest.approx(1.2)
    assert bound["below_every_probe_run"] is False
    assert against_probe([50.0, 60.0], [100.0, 90.0])["rounds_above_probe"] == 0


def test_study_refuses_unpaired_rounds():
    with pytest.raises(ValueError, match="one library and one probe value per round"):
        against_probe([1.0, 2.0], [1.0])


def _probe_file(tmp_path, bytes_per_sec: float) -> dict:
    row = {"transport": "tcp", "msg_size": 262144, "throughput": {"bytes_per_sec": bytes_per_sec},
           "latency": None}
    (tmp_path / "ceiling.json").write_text(json.dumps({"schema": "testbed.ceiling/2",
                                                       "process_model": "two-process", "rows": [row]}))
    return ceil.table(RunDir.at(tmp_path).host_ceiling())


def _comparison(ref_msgs: float, cand_msgs: float) -> pd.DataFrame:
    return pd.DataFrame([{"pattern": "PAIR", "transport": "tcp", "msg_size": 262144, "config": "default",
                          "placement": "split", "process_model": "two-process", "link": "loopback",
                          "metric": "throughput_msgs", "reference": "libzmq-4.3.5", "ref_median": ref_msgs,
                          "library": "zlink", "cand_median": cand_msgs}])


def test_report_flags_a_cell_above_its_ceiling(tmp_path):
    ceiling = _probe_file(tmp_path, 262144 * 1000.0)  # the probe: 1000 msgs/s of 256 KiB
    found = ceil.broken(ceiling, _comparison(800.0, 1100.0))
    assert [(f["library"], round(f["share"], 2)) for f in found] == [("zlink", 1.1)]
    assert ceil.broken(ceiling, _comparison(800.0, 990.0)) == []


def test_a_probe_of_another_process_model_bounds_nothing(tmp_path):
    ceiling = _probe_file(tmp_path, 262144 * 1000.0)
    cells = _comparison(800.0, 1100.0).assign(process_model="one-process")
    assert ceil.broken(ceiling, cells) == []
