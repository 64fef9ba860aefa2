"""The host ceiling measured inside a sweep ([ceiling], sweep/ceiling.py, issue 27.5):
declared and validated in experiment.toml, probed once per batch of the selected
blocks, among the batch's cells, with their placement and process model, stored in
ceiling.jsonl (failures recorded, resumable), shown in the report as each library's
share. Fake benches and a fake probe for the mechanics; the real ceiling_probe for one
short run."""
from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from test_sweep_support import (
    env_for,
    make_prebuilt,
    only_run_dir,
    read_results,
    run_testbed,
    write_experiment,
)
from testbed.bench import validate
from testbed.records import store
from testbed.records.run_dir import RunDir
from testbed.results import report
from testbed.sweep import ceiling, config, placement
from testbed.sweep.toml_reader import ExperimentError

FAKES = {"libzmq-4.3.5": {"fake_msgs_per_sec": 1e6, "fake_p50_us": 10.0, "fake_ceiling_bps": 2.048e9,
                          "fake_ceiling_p50_us": 5.0},
         "zlink": {"fake_msgs_per_sec": 1.5e6, "fake_p50_us": 8.0}}
CEILING = "[ceiling]\nsizes = [1024]\nbytes = 2097152\nio_waits = [\"blocking\"]\n\n[perf]"


def experiment(tmp_path, ceiling_table: str = CEILING, **replace: str):
    """The runner tests' experiment with [ceiling] and one pattern (PAIR): per repetition
    a 64 B and a 1 KiB block of 4 cells each, the 1 KiB one probed."""
    text = (write_experiment(tmp_path).read_text().replace("[perf]", ceiling_table, 1)
            .replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]'))
    for old, new in replace.items():
        text = text.replace(old, new)
    return write_experiment(tmp_path, text)


def lines(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / store.CEILING_RUN_NAME).read_text().splitlines()]


# ---------------------------------------------------------------- experiment.toml

def test_the_ceiling_table_is_read_with_its_defaults(tmp_path):
    exp = config.load(experiment(tmp_path, "[ceiling]\nsizes = [1024]\n\n[perf]"))
    assert exp.ceiling.sizes == (1024,) and exp.ceiling.io_waits == ("coalesce", "handoff")
    assert exp.ceiling.write_sizes == (262144, 1048576) and exp.ceiling.lat_count == 300
    assert exp.ceiling.source_messages == 1
    assert config.load(write_experiment(tmp_path)).ceiling is None


@pytest.mark.parametrize("table, key, allowed", [
    ("sizes = [4096]", "ceiling.sizes", "64, 1024"),
    ("sizes = []", "ceiling.sizes", "non-empty list"),
    ("sizes = [1024]\nbytes = 1000", "ceiling.bytes", "1048576.."),
    ("sizes = [1024]\nio_waits = [\"spin\"]", "ceiling.io_waits", "blocking, poll, coalesce, handoff"),
    ("sizes = [1024]\nwrite_sizes = [0]", "ceiling.write_sizes", ">= 1"),
    ("sizes = [1024]\nsource_messages = 0", "ceiling.source_messages", "1..4096"),
    ("sizes = [1024]\nsource_messages = \"16\"", "ceiling.source_messages", "1..4096"),
    ("sizes = [1024]\nevery = 2", "ceiling.every", "sizes"),
])
def test_a_bad_ceiling_table_names_file_key_and_what_is_allowed(tmp_path, table, key, allowed):
    path = experiment(tmp_path, f"[ceiling]\n{table}\n\n[perf]")
    with pytest.raises(ExperimentError) as err:
        config.load(path)
    text = str(err.value)
    assert str(path) in text and f": {key}: " in text and allowed in text.split("allowed:")[1], text


def test_a_ceiling_without_tcp_or_ipc_cells_is_refused(tmp_path):
    path = experiment(tmp_path, "[ceiling]\nsizes = [1024]\n\n[perf]",
                      **{'transports = ["tcp"]': 'transports = ["inproc"]'})
    with pytest.raises(ExperimentError, match=r"ceiling: no tcp or ipc cells"):
        config.load(path)


