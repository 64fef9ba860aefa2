"""`./testbed run` end to end with fake bench scripts (no real library needed)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

from test_sweep_support import (
    ANALYSIS,
    assert_failure_named,
    env_for,
    interrupt_a_run,
    make_prebuilt,
    only_run_dir,
    read_results,
    run_testbed,
    write_experiment,
)


def keys(records):
    return [(r["cell_id"], r["repetition"]) for r in records]


def test_full_run_records_every_cell_with_perf_and_a_complete_manifest(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    exp = write_experiment(tmp_path)
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out"), "--seed", "5"], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    recs = read_results(run_dir)
    assert len(recs) == 32 and len(set(keys(recs))) == 32
    assert all(r["status"] == "ok" and r["schema"] == "testbed.cell/1" for r in recs)
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "complete" and m["shuffle_seed"] == 5 and m["cell_count"] == 16
    for key in ("run_id", "git", "host", "libraries", "perf", "tool_versions", "pinning"):
        assert m[key] is not None, key
    assert m["host"]["load_before"] is not None and m["host"]["load_after"] is not None
    assert {lib["build_id"] for lib in m["libraries"]} == {"6c69627a6d712d34", "7a6c696e6b000000"}
    if m["perf"]["available"]:
        assert all(r["perf"]["available"] and "task-clock" in r["perf"]["events"] for r in recs)
    # the cell's env reached the benchmark; "unset" means not set at all
    for r in recs:
        env = r["result"]["env"]
        if r["config"] == "baseline":
            assert "ZMQ_ASIO_IN_BATCH_SIZE" not in env
        else:
            assert env["ZMQ_ASIO_IN_BATCH_SIZE"] == "16384" == env["ZMQ_ASIO_OUT_BATCH_SIZE"]


def test_crash_hang_and_garbage_fail_their_cells_only(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {"64": "garbage"},
                                       "zlink": {"64": "crash", "1024": "hang"}})
    text = (write_experiment(tmp_path, timeout=2).read_text()
            .replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]')
            .replace("repetitions = 2", "repetitions = 1"))
    exp = write_experiment(tmp_path, text)
    t0 = time.monotonic()
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing), timeout=120)
    assert time.monotonic() - t0 < 60
    assert proc.returncode == 1, proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    recs = {(r["library"], r["msg_size"], r["config"]): r for r in read_results(run_dir)}
    assert len(recs) == 8
    for cfg in ("baseline", "16 KiB"):
        garbage = recs[("libzmq-4.3.5", 64, cfg)]
        assert garbage["status"] == "failed" and "malformed" in garbage["failure"]
        assert garbage["result"] is None
        crash = recs[("zlink", 64, cfg)]
        assert crash["status"] == "failed" and crash["exit_code"] == -signal.SIGABRT
        assert "crashing on purpose" in crash["stderr_tail"]
        hang = recs[("zlink", 1024, cfg)]
        assert hang["status"] == "timeout" and hang["exit_code"] is None
        assert "hanging on purpose" in hang["stderr_tail"]
        assert recs[("libzmq-4.3.5", 1024, cfg)]["status"] == "ok"
    assert "6 failed" in proc.stderr  # the summary lists failures


def test_kill_9_then_resume_gives_every_cell_once(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    exp = write_experiment(tmp_path)
    out = tmp_path / "out"
    env = env_for(listing, FAKE_BENCH_SLEEP="0.15")
    proc = subprocess.Popen([sys.executable, "-m", "testbed.cli", "run", str(exp), "--out", str(out)],
                            env=env, cwd=ANALYSIS, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    results = None
    while time.monotonic() < deadline:
        found = list(out.glob("*/*/results.jsonl"))
        if found and len(found[0].read_text().splitlines()) >= 5:
            results = found[0]
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert results is not None, "the run never produced results"
    before = read_results(results.parent)
    assert 5 <= len(before) < 32
    with open(results, "a") as f:  # what a kill in the middle of a write leaves behind
        f.write('{"schema": "testbed.cell/1", "cell_id": "torn')
    m = json.loads((results.parent / "manifest.json").read_text())
    assert m["status"] == "running"  # killed: nobody could mark it
    resumed = run_testbed(["run", str(exp), "--out", str(out), "--resume", str(results.parent)],
                          env_for(listing))
    assert resumed.returncode == 0, resumed.stderr
    after = read_results(results.parent)
    assert len(after) == 32 and len(set(keys(after))) == 32
    assert keys(after)[: len(before)] == keys(before)  # finished cells kept, not redone
    assert json.loads((results.parent / "manifest.json").read_text())["status"] == "complete"
    assert "torn" in (results.parent / "torn-lines.txt").read_text()


def test_ctrl_c_leaves_a_resumable_run_and_prints_the_command(tmp_path):
    exp, out, listing, code, err = interrupt_a_run(tmp_path, signal.SIGINT, wait_s=60)
    assert code == 130, err
    run_dir = only_run_dir(out)
    assert f"./testbed run {exp} --resume {run_dir}" in err
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "interrupted"
    # bare --resume finds the newest unfinished run of the experiment
    resumed = run_testbed(["run", str(exp), "--out", str(out), "--resume"], env_for(listing))
    assert resumed.returncode == 0, resumed.stderr
    assert len(set(keys(read_results(run_dir)))) == len(read_results(run_dir)) == 32
    nothing = run_testbed(["run", str(exp), "--out", str(out), "--resume"], env_for(listing))
    assert nothing.returncode == 2 and "no unfinished run" in nothing.stderr


def test_two_shards_merged_equal_one_unsharded_run(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    exp = write_experiment(tmp_path)
    env = env_for(listing)
    full = run_testbed(["run", str(exp), "--out", str(tmp_path / "full")], env)
    assert full.returncode == 0, full.stderr
    for i in (1, 2):
        shard = run_testbed(["run", str(exp), "--out", str(tmp_path / "shards"), "--shard", f"{i}/2"], env)
        assert shard.returncode == 0, shard.stderr
    shard_dirs = sorted(p.parent for p in (tmp_path / "shards").glob("*/*/manifest.json"))
    assert len(shard_dirs) == 2
    sizes = [len(read_results(d)) for d in shard_dirs]
    assert all(0 < n < 32 for n in sizes)
    merged = run_testbed(["merge", *map(str, shard_dirs), "--out", str(tmp_path / "merged")], env)
    assert merged.returncode == 0, merged.stderr
    merged_dir = only_run_dir(tmp_path / "merged")
    full_keys = keys(read_results(only_run_dir(tmp_path / "full")))
    assert Counter(keys(read_results(merged_dir))) == Counter(full_keys)
    assert json.loads((merged_dir / "manifest.json").read_text())["status"] == "complete"
    # merging a shard with itself, or with another experiment's run, is refused
    again = run_testbed(["merge", str(shard_dirs[0]), str(shard_dirs[0]), "--out", str(tmp_path / "x")], env)
    assert again.returncode == 2
    other = write_experiment(tmp_path / "o", exp.read_text().replace("repetitions = 2", "repetitions = 3"))
    run3 = run_testbed(["run", str(other), "--out", str(tmp_path / "o3"), "--shard", "2/2"], env)
    assert run3.returncode == 0, run3.stderr
    mixed = run_testbed(["merge", str(shard_dirs[0]), str(only_run_dir(tmp_path / "o3")), "--out",
                     str(tmp_path / "x")], env)
    assert mixed.returncode == 2 and "differs" in mixed.stderr


def test_missing_library_is_warned_recorded_and_summarised(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}})  # zlink not built
    exp = write_experiment(tmp_path)
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    assert "zlink" in proc.stderr and "MISSING" in proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    m = json.loads((run_dir / "manifest.json").read_text())
    assert [x["name"] for x in m["missing_libraries"]] == ["zlink"]
    assert m["summary"]["missing_libraries"] == ["zlink"] and m["summary"]["not_run_missing_library"] == 16
    assert m["status"] == "incomplete"
    assert {r["library"] for r in read_results(run_dir)} == {"libzmq-4.3.5"}


def test_dry_run_prints_plan_and_estimate_without_running(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    exp = write_experiment(tmp_path)
    proc = run_testbed(["run", str(exp), "--dry-run", "--shard", "1/2", "--out", str(tmp_path / "out")],
                   env_for(listing))
    assert proc.returncode == 0, proc.stderr
    assert "cells: 8; repetitions: 2; runs: 16" in proc.stdout and "estimated duration" in proc.stdout
    assert not (tmp_path / "out").exists()


def test_bad_experiment_exits_2_with_one_line(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}})
    exp = write_experiment(tmp_path)
    exp.write_text(exp.read_text().replace('transports = ["tcp"]', 'transports = ["tcp", "udp"]'))
    proc = run_testbed(["run", str(exp), "--dry-run"], env_for(listing))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "workload.transports" in lines[0] and "udp" in lines[0]


def test_resume_refuses_a_changed_library_build(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    exp = write_experiment(tmp_path)
    out = tmp_path / "out"
    proc = run_testbed(["run", str(exp), "--out", str(out), "--profile", "quick"], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run_dir(out)
    info_file = tmp_path / "zlink" / "prefix" / "testbed-lib.json"
    info = json.loads(info_file.read_text())
    info_file.write_text(json.dumps({**info, "build_id": "ffffffffffffffff"}))
    again = run_testbed(["run", str(exp), "--out", str(out), "--resume", str(run_dir)], env_for(listing))
    assert again.returncode == 2 and "ffffffffffffffff" in again.stderr and "never mix" in again.stderr


def test_dry_run_estimate_uses_earlier_measurements(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    exp = write_experiment(tmp_path)
    out = tmp_path / "out"
    before = run_testbed(["run", str(exp), "--dry-run", "--out", str(out)], env_for(listing))
    assert "0 of 16 cells timed from earlier runs" in before.stdout
    quick = run_testbed(["run", str(exp), "--out", str(out), "--profile", "quick"], env_for(listing))
    assert quick.returncode == 0
    after = run_testbed(["run", str(exp), "--dry-run", "--out", str(out)], env_for(listing))
    assert "16 of 16 cells timed from earlier runs" in after.stdout, after.stdout


def test_startup_cells_are_timed_by_hyperfine(tmp_path):
    import shutil
    if shutil.which("hyperfine") is None:
        import pytest
        pytest.skip("hyperfine not installed (./testbed setup installs it)")
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    text = (write_experiment(tmp_path).read_text()
            .replace("[workload]", '[workload]\nkind = "startup"')
            .replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]')
            .replace("sizes = [64, 1024]", "sizes = [64]")
            .replace("warmup_runs = 0", "warmup_runs = 0\nhyperfine_runs = 3")
            .replace("repetitions = 2", "repetitions = 1"))
    exp = write_experiment(tmp_path, text)
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    recs = read_results(only_run_dir(tmp_path / "out"))
    assert len(recs) == 4
    for r in recs:
        assert r["kind"] == "startup" and r["status"] == "ok"
        res = r["result"]
        assert res["schema"] == "testbed.hyperfine/1" and res["runs"] == 3 and len(res["times"]) == 3
        assert 0 < res["min"] <= res["median"] <= res["max"]
        assert r["command"][r["command"].index("hyperfine"):][:1] == ["hyperfine"]


def test_perf_record_cells_get_flamegraphs_or_a_stated_reason(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    selector = '[[perf.record]]\npattern = "PAIR"\nmsg_size = 64\nconfig = "baseline"'
    text = (write_experiment(tmp_path).read_text()
            .replace("repetitions = 2", "repetitions = 1")
            .replace("work_per_message = false", "work_per_message = false\n" + selector))
    text = text.replace("[profiles.quick]\nrepetitions = 1\n", "") + "\n[profiles.quick]\nrepetitions = 1\n"
    exp = write_experiment(tmp_path, text)
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing))
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    flames = json.loads((run_dir / "manifest.json").read_text())["flamegraphs"]
    assert sorted(f["library"] for f in flames) == ["libzmq-4.3.5", "zlink"]
    assert len({f["group"] for f in flames}) == 1  # the two libraries of one configuration
    for f in flames:
        if "svg" in f:
            assert (run_dir / "flamegraphs" / f["svg"]).read_text().lstrip().startswith("<?xml")
        else:
            assert f["error"]  # perf or inferno missing: said, not hidden
    index = (run_dir / "flamegraphs" / "index.html").read_text()
    assert "libzmq-4.3.5" in index and "zlink" in index
    assert len(read_results(run_dir)) == 16  # profiling runs are not results


def test_report_hook_calls_render_run_and_survives_its_failure(tmp_path, monkeypatch, capsys):
    import types

    from testbed.commands import run_cmd
    calls = []
    fake = types.ModuleType("testbed.results.report")
    fake.render_run = lambda run_dir: calls.append(run_dir) or (run_dir / "report.md")
    monkeypatch.setitem(sys.modules, "testbed.results.report", fake)
    run_cmd.render_report(tmp_path)
    assert calls == [tmp_path] and "report written to" in capsys.readouterr().err

    def broken(run_dir):
        raise RuntimeError("boom")
    fake.render_run = broken
    run_cmd.render_report(tmp_path)
    err = capsys.readouterr().err
    assert "report rendering failed (RuntimeError: boom)" in err and str(tmp_path) in err


def test_without_perf_the_run_goes_on_and_says_so_once(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    exp = write_experiment(tmp_path)
    empty = tmp_path / "nobin"
    empty.mkdir()
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out"), "--profile", "quick"],
                       env_for(listing, PATH=str(empty)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("perf unavailable") == 2  # one warning up front, one line in the summary
    run_dir = only_run_dir(tmp_path / "out")
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["perf"]["available"] is False and "not found" in m["perf"]["reason"]
    recs = read_results(run_dir)
    assert len(recs) == 16 and all(r["status"] == "ok" for r in recs)
    assert all(r["perf"] == {"available": False, "reason": m["perf"]["reason"], "events": {}} for r in recs)


def test_perf_stat_off_runs_speed_cells_bare_and_says_why(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    text = write_experiment(tmp_path).read_text()
    exp = write_experiment(tmp_path, text.replace("[perf]\n", "[perf]\nstat = false\n"))
    argv = ["run", str(exp), "--out", str(tmp_path / "out"), "--profile", "quick"]
    proc = run_testbed(argv, env_for(listing))
    assert proc.returncode == 0, proc.stderr
    assert "[perf].stat = false" in proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["perf"]["available"] is False and "[perf].stat = false" in m["perf"]["reason"]
    recs = read_results(run_dir)
    assert recs and all(r["status"] == "ok" and r["perf"]["events"] == {} for r in recs)
    argvs = [argv for r in recs for argv in (r["command"].values() if isinstance(r["command"], dict)
                                             else [r["command"]])]
    assert argvs and not any(argv[0] == "perf" for argv in argvs)  # nothing wrapped


def test_a_placement_the_host_cannot_give_fails_its_cells_only(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    cpu = min(os.sched_getaffinity(0))  # one CPU this process may use (a cpuset may exclude CPU 0)
    text = (write_experiment(tmp_path).read_text()
            .replace("io_threads = [1]", 'io_threads = [1]\nplacement = ["free", "split"]')
            .replace("warmup_runs = 0", f'warmup_runs = 0\ncpus = "{cpu}"'))
    exp = write_experiment(tmp_path, text)
    dry = run_testbed(["run", str(exp), "--dry-run"], env_for(listing))
    assert "WARNING: cells with placement 'split' will fail" in dry.stdout, dry.stdout
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out"), "--profile", "quick"],
                       env_for(listing))
    assert proc.returncode == 1, proc.stderr
    recs = read_results(only_run_dir(tmp_path / "out"))
    split = [r for r in recs if r["placement"] == "split"]
    free = [r for r in recs if r["placement"] == "free"]
    assert len(split) == len(free) == 16
    assert all(r["status"] == "ok" for r in free)
    for r in split:
        assert r["status"] == "failed" and r["result"] is None
        assert r["failure"].startswith("placement: placement 'split' needs 2 CPU")
        assert f"offers 1: [{cpu}]" in r["failure"]
        assert_failure_named(proc.stderr, r, "placement 'split' needs 2 CPU")


def test_bad_shard_and_bad_resume_dir_are_one_line_errors(tmp_path):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}})
    exp = write_experiment(tmp_path)
    for args, needle in ((["--shard", "3/2"], "--shard '3/2'"), (["--resume", str(tmp_path)], "--resume")):
        proc = run_testbed(["run", str(exp), "--dry-run", *args], env_for(listing))
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_libs_option_runs_zlink_at_a_revision_and_records_its_commit(tmp_path):
    """--libs replaces [libraries] (first = reference); zlink@HEAD's full commit reaches
    the manifest and survives a resume; a bad revision stops the run naming it."""
    head = subprocess.run(["git", "-C", str(ANALYSIS), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    listing = make_prebuilt(tmp_path, {"zlink@HEAD": {}, "zlink": {}})
    exp = write_experiment(tmp_path, write_experiment(tmp_path).read_text()
                           .replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]')
                           .replace("sizes = [64, 1024]", "sizes = [64]"))
    env = env_for(listing, TESTBED_BUILD_DIR=str(tmp_path / "build"))
    out = ["--out", str(tmp_path / "out")]
    bad = run_testbed(["run", str(exp), "--libs", "zlink@no-such-rev,zlink", *out], env)
    assert bad.returncode == 2 and "zlink@no-such-rev: unknown revision 'no-such-rev'" in bad.stderr
    proc = run_testbed(["run", str(exp), "--libs", "zlink@HEAD,zlink", *out], env)
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["reference"] == "zlink@HEAD" and m["libs_option"] == ["zlink@HEAD", "zlink"]
    by_label = {lib["label"]: lib for lib in m["libraries"]}
    assert by_label["zlink@HEAD"]["commit"] == head and by_label["zlink@HEAD"]["revision"] == "HEAD"
    assert "commit" not in by_label["zlink"]
    assert {r["library"] for r in read_results(run_dir)} == {"zlink@HEAD", "zlink"}
    again = run_testbed(["run", str(exp), "--resume", str(run_dir), *out], env)
    assert again.returncode == 0, again.stderr
    assert json.loads((run_dir / "manifest.json").read_text())["reference"] == "zlink@HEAD"
