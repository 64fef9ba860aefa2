"""The host speed reference: the real workload runs on the CPU it is asked for; a pair
whose reference moved beyond the tolerance is marked host-drift, kept in the raw
results, left out of the verdicts and (adaptive) replaced within the cap; the keys
are validated like the others."""
from __future__ import annotations

import json
import os

import pytest

from test_sweep_adaptive import FakeDecide, experiment, groups, reps_per_cell, run
from test_sweep_config import EXPERIMENT, NAMES, error_of, write
from test_sweep_support import only_run_dir, read_results
from testbed.sweep import config, speedref
from testbed.sweep.config_run import Design

# ------------------------------------------------------------------ the workload


def test_the_workload_runs_on_the_cpu_it_is_asked_for_and_restores_affinity():
    allowed = sorted(os.sched_getaffinity(0))
    for cpu in (allowed[0], allowed[-1]):
        out = speedref.measure_on(cpu)
        assert out["affinity"] == [cpu]          # seen from inside the timed workload
        assert out["ran_on"] == cpu              # the kernel's record of where it ran
        assert out["ms"] > 0 and out["total_ms"] > 0 and out["cpu_ms"] > 0
    assert sorted(os.sched_getaffinity(0)) == allowed


def test_measure_covers_every_bench_cpu_and_reports_the_slowest():
    allowed = sorted(os.sched_getaffinity(0))
    out = speedref.measure(allowed)
    assert [p["cpu"] for p in out["per_cpu"]] == allowed
    assert out["ms"] == max(p["ms"] for p in out["per_cpu"])


def test_bench_cpus_follow_the_pins():
    from testbed.sweep.placement import Pins
    assert speedref.bench_cpus(Pins("1", "1"), [0, 1]) == [1]
    assert speedref.bench_cpus(Pins("0", "1"), [0, 1]) == [0, 1]
    assert speedref.bench_cpus(Pins(), [0, 1]) == [0, 1]       # free: every usable CPU


# ------------------------------------------------------------------ drift, synthetic


def ref(*ms_per_cpu: float) -> dict:
    per = [{"cpu": i, "ms": ms} for i, ms in enumerate(ms_per_cpu)]
    return {"ms": max(ms_per_cpu), "per_cpu": per}


def test_a_pair_with_drift_is_excluded_one_without_is_not():
    steady = speedref.pair_line("g", 0, ["a", "b"], ref(25.0), ref(25.5), 0.05, "t0")
    moved = speedref.pair_line("g", 1, ["a", "b"], ref(25.0), ref(27.0), 0.05, "t1")
    faster = speedref.pair_line("g", 2, ["a", "b"], ref(27.0), ref(25.0), 0.05, "t2")
    other_cpu = speedref.pair_line("g", 3, ["a", "b"], ref(25.0, 25.0), ref(25.0, 30.0), 0.05, "t3")
    assert steady["exclusion"] is None and steady["drift"] == pytest.approx(0.02)
    assert moved["exclusion"] == speedref.HOST_DRIFT and moved["drift"] == pytest.approx(0.08)
    assert faster["exclusion"] == speedref.HOST_DRIFT    # a speed-up moves the pair as much
    assert other_cpu["exclusion"] == speedref.HOST_DRIFT  # any bench CPU counts
    no_rule = speedref.pair_line("g", 1, ["a", "b"], ref(25.0), ref(40.0), None, "t1")
    assert no_rule["exclusion"] is None                   # no tolerance declared: recorded only
    assert speedref.excluded_pairs([steady, moved, faster, other_cpu, no_rule]) == {("g", 2), ("g", 3)}


def test_the_summary_gives_median_min_max_cv_and_exclusions():
    lines = [speedref.pair_line("g", r, [], ref(b), ref(a), 0.05, f"t{r}")
             for r, (b, a) in enumerate([(20.0, 20.0), (20.0, 30.0), (30.0, 30.0)])]
    s = speedref.summarize(lines)
    assert (s["pairs"], s["measurements"], s["excluded"]) == (3, 6, 1)
    assert (s["median_ms"], s["min_ms"], s["max_ms"]) == (25.0, 20.0, 30.0)
    assert s["cv"] == pytest.approx(5 / 25)
    assert speedref.summarize([]) == {"pairs": 0, "measurements": 0, "excluded": 0}
    assert s["median_cpu_ms"] is None                       # no thread CPU time recorded
    busy = dict(lines[0], before={"ms": 60.0, "per_cpu": [{"cpu": 0, "ms": 60.0, "cpu_ms": 25.0}]},
                after={"ms": 60.0, "per_cpu": [{"cpu": 0, "ms": 60.0, "cpu_ms": 26.0}]})
    assert speedref.summarize([busy])["median_cpu_ms"] == 25.5  # shared CPU: wall 60, CPU 25.5


def test_next_look_point_counts_usable_pairs():
    d = Design(min_repetitions=3, max_repetitions=8, time_budget_s=None, min_window_s=0, confidence=0.95,
               margin=0.03, look_every=2)
    assert [d.next_look_point(v) for v in range(9)] == [3, 3, 3, 5, 5, 7, 7, 8, 8]