def test_dry_run_states_what_the_probes_add(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES)
    proc = run_testbed(["run", str(experiment(tmp_path)), "--dry-run"], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    assert "ceiling: sizes 1024; 1 block(s) probed once per repetition" in proc.stdout


# ---------------------------------------------------------------- the sweep

def test_every_batch_of_a_selected_block_runs_one_probe_among_its_cells(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES)
    exp = experiment(tmp_path, **{"repetitions = 2": "repetitions = 6"})
    log = tmp_path / "order.log"
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out"), "--seed", "1"],
                       env_for(listing, FAKE_ORDER_LOG=str(log)))
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    probes = lines(run_dir)
    assert sorted(ln["repetition"] for ln in probes) == list(range(6))  # one per batch, 1024 B only
    big = {r["cell_id"] for r in read_results(run_dir) if r["msg_size"] == 1024}
    for ln in probes:
        assert ln["status"] == "ok" and ln["msg_size"] == 1024 and set(ln["cell_ids"]) == big
        assert ln["process_model"] == "one-process" and ln["placement"] == "free"
        settings = ln["result"]["settings"]
        assert settings["bytes"] == 2097152 and settings["io_waits"] == "blocking"
        assert settings["mode"] == "both"
        assert validate.ceiling_problems(ln["result"]) == []
    # Where the probe ran inside each 1024 B batch (its 4 cells back to back, repetitions
    # in order): before cell `rep % 5`.
    big_entries = [e for e in log.read_text().splitlines() if e != "cell 64"]
    batches = [big_entries[i:i + 5] for i in range(0, len(big_entries), 5)]
    assert all(sorted(b) == ["cell 1024"] * 4 + ["probe 1024"] for b in batches)
    assert [b.index("probe 1024") for b in batches] == [ceiling.position(4, rep) for rep in range(6)]
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["ceiling"]["sizes"] == [1024] and m["ceiling"]["probes"] == 6 and m["ceiling"]["failed"] == 0


def test_two_process_cells_get_a_two_process_probe_with_their_pins(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES)
    split = len(placement.usable_cpus()) >= 2
    exp = experiment(tmp_path, **{"io_threads = [1]": 'io_threads = [1]\nprocess_model = ["two-process"]\n'
                                  f'placement = ["{"split" if split else "one-core"}"]',
                                  "timeout_s = 20": "timeout_s = 90"})  # real sockets on a loaded host
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    probes = lines(only_run_dir(tmp_path / "out"))
    assert len(probes) == 2
    for ln in probes:
        assert ln["status"] == "ok" and ln["process_model"] == "two-process"
        assert set(ln["command"]) == {"receiver", "sender"}
        assert ln["result"]["role"] == "joined"
        row = ln["result"]["rows"][0]
        assert row["throughput"]["bytes_per_sec"] == 2.048e9 and row["latency"]["p50"] == 5.0
        assert ln["result"]["placement"] == ln["pins"] and ln["pins"]["sender"] is not None


