"""Counting runs ([run].counting_runs, sweep/counting.py) end to end on the fake arms
bench: arms runs that count the syscall tracepoints, counterbalanced as the timed runs,
kept in their own journal, judged for system calls per message and bytes per data call
only (paired per counting run), never for a time; failures recorded, resumable, and a
host that cannot count tracepoints reported as such, never as zeros."""
from __future__ import annotations

import json
import shutil

import pytest

from test_sweep_arms import arms_experiment, run_arms
from test_sweep_config import NAMES, error_of, write
from test_sweep_support import EXPERIMENT, env_for, only_run_dir, read_results, run_testbed
from testbed.records import counted
from testbed.records.run_dir import RunDir
from testbed.results import compare, load, report
from testbed.sweep import config, estimate
from testbed.sweep import plan as planmod

RUN = """[run]
repetitions = 6
counting_runs = 6
warmup_runs = 0
timeout_s = TIMEOUT
min_window_s = 0
rounds = 4
slice_s = 0.01
"""
SMOKE = RUN.replace("repetitions = 6\ncounting_runs = 6",
                    "repetitions = 2\ncounting_runs = 2\nverdicts = false")


@pytest.fixture(scope="module")
def counting_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("counting")
    log = tmp_path / "arms.log"
    proc, out = run_arms(tmp_path, arms_experiment(tmp_path, RUN), FAKE_ARMS_LOG=str(log))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return only_run_dir(out), [json.loads(ln)["argv"] for ln in log.read_text().splitlines()]


