"""Run directory -> tidy table; tidy tables on disk, with schema migration."""

import numpy as np
import pytest

from fixtures.factory import group_id, make_run
from testbed.records import schema
from testbed.records.run_dir import RunDir
from testbed.results import load


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return make_run(
        tmp_path_factory.mktemp("runs"), patterns=("PAIR",), transports=("tcp",), sizes=(64, 65536)
    )


def test_one_row_per_repetition_and_metric(run):
    df = load.load_run(run)
    assert list(df.columns) == schema.columns(df)
    ok = df[df["status"] == "ok"]
    per_cell = ok.groupby(["cell_id", "repetition"])["metric"].nunique()
    assert set(per_cell) == {10}  # 3 throughput + 6 latency (p50..max, mean) + perf task-clock
    assert {"throughput_msgs", "lat_p50_us", "lat_p99_us", "perf_task_clock"} <= set(ok["metric"])
    assert set(df["param_ZMQ_ASIO_IN_BATCH_SIZE"]) == {"", "65536"}


def test_failed_attempt_is_kept_for_the_report(tmp_path):
    run = make_run(tmp_path, patterns=("PUBSUB",), transports=("tcp",), sizes=(262144,))
    failed = load.failed_attempts(load.load_run(run))
    assert failed.to_dict("records") == [
        {
            "pattern": "PUBSUB",
            "transport": "tcp",
            "msg_size": 262144,
            "config": "64 KiB",
            "library": "zlink",
            "repetition": 4,
            "status": "timeout",
            "table": "",  # a timed run's (a counting run's is counted.COUNTING_TABLE)
        }
    ]


def test_torn_last_line_is_skipped_but_a_torn_middle_line_is_an_error(run, tmp_path, capsys):
    lines = (run / "results.jsonl").read_text().splitlines()
    d = tmp_path / "r"
    d.mkdir()
    (d / "manifest.json").write_text((run / "manifest.json").read_text())
    (d / "results.jsonl").write_text("\n".join(lines + ['{"schema": "testb']) + "\n")
    assert len(RunDir.at(d).cells()) == len(lines)
    assert "torn last line" in capsys.readouterr().err
    (d / "results.jsonl").write_text("\n".join([lines[0], "{oops", lines[1]]) + "\n")
    with pytest.raises(load.RunDirError, match="results.jsonl:2: not valid JSON"):
        RunDir.at(d).cells()


def test_csv_and_parquet_round_trip(run, tmp_path):
    df = load.load_run(run)
    load.write_csv(df, tmp_path / "t.csv")
    back = load.read_csv(tmp_path / "t.csv")
    assert back.equals(df)
    load.write_csv(back, tmp_path / "u.csv")
    assert (tmp_path / "t.csv").read_bytes() == (tmp_path / "u.csv").read_bytes()
    load.write_parquet(df, tmp_path / "t.parquet")
    assert load.read_parquet(tmp_path / "t.parquet").equals(df)


def test_version_1_tables_are_migrated(run, tmp_path):
    df = load.load_run(run)
    v1 = df.drop(columns=["provenance", "table", "spread", "n_summarized", "value_precise", "placement",
                          "process_model", "link", "stop_reason"])
    (tmp_path / "old.csv").write_text("# testbed.tidy/1\n" + v1.to_csv(index=False))
    back = load.read_csv(tmp_path / "old.csv")
    assert (back["n_summarized"] == 1).all() and back["value_precise"].isna().all()
    assert np.allclose(back["value"].dropna(), df["value"].dropna())


def test_version_2_tables_are_migrated(run, tmp_path):
    df = load.load_run(run)
    v2 = df.drop(columns=["placement", "process_model", "link", "stop_reason"])
    (tmp_path / "v2.csv").write_text("# testbed.tidy/2\n" + v2.to_csv(index=False))
    back = load.read_csv(tmp_path / "v2.csv")
    assert list(back.columns) == schema.columns(back)
    assert (back[["placement", "link", "stop_reason"]] == "").all().all()


def test_where_and_how_a_cell_ran(tmp_path):
    def fields(lib, pattern, transport, size, config):
        return {
            "placement": {"sender": "0", "receiver": "1"},
            "link": "veth-1gbit",
            "process_model": "two-process",
        }

    run = make_run(
        tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64,), failed=(), cell_fields=fields
    )
    df = load.load_run(run)
    assert set(df["placement"]) == {"receiver=1 sender=0"} and set(df["link"]) == {"veth-1gbit"}
    assert set(df["process_model"]) == {"two-process"}


def test_stop_reason_comes_from_the_manifest_summary(tmp_path):
    groups = [{"group": group_id("PAIR", "tcp", 64, c), "stop_reason": r}
              for c, r in (("baseline", "decided"), ("64 KiB", "cap"))]
    run = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64,), failed=(),
                   summary={"groups": groups})
    df = load.load_run(run)
    assert dict(zip(df["config"], df["stop_reason"])) == {"baseline": "decided", "64 KiB": "cap"}


def test_process_model_of_older_bench_json_is_named():
    assert (
        load._process_model({}, {"settings": {"process_model": "one process, sender and receiver threads"}})
        == "one-process"
    )


def test_work_per_message_from_the_sweeps_work_file(tmp_path):
    run = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64,), failed=(), work=True)
    ok = load.load_run(run)
    per_lib = (
        ok[ok["metric"] == "work_instructions_per_msg"].groupby("library")["value"].agg(["median", "size"])
    )
    assert per_lib["median"].to_dict() == {"libzmq-4.3.5": 2000.0, "libzmq-4.3.5-aa": 2000.0,
                                           "zlink": pytest.approx(2300.0)}
    assert set(per_lib["size"]) == {10}  # one figure per cell, on each of its 5 repetitions x 2 configs
    assert (ok[ok["metric"] == "work_cycles_per_msg"]["unit"] == "cycles/msg").all()
    with (run / "work.jsonl").open("a") as fh:
        fh.write('{"cell_id": "torn')
    assert len(RunDir.at(run).work()) == 6


def test_work_per_message_on_the_line_when_no_work_file(tmp_path):
    def fields(*_):
        return {"work": {"instructions_per_msg": 1234.5, "cycles_per_msg": None}}

    run = make_run(
        tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64,), failed=(), cell_fields=fields
    )
    ok = load.load_run(run)
    assert set(ok[ok["metric"] == "work_instructions_per_msg"]["value"]) == {1234.5}
    assert "work_cycles_per_msg" not in set(ok["metric"])


def test_no_work_without_a_measurement(run):
    assert not load.load_run(run)["metric"].str.startswith("work_").any()


def test_newer_table_is_refused(tmp_path):
    with pytest.raises(ValueError, match="newer than this code"):
        schema.migrate(None, schema.VERSION + 1)


def test_missing_manifest_is_named(tmp_path):
    with pytest.raises(load.RunDirError, match="no manifest.json"):
        load.load_run(tmp_path)