def test_a_failing_probe_is_recorded_and_the_sweep_goes_on(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {"ceiling": "crash"}, "zlink": {}}, FAKES)
    proc = run_testbed(["run", str(experiment(tmp_path)), "--out", str(tmp_path / "out")], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    assert all(r["status"] == "ok" for r in read_results(run_dir)) and len(read_results(run_dir)) == 16
    probes = lines(run_dir)
    assert len(probes) == 2 and all(ln["status"] == "failed" and ln["result"] is None for ln in probes)
    assert all("crashing on purpose" in ln["failure"] for ln in probes)
    assert "ceiling probe failed" in proc.stderr
    assert json.loads((run_dir / "manifest.json").read_text())["ceiling"]["failed"] == 2
    text = report.render_run(run_dir).read_text()
    assert "2 of 2 probes failed" in text


def test_garbage_from_the_probe_fails_that_probe(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {"ceiling": "garbage"}, "zlink": {}}, FAKES)
    proc = run_testbed(["run", str(experiment(tmp_path)), "--out", str(tmp_path / "out")], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    probes = lines(only_run_dir(tmp_path / "out"))
    assert probes and all(ln["status"] == "failed" and "not one JSON line" in ln["failure"] for ln in probes)


def test_a_resumed_run_probes_only_the_batches_without_a_probe(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES)
    exp = experiment(tmp_path)
    assert run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing)).returncode == 0
    run_dir = only_run_dir(tmp_path / "out")
    first = lines(run_dir)
    kept = first[:1]  # as if killed after the second batch's cells, before its probe
    (run_dir / store.CEILING_RUN_NAME).write_text("".join(json.dumps(ln) + "\n" for ln in kept))
    results_before = read_results(run_dir)
    resumed = run_testbed(["run", str(exp), "--out", str(tmp_path / "out"), "--resume", str(run_dir)],
                          env_for(listing))
    assert resumed.returncode == 0, resumed.stderr
    after = lines(run_dir)
    assert after[:1] == kept and len(after) == 2
    assert (after[1]["block"], after[1]["repetition"]) == (first[1]["block"], first[1]["repetition"])
    assert Counter((ln["block"], ln["repetition"]) for ln in after).most_common(1)[0][1] == 1
    assert read_results(run_dir) == results_before  # no cell ran again


# ---------------------------------------------------------------- the report

def test_the_report_shows_each_librarys_share_of_the_probe_of_its_batches(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES)
    exp = experiment(tmp_path)
    assert run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing)).returncode == 0
    run_dir = only_run_dir(tmp_path / "out")
    text = report.render_run(run_dir).read_text()
    assert "## Share of the host ceiling (measured in this run)" in text
    # 1 KiB: libzmq 1e6 msg/s and zlink 1.5e6 of a 2.048e9 B/s probe; p50 5 us of 10 and 8 us.
    assert "| PAIR | tcp | 1 KiB | free | one-process | 1 | baseline | Throughput | 2,048 MB/s " \
           "(2,048-2,048) | libzmq-4.3.5 50% (50-50%) | zlink 75% (75-75%) | 2/2 |" in text
    assert "libzmq-4.3.5 50% (50-50%) | zlink 62% (62-62%)" in text  # p50: 5/10, 5/8
    assert "%) ABOVE" not in text and "went ABOVE" not in text
    assert "| 50% (50-50%) / 75% (75-75%) |" in text  # the detail tables' column
    assert "The probe's sender wrote every message from one buffer (cache-hot)" in text
    assert {ln["result"]["settings"]["source_messages"] for ln in lines(run_dir)} == {1}


def test_a_source_ring_is_passed_to_every_probe_and_named_in_the_report(tmp_path):
    """[ceiling].source_messages: the probe's sender writes from a ring of that many
    messages (as a zero-copy cell's --send-buffers ring), and the report says so."""
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES)
    exp = experiment(tmp_path, CEILING.replace("[perf]", "source_messages = 16\n\n[perf]"))
    assert run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing)).returncode == 0
    run_dir = only_run_dir(tmp_path / "out")
    probes = lines(run_dir)
    assert probes and all(ln["result"]["settings"]["source_messages"] == 16 for ln in probes)
    assert all("--source-messages" in " ".join(ln["command"]["both"]) for ln in probes)
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["ceiling"]["source_messages"] == 16
    text = report.render_run(run_dir).read_text()
    assert "wrote from a ring of 16 message-sized buffers (`[ceiling].source_messages`)" in text


def test_a_library_above_the_in_run_probe_is_flagged(tmp_path):
    fakes = {**FAKES, "libzmq-4.3.5": {**FAKES["libzmq-4.3.5"], "fake_ceiling_bps": 1.2e9}}
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, fakes)
    exp = experiment(tmp_path)
    assert run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing)).returncode == 0
    text = report.render_run(only_run_dir(tmp_path / "out")).read_text()
    assert "zlink 128% (128-128%) ABOVE" in text  # 1.5e6 x 1024 / 1.2e9
    assert "2 library cells went ABOVE the probe of their own batches" in text  # both configurations
    assert "- PAIR tcp 1 KiB baseline free one-process io1: zlink Throughput 128%" in text