class ScriptedHost:
    """speedref.measure stand-in: 25 ms, except that pair number `drift_pair` (counted
    in the order pairs run) ends 10% slower than it started."""

    def __init__(self, drift_pair: int):
        self.calls, self.drift_pair = 0, drift_pair

    def __call__(self, cpus):
        self.calls += 1
        slow = self.calls == 2 * self.drift_pair + 2   # the "after" of that pair
        return {"ms": 27.5 if slow else 25.0,
                "per_cpu": [{"cpu": c, "ms": 27.5 if slow else 25.0, "total_ms": 25.0} for c in cpus]}


def drift_run(tmp_path, monkeypatch, fake: FakeDecide, run_keys: str):
    host = ScriptedHost(drift_pair=1)
    monkeypatch.setattr(speedref, "measure", host)
    exp = experiment(tmp_path, run_keys + "\nspeed_drift_tolerance = 0.05")
    assert run(tmp_path, monkeypatch, fake, exp) == 0
    run_dir = only_run_dir(tmp_path / "out")
    lines = [json.loads(x) for x in (run_dir / speedref.FILE_NAME).read_text().splitlines()]
    drifted = [ln for ln in lines if ln["exclusion"]]
    assert len(drifted) == 1 and drifted[0]["exclusion"] == "host-drift"
    assert drifted[0]["drift"] == pytest.approx(0.1) and drifted[0]["tolerance"] == 0.05
    return run_dir, lines, drifted[0]


def test_a_drifted_pair_stays_in_the_raw_results_and_out_of_the_verdicts(tmp_path, monkeypatch):
    fake = FakeDecide(decided_at=None)
    run_dir, lines, bad = drift_run(tmp_path, monkeypatch, fake, "min_repetitions = 3\nmax_repetitions = 6")
    recs = read_results(run_dir)
    # a speed line brackets one repetition of a block: both libraries in both configurations
    kept = [r for r in recs if r["block"] == bad["group"] and r["repetition"] == bad["repetition"]]
    assert len(kept) == 4 and {r["status"] for r in kept} == {"ok"}   # raw data kept
    assert sorted(r["cell_id"] for r in kept) == sorted(bad["cell_ids"])
    # every batch was bracketed, and the drifted one never reached decide()
    assert len(lines) == len({(r["block"], r["repetition"]) for r in recs})
    # the drifted group's final look judged its five other pairs (each call is one
    # configuration's metric: the clean ones judged all six)
    five = [r for r in range(6) if r != bad["repetition"]]
    assert any(c["pairs"] == five for c in fake.calls)
    assert all(c["pairs"] in (five, list(range(6))) for c in fake.calls if 5 in c["pairs"])
    # the cap counts every pair run, the drifted one too: nobody goes past 6
    assert set(reps_per_cell(run_dir).values()) == {6}
    assert {g["stop_reason"] for g in groups(run_dir)} == {"cap"}
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["speed_reference"]["present"] is True and m["speed_reference"]["excluded"] == 1
    assert m["speed_reference"]["tolerance"] == 0.05 and m["speed_reference"]["pairs"] == len(lines)


def test_an_adaptive_run_replaces_a_drifted_pair(tmp_path, monkeypatch):
    # decidable with 3 usable pairs: clean configurations stop at 3, the one with the
    # drifted pair needs a fourth, and its verdict never sees the drifted repetition
    fake = FakeDecide(decided_at=3)
    run_dir, _, bad = drift_run(tmp_path, monkeypatch, fake, "min_repetitions = 3\nmax_repetitions = 12")
    per_group = {}
    for r in read_results(run_dir):
        per_group.setdefault(r["block"], set()).add(r["repetition"])
    assert per_group.pop(bad["group"]) == {0, 1, 2, 3}
    assert all(reps == {0, 1, 2} for reps in per_group.values())
    assert {g["stop_reason"] for g in groups(run_dir)} == {"decided"}
    judged = [c["pairs"] for c in fake.calls if bad["repetition"] not in c["pairs"]]
    assert [0, 2, 3] in judged or [0, 1, 3] in judged or [1, 2, 3] in judged


def test_a_replacement_counts_toward_the_cap(tmp_path, monkeypatch):
    # cap 3 = the minimum: no room for a replacement; the drifted group ends with 2 usable
    fake = FakeDecide(decided_at=3)
    run_dir, _, bad = drift_run(tmp_path, monkeypatch, fake, "min_repetitions = 3\nmax_repetitions = 3")
    assert set(reps_per_cell(run_dir).values()) == {3}
    stops = {g["group"]: g["stop_reason"] for g in groups(run_dir)}
    assert stops.pop(bad["group"]) == "fixed" and set(stops.values()) == {"decided"}


def test_speed_reference_off_writes_no_file(tmp_path, monkeypatch):
    exp = experiment(tmp_path, "repetitions = 3\nspeed_reference = false")
    assert run(tmp_path, monkeypatch, FakeDecide(decided_at=3), exp) == 0
    run_dir = only_run_dir(tmp_path / "out")
    assert not (run_dir / speedref.FILE_NAME).exists()
    assert json.loads((run_dir / "manifest.json").read_text())["speed_reference"]["present"] is False


