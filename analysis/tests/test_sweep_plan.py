"""Cell expansion, interleaving, sharding, perf parsing and the result store."""
from __future__ import annotations

import json
from pathlib import Path

from test_sweep_support import EXPERIMENT, fill
from testbed.records import store
from testbed.sweep import config, perf, plan

NAMES = ["libzmq-4.3.5", "zlink"]


def load(tmp_path: Path, text: str = EXPERIMENT) -> config.Experiment:
    p = tmp_path / "experiment.toml"
    p.write_text(fill(text))
    return config.load(p, "default", NAMES)


def test_expand_crosses_axes_and_zips_groups(tmp_path):
    exp = load(tmp_path)
    cells = plan.expand(exp)
    # 2 patterns x 2 sizes x 2 zipped configs x 2 libraries (zip: not 4 configs)
    assert len(cells) == 16
    assert {c.config for c in cells} == {"baseline", "16 KiB"}
    assert len({c.cell_id for c in cells}) == 16
    # ids are stable: same experiment, same ids
    assert [c.cell_id for c in plan.expand(load(tmp_path))] == [c.cell_id for c in cells]


def test_exclusion(tmp_path):
    text = EXPERIMENT.replace("[run]", '[[sweep.exclude]]\npattern = "PUBSUB"\nmsg_size = 1024\n\n[run]')
    cells = plan.expand(load(tmp_path, text))
    assert len(cells) == 12
    assert not any(c.pattern == "PUBSUB" and c.msg_size == 1024 for c in cells)


def test_order_interleaves_libraries_and_alternates_who_goes_first(tmp_path):
    exp = load(tmp_path)
    pairs = plan.order(plan.expand(exp), 2, seed=7)
    assert len(pairs) == 32
    for i in range(0, 32, 2):  # consecutive runs are the two libraries of one configuration
        (a, ra), (b, rb) = pairs[i], pairs[i + 1]
        assert a.group == b.group and ra == rb and a.library != b.library
    first = {rep: {p[0].library for p in pairs[i::2] if p[1] == rep} for rep, i in ((0, 0), (1, 16))}
    assert first[0] == {"libzmq-4.3.5"} and first[1] == {"zlink"}
    assert pairs == plan.order(plan.expand(exp), 2, seed=7)           # seeded: reproducible
    assert pairs != plan.order(plan.expand(exp), 2, seed=8)           # and actually shuffled


def test_shards_partition_the_cells_by_configuration(tmp_path):
    cells = plan.expand(load(tmp_path))
    parts = [plan.shard(cells, i, 3) for i in (1, 2, 3)]
    ids = [c.cell_id for part in parts for c in part]
    assert sorted(ids) == sorted(c.cell_id for c in cells)
    for part in parts:
        groups = {c.group for c in part}
        assert all(sum(1 for c in part if c.group == g) == 2 for g in groups)


def test_parse_shard_rejects_nonsense():
    assert plan.parse_shard("2/4") == (2, 4)
    for bad in ("0/2", "3/2", "a/b", "1"):
        try:
            plan.parse_shard(bad)
        except ValueError as exc:
            assert "--shard" in str(exc)
        else:
            raise AssertionError(bad)


def test_perf_stat_csv_parsing():
    text = ("# started on Sun\n\n"
            "1.64,msec,task-clock,1640853,100.00,0.016,CPUs utilized\n"
            "2,,context-switches,1640853,100.00,1.219,K/sec\n"
            "<not supported>,,cycles,0,100.00,,\n"
            "12,,instructions:u,100,100.00,,\n")
    ev = perf.parse_stat(text)
    assert ev["task-clock"] == {"value": 1.64, "unit": "msec"}
    assert ev["context-switches"]["value"] == 2.0
    assert ev["cycles"]["value"] is None and ev["cycles"]["status"] == "<not supported>"
    assert ev["instructions"]["value"] == 12.0


def test_perf_detect_missing_binary_is_not_fatal():
    setup = perf.detect(("task-clock",), ("cycles",), perf="no-such-perf-binary")
    assert not setup.available and "not found" in setup.reason
    assert setup.unsupported == ["task-clock", "cycles"]


def test_store_tolerates_and_repairs_a_torn_last_line(tmp_path):
    with store.ResultStore(tmp_path) as s:
        s.append({"cell_id": "a", "repetition": 0})
        s.append({"cell_id": "b", "repetition": 0})
    with open(tmp_path / store.RESULTS_NAME, "a") as f:
        f.write('{"cell_id": "c", "repet')
    records, torn = store.read_records(tmp_path / store.RESULTS_NAME)
    assert [r["cell_id"] for r in records] == ["a", "b"] and torn.startswith('{"cell_id": "c"')
    assert store.repair(tmp_path / store.RESULTS_NAME)
    assert (tmp_path / store.TORN_NAME).read_text().startswith('{"cell_id": "c"')
    text = (tmp_path / store.RESULTS_NAME).read_text()
    assert text.endswith("}\n") and len(text.splitlines()) == 2
    assert all(json.loads(line) for line in text.splitlines())


def test_order_without_interleaving_is_library_major(tmp_path):
    pairs = plan.order(plan.expand(load(tmp_path)), 1, seed=1, interleave=False)
    libs = [c.library for c, _ in pairs]
    assert libs == ["libzmq-4.3.5"] * 8 + ["zlink"] * 8