# ---------------------------------------------------------------- the real probe

@pytest.mark.slow
@pytest.mark.parametrize("model", ["one-process", "two-process"])
def test_the_real_probe_runs_inside_a_sweep(tmp_path, built_library, model):
    real = built_library("libzmq-4.3.5").bench_dir / ceiling.PROBE_BINARY
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES)
    fake_probe = tmp_path / "libzmq-4.3.5" / "bench" / ceiling.PROBE_BINARY
    fake_probe.unlink()
    shutil.copy2(real, fake_probe)
    where = "split" if len(placement.usable_cpus()) >= 2 else "one-core"
    exp = experiment(tmp_path, CEILING.replace("[perf]", "lat_count = 50\nwrite_sizes = [65536]\n\n[perf]"),
                     **{"io_threads = [1]": f'io_threads = [1]\nprocess_model = ["{model}"]\n'
                                            f'placement = ["{where}"]',
                        "repetitions = 2": "repetitions = 1"})
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    (ln,) = lines(only_run_dir(tmp_path / "out"))
    assert ln["status"] == "ok", ln["failure"]
    assert validate.ceiling_problems(ln["result"]) == []
    assert ln["result"]["process_model"] == model
    settings = ln["result"]["settings"]
    assert settings["bytes"] == 2097152 and settings["io_waits"] == ["blocking"]
    assert settings["source_messages"] == 1
    (row,) = ln["result"]["rows"]
    assert row["transport"] == "tcp" and row["msg_size"] == 1024
    assert row["throughput"]["bytes_per_sec"] > 0 and row["latency"]["p50"] > 0
    pins = ln["pins"]
    assert ln["result"]["placement"]["sender"] == pins["sender"] and pins["sender"] is not None


def test_shares_pair_each_repetition_with_the_probe_of_its_own_batch(tmp_path):
    """Share per pair, not median over median: a cell's repetition r against the probe
    that ran in batch r (by the cell ids the probe line names)."""
    import pandas as pd

    from testbed.results import ceiling as ceil
    where = {"pattern": "PAIR", "transport": "tcp", "msg_size": 262144, "io_threads": 1, "config": "default",
             "placement": "split", "process_model": "two-process", "link": "direct", "library": "zlink",
             "status": "ok", "cell_id": "c1"}
    rows = [{**where, "repetition": rep, "metric": "throughput_msgs", "value": bps / 262144}
            for rep, bps in ((0, 1.0e9), (1, 1.2e9))]
    rows.append({**where, "repetition": 2, "metric": "throughput_msgs", "value": 1.0})  # its probe failed
    probe = {"transport": "tcp", "msg_size": 262144, "cell_ids": ["c1"], "status": "ok"}
    probes = [{**probe, "block": "b", "repetition": rep,
               "result": {"rows": [{"transport": "tcp", "msg_size": 262144,
                                    "throughput": {"bytes_per_sec": bps}, "latency": None}]}}
              for rep, bps in ((0, 2.0e9), (1, 1.5e9))]
    probes.append({**probe, "block": "b", "repetition": 2, "status": "failed", "result": None})
    (tmp_path / store.CEILING_RUN_NAME).write_text("".join(json.dumps(p) + "\n" for p in probes) + '{"torn')
    shares = ceil.shares(RunDir.at(tmp_path).ceiling_probes(), pd.DataFrame(rows))
    entry = ceil.run_share(shares, {**where, "metric": "throughput_msgs"}, "zlink")
    assert (entry["share"], entry["lo"], entry["hi"], entry["n"]) == (0.65, 0.5, 0.8, 2)
    assert (entry["ceiling"], entry["ceiling_lo"], entry["ceiling_hi"]) == (1.75e9, 1.5e9, 2.0e9)
    assert shares["probes"] == 3 and [f["repetition"] for f in shares["failed"]] == [2]
    assert ceil.shares(RunDir.at(tmp_path / "none").ceiling_probes(), pd.DataFrame(rows)) is None