# ------------------------------------------------------------------ configuration

@pytest.mark.parametrize("value,problem", [
    ("0", "bad value 0.0"), ("0.5", "bad value 0.5"), ("-0.1", "bad value -0.1"),
    ('"5%"', "wrong type string"), ("true", "wrong type boolean"),
])
def test_a_bad_tolerance_names_file_key_and_range(tmp_path, value, problem):
    text = EXPERIMENT.replace("repetitions = 2", f"repetitions = 2\nspeed_drift_tolerance = {value}", 1)
    msg = error_of(tmp_path, text)
    assert ": run.speed_drift_tolerance: " in msg and problem in msg, msg
    assert "allowed: a number > 0 and < 0.5" in msg, msg


def test_a_tolerance_without_the_reference_is_refused(tmp_path):
    text = EXPERIMENT.replace("repetitions = 2", "repetitions = 2\nspeed_reference = false\n"
                              "speed_drift_tolerance = 0.05", 1)
    msg = error_of(tmp_path, text)
    assert ": run.speed_drift_tolerance: given while speed_reference = false" in msg, msg


def test_tolerance_defaults_and_profiles(tmp_path):
    exp = config.load(write(tmp_path, EXPERIMENT), "default", NAMES)
    assert exp.design.speed_reference is True and exp.design.drift_tolerance is None
    text = EXPERIMENT.replace("repetitions = 2", "repetitions = 2\nspeed_drift_tolerance = 0.05", 1)
    assert config.load(write(tmp_path, text), "default", NAMES).design.drift_tolerance == 0.05
    assert config.load(write(tmp_path, text), "default", NAMES).design.as_manifest()[
        "speed_drift_tolerance"] == 0.05


# ------------------------------------------------------------------ the estimate

@pytest.mark.parametrize("placement,cpus", [("free", 2), ("one-core", 1)])
def test_the_estimate_counts_the_reference_before_and_after_every_pair(tmp_path, placement, cpus):
    from testbed.sweep import estimate, plan
    text = EXPERIMENT.replace("io_threads = [1]", f'io_threads = [1]\nplacement = ["{placement}"]', 1)
    on = config.load(write(tmp_path, text), "default", NAMES)
    off = config.load(write(tmp_path, text.replace("repetitions = 2", "repetitions = 2\n"
                                                   "speed_reference = false", 1)), "default", NAMES)
    cells = plan.expand(on)
    groups = len({c.block_id for c in cells})
    assert groups >= 2 and {c.placement for c in cells} == {placement}
    # before and after each block's batch, on each of its CPUs, every repetition
    expected = on.design.min_repetitions * groups * 2 * cpus * estimate.SPEED_REFERENCE_S
    added = estimate.run_seconds(cells, on) - estimate.run_seconds(plan.expand(off), off)
    assert added == pytest.approx(expected)


def test_a_budget_below_the_minimum_repetitions_is_warned_about(tmp_path):
    """Issue 32: a budget the minimum repetitions cannot fit stops the run before some
    comparisons are looked at (all "not planned"); the plan says so before it starts."""
    from testbed import paths
    from testbed.sweep import estimate, plan
    text = (paths.REPO_ROOT / "experiments" / "batch-sweep" / "experiment.toml").read_text()
    assert "time_budget_s = 1200" in text
    for budget, warned in ((30, True), (100000, False)):
        path = tmp_path / f"b{budget}.toml"
        path.write_text(text.replace("time_budget_s = 1200", f"time_budget_s = {budget}", 1))
        exp = config.load(path, "default", NAMES)
        warning = estimate.budget_warning(plan.expand(exp), exp)
        assert (warning is not None) == warned
        if warned:
            assert str(path) in warning and "time_budget_s = 30" in warning


def test_the_workload_size_comes_from_the_environment_and_a_bad_one_is_named(monkeypatch, tmp_path):
    """The suite shortens the reference (conftest.py); the manifest says by how much, and
    a value that is not a whole number >= 1 stops a run before anything runs."""
    monkeypatch.setenv(speedref.ROUNDS_ENV, "3")
    assert speedref.describe()["rounds_per_slice"] == 3
    monkeypatch.delenv(speedref.ROUNDS_ENV)
    assert speedref.describe()["rounds_per_slice"] == speedref.ROUNDS_PER_SLICE == 100
    from test_sweep_support import env_for, make_prebuilt, run_testbed, write_experiment
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    for bad in ("0", "-5", "ten", ""):
        proc = run_testbed(["run", str(write_experiment(tmp_path)), "--out", str(tmp_path / "out")],
                           {**env_for(listing), speedref.ROUNDS_ENV: bad})
        assert proc.returncode == 2, proc.stderr
        assert f"$TESTBED_SPEEDREF_ROUNDS={bad!r}: allowed: a whole number >= 1" in proc.stderr
    assert not (tmp_path / "out").exists()