def _flag(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def _arms(argv: list[str]) -> list[str]:
    return [argv[i + 1].split("=", 1)[0] for i, a in enumerate(argv) if a == "--arm"]


def test_counting_runs_count_tracepoints_counterbalanced_in_their_own_journal(counting_run):
    run_dir, argvs = counting_run
    timed = [a for a in argvs if _flag(a, "--counters") == "software"]
    counting = [a for a in argvs if _flag(a, "--counters") == "auto"]
    assert len(timed) == 6 and len(counting) == 6 and len(argvs) == 12
    assert all(_flag(a, "--mode") == "thr" for a in counting)  # counted work: throughput slices only
    for k, (t, c) in enumerate(zip(timed, counting, strict=True)):  # the same plan per run index
        assert _arms(t) == _arms(c) and _flag(t, "--seed") == _flag(c, "--seed"), k
    cells = RunDir.open(run_dir).counting_cells()
    assert len(cells) == 24 and {r["repetition"] for r in cells} == set(range(6))
    assert all(r["purpose"] == "counting" and r["status"] == "ok" for r in cells)
    assert all("syscalls" in r["result"]["counted"]["per_msg"] for r in cells)
    records = read_results(run_dir)
    assert not [r for r in records if r.get("purpose")]
    assert all("syscalls" not in r["result"]["counted"]["per_msg"] for r in records if r["repetition"] >= 0)
    summary = json.loads((run_dir / "manifest.json").read_text())["summary"]["counting_runs"]
    assert summary["records"] == 24 and summary["failed"] == 0 and summary["not_counted"] == ""


def test_counting_runs_syscalls_reach_the_counted_verdicts_paired(counting_run):
    run_dir = counting_run[0]
    df = load.load_run(run_dir)
    tracepoint = df[df["metric"].isin(counted.TRACEPOINT)]
    assert len(tracepoint) == 48 and set(tracepoint["table"]) == {counted.COUNTING_TABLE}
    cmp = compare.compare_run(df, RunDir.open(run_dir).manifest)
    by = {(r["kind"], r["library"], r["config"], r["metric"]): r for r in cmp.to_dict("records")}
    fewer = by[("config", "zlink", "16 KiB", "cw_syscalls_per_msg")]  # the fake: a fifth of the calls
    assert fewer["verdict"] == "FAST" and fewer["test"] == compare.PAIRED and fewer["n_cand"] == 6, fewer
    assert by[("config", "zlink", "16 KiB", "cw_bytes_per_syscall")]["verdict"] == "FAST"
    assert by[("library", "zlink", "baseline", "cw_syscalls_per_msg")]["verdict"] == "FAST"  # 1 vs 2 a msg
    text = report.render_run(run_dir, run_dir.parent / "report", draw=False).read_text()
    section = text[text.index("### Counted work (a second judge)"):]
    assert "| configuration: system calls per message |" in section
    assert "| PAIR | tcp | 1 KiB | zlink | 16 KiB | 0.2 | 0.20x |" in section, section[:3000]


def _timing(df):
    """Every row but the tracepoint metrics, whatever its table: what any time-based
    verdict can read."""
    rest = df[~df["metric"].isin(counted.TRACEPOINT)]
    return rest.sort_values(["table", "cell_id", "repetition", "metric"]).reset_index(drop=True)


def test_a_counting_runs_times_never_reach_a_timing_verdict(counting_run, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(counting_run[0], copy)
    cmp_before = compare.compare_run(load.load_run(copy), RunDir.open(copy).manifest)
    before = _timing(load.load_run(copy))
    assert set(before["table"]) == {""}  # no counting run gives a time, a switch or a fault
    journal = copy / "counting.jsonl"
    tampered = []
    for rec in (json.loads(ln) for ln in journal.read_text().splitlines()):
        res = rec["result"]
        if rec["library"] == "zlink":  # one side only, so a verdict that read them would move
            res["throughput"]["msgs_per_sec"] *= 1000
            res["throughput"]["mb_per_sec"] *= 1000
            res["throughput"]["seconds"] /= 1000
            res["counted"]["totals"]["context_switches"] *= 1000
            res["counted"]["totals"]["page_faults"] += 1000
        tampered.append(json.dumps(rec))
    journal.write_text("\n".join(tampered) + "\n")
    df = load.load_run(copy)
    assert _timing(df).equals(before)
    cmp_after = compare.compare_run(df, RunDir.open(copy).manifest)
    assert set(cmp_after[cmp_after["table"] == counted.COUNTING_TABLE]["metric"]) == set(counted.TRACEPOINT)
    timed = ~cmp_before["metric"].isin(counted.TRACEPOINT)
    assert cmp_after[~cmp_after["metric"].isin(counted.TRACEPOINT)].reset_index(drop=True).equals(
        cmp_before[timed].reset_index(drop=True))
    journal.unlink()  # and without the journal: the same timing rows, no syscalls at all
    df = load.load_run(copy)
    assert _timing(df).equals(before) and not df["metric"].isin(counted.TRACEPOINT).any()


def test_a_failed_counting_run_is_recorded_the_sweep_goes_on_and_the_report_says_why(tmp_path):
    proc, out = run_arms(tmp_path, arms_experiment(tmp_path, SMOKE),
                         behaviour={"1024:counters=auto": "crash"})
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "counting run 0" in proc.stderr and "failed" in proc.stderr
    run_dir = only_run_dir(out)
    assert {r["status"] for r in read_results(run_dir)} == {"ok"}
    cells = RunDir.open(run_dir).counting_cells()
    assert len(cells) == 8 and all(r["status"] != "ok" and "SIGABRT" in r["failure"] for r in cells)
    text = report.render_run(run_dir, tmp_path / "report", draw=False).read_text()
    assert "System calls per message and bytes per data call: NOT counted: every counting run failed" in text
    assert "| counting run 1 |" in text


def test_a_host_without_tracepoints_is_reported_never_zeros(tmp_path):
    proc, out = run_arms(tmp_path, arms_experiment(tmp_path, SMOKE),
                         behaviour={"1024:counters=auto": "no-tracepoints"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run_dir(out)
    df = load.load_run(run_dir)
    assert not df["metric"].isin(counted.TRACEPOINT).any()
    text = report.render_run(run_dir, tmp_path / "report", draw=False).read_text()
    assert ("NOT counted: the host could not count the syscall tracepoints: tracefs not mounted (fake)"
            in text), text[:4000]
    assert "system calls NOT counted" in proc.stderr


def test_resume_does_the_counting_runs_not_recorded_yet(tmp_path):
    exp = arms_experiment(tmp_path, SMOKE)
    proc, out = run_arms(tmp_path, exp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run_dir(out)
    journal = run_dir / "counting.jsonl"
    lines = journal.read_text().splitlines()
    assert len(lines) == 8
    journal.write_text(lines[0] + "\n")  # cut off after the first record of counting run 0
    log = tmp_path / "resume.log"
    env = env_for(tmp_path / "libs.json", FAKE_ARMS_LOG=str(log))  # run_arms' listing (make_prebuilt)
    proc = run_testbed(["run", str(exp), "--resume", str(run_dir)], env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    argvs = [json.loads(ln)["argv"] for ln in log.read_text().splitlines()]
    assert [_flag(a, "--counters") for a in argvs] == ["auto", "auto"]  # both runs again, no timed one
    cells = RunDir.open(run_dir).counting_cells()
    assert len(cells) == 8 and {r["repetition"] for r in cells} == {0, 1}
    assert all(r["status"] == "ok" for r in cells)


# --- the [run] key -------------------------------------------------------------------------

def test_counting_runs_is_validated_naming_file_key_and_what_is_allowed(tmp_path):
    base = EXPERIMENT.replace("verdicts = false ", "verdicts = true ")
    msg = error_of(tmp_path, EXPERIMENT.replace("[perf]", "counting_runs = -1\n\n[perf]"))
    assert "run.counting_runs" in msg and "an integer >= 0" in msg
    msg = error_of(tmp_path, base.replace("repetitions = 2\n", "repetitions = 6\ncounting_runs = 3\n", 1))
    assert "run.counting_runs" in msg and "can never decide" in msg and ">= 6" in msg
    # blocks count each cell in one-arm runs (test_sweep_counting_blocks.py)
    declared = EXPERIMENT.replace("[perf]", 'design = "blocks"\ncounting_runs = 2\n\n[perf]')
    blocks = config.load(write(tmp_path, declared), "default", NAMES)
    assert blocks.design.counting_runs == 2 and blocks.design.as_manifest()["counting_runs"] == 2
    msg = error_of(tmp_path, EXPERIMENT.replace("[perf]", 'stop_on = ["cw_syscalls_per_msg"]\n\n[perf]'))
    assert "run.stop_on" in msg
    text = EXPERIMENT.replace("[perf]", "counting_runs = 2\n\n[perf]")
    smoke = config.load(write(tmp_path, text), "default", NAMES)
    assert smoke.design.counting_runs == 2 and smoke.design.as_manifest()["counting_runs"] == 2


def test_counting_runs_are_estimated_and_inside_the_budget():
    exp = config.load(config.experiment_path("batch-sweep"), "default", NAMES)
    cells = planmod.expand(exp)
    assert exp.design.counting_runs >= 6
    extra = estimate.counting_seconds(cells, exp)
    assert 10 < extra < 0.2 * exp.design.time_budget_s
    low, high = estimate.bounds(cells, exp)
    assert high <= estimate.run_seconds(cells, exp, None, 0) - extra + exp.design.time_budget_s + 1e-6


def test_a_bench_variable_per_block_is_estimated_as_blocks_not_arms():
    """security-cost's BENCH_SECURITY differs inside a block, so the runner falls back
    to one process per cell: the estimate prices each cell's own process and window (a
    2026-12-03 dry run priced arms slices and said 6.5-7.5 min for a run of 12-15)."""
    exp = config.load(config.experiment_path("security-cost"), "default", NAMES)
    cells = planmod.expand(exp)
    assert estimate.arms_likely(exp) and not estimate.runs_as_arms(exp, cells)
    as_blocks = estimate.cell_seconds(cells[0], exp, None, False)
    assert as_blocks > estimate.arms_cell_seconds(cells[0], exp)
    assert as_blocks >= estimate.PROCESS_OVERHEAD_S + exp.design.min_window_s
    per_rep = estimate.run_seconds(cells, exp, None, 1) - estimate.run_seconds(cells, exp, None, 0)
    assert per_rep >= sum(estimate.cell_seconds(c, exp, None, False) for c in cells) - 1e-6
    low, _ = estimate.bounds(cells, exp)
    assert low > 9 * 60
