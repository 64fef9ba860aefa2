"""Adaptive repetitions end to end with fake benches and a fake `decide` (the stats
piece's function is replaced, so the stopping rules are tested on their own): a
configuration stops when decided, at its cap, or when the run's budget is spent; a
design that cannot decide is refused or raised; an interrupted run resumes without
losing or repeating anything."""
from __future__ import annotations

import argparse
import json
import sys
import types
from collections import Counter
from dataclasses import dataclass

import pytest

from test_sweep_support import make_prebuilt, only_run_dir, read_results, write_experiment
from testbed.sweep import run_cmd, speedref

LOOK_CONFIDENCE = 0.99  # what the fake adaptive_design asks every look to use
FAKES = {"libzmq-4.3.5": {"fake_msgs_per_sec": 1e6, "fake_p50_us": 10.0},
         "zlink": {"fake_msgs_per_sec": 2e6, "fake_p50_us": 8.0}}


@dataclass
class Decision:
    verdict: str
    ratio: float = 1.0
    low: float = 0.9
    high: float = 1.1
    p_value: float = 0.5
    mde: float = 0.1
    method: str = "fake"


class FakeDecide:
    """decide() that becomes decisive once both sides have `decided_at` samples."""

    def __init__(self, decided_at: int | None, needed: int = 3, interrupt_after: int | None = None):
        self.decided_at, self.needed, self.interrupt_after = decided_at, needed, interrupt_after
        self.calls: list[dict] = []
        self.paired_plan: bool | None = None

    def module(self) -> types.ModuleType:
        mod = types.ModuleType("testbed.stats.decide")
        mod.decide_repetitions, mod.min_samples = self.decide, lambda confidence: self.needed
        mod.adaptive_design = self.adaptive_design
        return mod

    def adaptive_design(self, cap, batch=1, confidence=0.95, paired=False):
        """Like the stats piece's: the first look after `needed`, one per `batch` after."""
        self.paired_plan = paired
        if cap < self.needed:
            raise ValueError(f"adaptive cap {cap} per side is below the {self.needed} repetitions per side "
                             "needed for one decisive look")
        looks = 1 + -(-(cap - self.needed) // batch)
        return types.SimpleNamespace(start=self.needed, batch=batch, cap=cap, looks=looks,
                                     look_confidence=LOOK_CONFIDENCE)

    def decide(self, reference, candidate, *, higher_is_better, margin=0.03, confidence=0.95, seed=0):
        self.calls.append({"reference": list(reference.values()), "candidate": list(candidate.values()),
                           "pairs": sorted(set(reference) & set(candidate)),
                           "higher_is_better": higher_is_better, "margin": margin, "confidence": confidence})
        if self.interrupt_after is not None and len(self.calls) > self.interrupt_after:
            raise KeyboardInterrupt
        n = min(len(reference), len(candidate))
        decided = self.decided_at is not None and n >= self.decided_at
        return Decision("SAME" if decided else "AMBIGUOUS")


def experiment(tmp_path, run_keys: str, patterns='["PAIR"]'):
    text = (write_experiment(tmp_path).read_text()
            .replace("repetitions = 2\n", run_keys + "\n", 1)
            .replace('patterns = ["PAIR", "PUBSUB"]', f"patterns = {patterns}")
            .replace("[profiles.quick]\nrepetitions = 1\n", "")
            .replace("verdicts = false", ""))
    return write_experiment(tmp_path, text)


def run(tmp_path, monkeypatch, fake: FakeDecide, exp, *extra: str) -> int:
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES) \
        if not (tmp_path / "libs.json").exists() else tmp_path / "libs.json"
    monkeypatch.setenv("TESTBED_PREBUILT", str(listing))
    monkeypatch.setenv("CI", "true")
    monkeypatch.setitem(sys.modules, "testbed.stats.decide", fake.module())
    parser = argparse.ArgumentParser()
    run_cmd.add_arguments(parser)
    args = parser.parse_args([str(exp), "--out", str(tmp_path / "out"), "--no-report",
                              "--seed", "3", *extra])
    return run_cmd.main(args)


def reps_per_cell(run_dir) -> Counter:
    return Counter(r["cell_id"] for r in read_results(run_dir))


def groups(run_dir) -> list[dict]:
    return json.loads((run_dir / "manifest.json").read_text())["summary"]["groups"]


def test_configurations_stop_once_decided(tmp_path, monkeypatch):
    fake = FakeDecide(decided_at=4)
    exp = experiment(tmp_path, "min_repetitions = 3\nmax_repetitions = 12\nmargin = 0.05")
    assert run(tmp_path, monkeypatch, fake, exp) == 0
    run_dir = only_run_dir(tmp_path / "out")
    # looks at 3, 5, 7, ... (look_every = 2): decidable from 4, seen at the look at 5
    assert set(reps_per_cell(run_dir).values()) == {5}
    assert {len(c["reference"]) for c in fake.calls} == {3, 5}
    # each look hands over both sides keyed by repetition, so the stats piece can pair
    # repetition i of the candidate with the reference's i, which ran back to back with it
    assert all(c["pairs"] == list(range(len(c["reference"]))) for c in fake.calls)
    assert fake.paired_plan is True
    assert {g["stop_reason"] for g in groups(run_dir)} == {"decided"}
    assert all(d["verdict"] == "SAME" for g in groups(run_dir) for d in g["decisions"])
    # decide saw the reference's and the candidate's own figures, each metric the right way up
    thr = [c for c in fake.calls if c["higher_is_better"]]
    lat = [c for c in fake.calls if not c["higher_is_better"]]
    assert thr and lat and all(c["margin"] == 0.05 and c["confidence"] == LOOK_CONFIDENCE for c in fake.calls)
    def sides(calls):
        return {(frozenset(c["reference"]), frozenset(c["candidate"])) for c in calls}
    # library comparisons (zlink against libzmq) and configuration comparisons (16 KiB
    # against the baseline, per library): both looked at, on the same repetitions
    assert sides(thr) == {(frozenset({1e6}), frozenset({2e6})), (frozenset({1e6}), frozenset({1e6})),
                          (frozenset({2e6}), frozenset({2e6}))}
    assert (frozenset({10.0}), frozenset({8.0})) in sides(lat)
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "complete" and m["summary"]["decided"]["throughput"] == {"decided": 4, "total": 4}
    assert m["summary"]["decided"]["throughput (configurations)"] == {"decided": 4, "total": 4}
    kinds = {d["kind"] for g in groups(run_dir) for d in g["decisions"]}
    assert kinds == {"library", "config"}


def test_a_declared_config_margin_judges_configuration_pairs_only(tmp_path, monkeypatch):
    """[run].config_margin is SAME's margin for configuration pairs; library pairs keep
    [run].margin (issue 32: the main job's question has its own effect size)."""
    fake = FakeDecide(decided_at=4)
    keys = "min_repetitions = 3\nmax_repetitions = 12\nmargin = 0.05\nconfig_margin = 0.1"
    exp = experiment(tmp_path, keys)
    assert run(tmp_path, monkeypatch, fake, exp) == 0
    # the fake libraries differ and their configurations do not: equal sides are a
    # configuration pair, unequal ones a library pair
    same = [c for c in fake.calls if c["reference"] == c["candidate"]]
    libs = [c for c in fake.calls if c["reference"] != c["candidate"]]
    assert same and libs
    assert {c["margin"] for c in libs} == {0.05}
    assert {c["margin"] for c in same} == {0.1}
    design = json.loads((only_run_dir(tmp_path / "out") / "manifest.json").read_text())["design"]
    assert (design["margin"], design["config_margin"]) == (0.05, 0.1)


def test_undecided_configurations_stop_at_their_cap(tmp_path, monkeypatch):
    exp = experiment(tmp_path, "min_repetitions = 3\nmax_repetitions = 6")
    assert run(tmp_path, monkeypatch, FakeDecide(decided_at=None), exp) == 0
    run_dir = only_run_dir(tmp_path / "out")
    assert set(reps_per_cell(run_dir).values()) == {6}
    assert {g["stop_reason"] for g in groups(run_dir)} == {"cap"}
    # interleaved: within each configuration the two libraries alternate who goes first
    recs = [r for r in read_results(run_dir) if r["pattern"] == "PAIR" and r["msg_size"] == 64
            and r["config"] == "baseline"]
    firsts = [recs[i]["library"] for i in range(0, len(recs), 2)]
    assert firsts == ["libzmq-4.3.5", "zlink"] * 3


def test_the_time_budget_stops_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_BENCH_SLEEP", "0.1")
    exp = experiment(tmp_path, "min_repetitions = 3\nmax_repetitions = 100\ntime_budget_s = 4")
    assert run(tmp_path, monkeypatch, FakeDecide(decided_at=None), exp) == 0
    run_dir = only_run_dir(tmp_path / "out")
    m = json.loads((run_dir / "manifest.json").read_text())
    assert {g["stop_reason"] for g in groups(run_dir)} == {"budget"}
    # The budget is checked before each batch, so everything spent before the last batch
    # (its runs and the host-speed reference pair measured around them) is under it and
    # the total is not. Checked from what the run recorded, not from how long the host
    # took: a bound in seconds failed twice on a loaded host. The summary rounds to 0.1 s.
    records = read_results(run_dir)
    speed_lines = [json.loads(ln) for ln in (run_dir / speedref.FILE_NAME).read_text().splitlines()]
    last = speed_lines[-1]  # written after its batch: the last line is the last batch's
    last_batch = [r for r in records
                  if r["cell_id"] in last["cell_ids"] and r["repetition"] == last["repetition"]]
    assert len(last_batch) == len(last["cell_ids"]) == 4  # 2 libraries x 2 configurations
    spent = sum(r["wall_seconds"] for r in records) + sum(map(speedref.seconds_of, speed_lines))
    before_last = spent - sum(r["wall_seconds"] for r in last_batch) - speedref.seconds_of(speed_lines[-1])
    assert abs(m["summary"]["spent_seconds"] - spent) <= 0.05
    assert before_last < 4 <= spent
    assert max(reps_per_cell(run_dir).values()) < 100


def test_a_design_that_cannot_decide_is_refused_or_raised(tmp_path, monkeypatch, capsys):
    exp = experiment(tmp_path, "min_repetitions = 2\nmax_repetitions = 4")
    assert run(tmp_path, monkeypatch, FakeDecide(decided_at=None, needed=5), exp) == 2
    err = capsys.readouterr().err
    assert "run.max_repetitions: adaptive cap 4 per side is below the 5 repetitions" in err
    assert "allowed: a larger cap" in err
    raised = experiment(tmp_path, "min_repetitions = 2\nmax_repetitions = 6")
    assert run(tmp_path, monkeypatch, FakeDecide(decided_at=None, needed=4), raised, "--dry-run") == 0
    assert "min_repetitions raised from 2 to 4" in capsys.readouterr().err
    fixed = experiment(tmp_path, "repetitions = 2")
    assert run(tmp_path, monkeypatch, FakeDecide(decided_at=None, needed=4), fixed) == 0
    assert "repetitions raised from 2 to 4" in capsys.readouterr().err
    run_dir = only_run_dir(tmp_path / "out")
    assert set(reps_per_cell(run_dir).values()) == {4}
    assert {g["stop_reason"] for g in groups(run_dir)} == {"fixed"}


def test_an_interrupted_adaptive_run_resumes_where_it_stopped(tmp_path, monkeypatch):
    exp = experiment(tmp_path, "min_repetitions = 3\nmax_repetitions = 10\nlook_every = 1")
    interrupted = FakeDecide(decided_at=6, interrupt_after=9)
    assert run(tmp_path, monkeypatch, interrupted, exp) == 130
    run_dir = only_run_dir(tmp_path / "out")
    before = read_results(run_dir)
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "interrupted"
    assert 0 < len(before) < 6 * 8
    assert run(tmp_path, monkeypatch, FakeDecide(decided_at=6), exp, "--resume", str(run_dir)) == 0
    after = read_results(run_dir)
    assert after[: len(before)] == before  # nothing measured was lost or redone
    keys = [(r["cell_id"], r["repetition"]) for r in after]
    assert len(keys) == len(set(keys))
    assert set(reps_per_cell(run_dir).values()) == {6}
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "complete" and len(m["sessions"]) == 2
    assert {g["stop_reason"] for g in groups(run_dir)} == {"decided"}


@pytest.mark.parametrize("window, lat_warmup_s", [(0.5, 0.0), (0.2, 0.3)])
def test_calibration_gives_every_library_the_reference_count(tmp_path, monkeypatch, window, lat_warmup_s):
    text = experiment(tmp_path, "repetitions = 3").read_text()
    exp = write_experiment(tmp_path, text.replace(
        "min_window_s = 0", f"min_window_s = {window}\nlat_warmup_s = {lat_warmup_s}"))
    assert run(tmp_path, monkeypatch, FakeDecide(decided_at=3), exp) == 0
    run_dir = only_run_dir(tmp_path / "out")
    recs = read_results(run_dir)
    cals = [json.loads(line) for line in (run_dir / "calibration.jsonl").read_text().splitlines()]
    # one calibration per block: both configurations of a size run the same counts
    assert len(cals) == len({r["block"] for r in recs}) == 2
    assert {c["library"] for c in cals} == {"libzmq-4.3.5"} and {c["status"] for c in cals} == {"calibrated"}
    for cal in cals:
        group = [r for r in recs if r["block"] == cal["group"]]
        assert {(r["count"], r["lat_count"]) for r in group} == {(cal["count"], cal["lat_count"])}
        assert {r["library"] for r in group} == {"libzmq-4.3.5", "zlink"}
        assert all(r["calibrated"] for r in group)
        # the reference's timed window (count / 1e6 msg/s) now lasts the target with headroom
        assert cal["count"] / 1e6 == pytest.approx(window * 1.2, rel=0.01)
        assert cal["lat_count"] * 2 * 10.0 / 1e6 == pytest.approx(window * 1.2, rel=0.01)
        assert len(cal["probes"]) == 2  # the 1 ms first window was too short to scale from
        # the latency warm-up: the bench's default count, or round trips lasting the target
        warmups = {r["result"]["latency"]["warmup"] for r in group}
        if lat_warmup_s:
            assert cal["lat_warmup"] * 2 * 10.0 / 1e6 == pytest.approx(lat_warmup_s * 1.2, rel=0.01)
            assert warmups == {cal["lat_warmup"]}
            assert {r["lat_warmup"] for r in group} == {cal["lat_warmup"]}
            assert {r["lat_warmup_s"] for r in group} == {lat_warmup_s}
        else:
            assert cal["lat_warmup"] is None and warmups == {100}


def test_with_the_stats_piece_decide_a_large_effect_is_decided_at_the_first_look(tmp_path, monkeypatch):
    """No fake here: the real testbed.stats.decide judges fake benches whose zlink is
    2x faster (and 20% quicker to answer) than libzmq, with 1% noise."""
    from testbed.stats import decide as real
    fakes = {lib: {**figures, "fake_noise": 0.01} for lib, figures in FAKES.items()}
    make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, fakes)
    exp = experiment(tmp_path, "min_repetitions = 3\nmax_repetitions = 12")
    fake = FakeDecide(None)
    fake.module = lambda: real  # run() installs "the module": here the real one
    assert run(tmp_path, monkeypatch, fake, exp) == 0
    run_dir = only_run_dir(tmp_path / "out")
    # the looks are planned for, and judged by, the paired test the report will use
    plan = real.adaptive_design(12, 2, confidence=0.95, paired=True)
    assert plan.start > real.adaptive_design(12, 2, confidence=0.95).start
    # the library comparisons are FAST at the first look; the configurations (the same
    # fake figures) need SAME, which the fake bench's unseeded 1% noise may take one or
    # two more looks to show (9 and 11 pairs seen on 2026-11-28): never the cap
    assert set(reps_per_cell(run_dir).values()) <= {plan.start, plan.start + 2, plan.start + 4}
    assert plan.start + 4 < plan.cap
    for g in groups(run_dir):
        assert g["stop_reason"] == "decided"
        libs = [d for d in g["decisions"] if d["kind"] == "library"]
        configs = [d for d in g["decisions"] if d["kind"] == "config"]
        assert {d["verdict"] for d in libs} == {"FAST"} and {d["verdict"] for d in configs} == {"SAME"}
        assert {d["method"] for d in g["decisions"]} == {real.PAIRED_METHOD}
        assert {d["metric"] for d in g["decisions"]} == {"throughput", "p50_latency"}  # no [run].stop_on
        thr = next(d for d in libs if d["metric"] == "throughput")
        assert 1.9 < thr["ratio"] < 2.1 and thr["confidence"] == pytest.approx(plan.look_confidence)


def test_with_p99_in_stop_on_the_loop_judges_each_repetitions_p99_paired(tmp_path, monkeypatch):
    """No fake decide: zlink is 2x faster and quicker at p50 but its p99 is 50% worse
    (30 vs 20 us). With [run].stop_on naming p99_latency the loop judges the per-
    repetition p99 by the paired test, records it, the sweep's summary counts it, and
    ./testbed rejudge reproduces it. Removing the p99 path anywhere on the way fails here."""
    from testbed.results import rejudge
    from testbed.stats import decide as real
    fakes = {lib: {**figures, "fake_noise": 0.01, "fake_p99_us": 20.0 if lib == "libzmq-4.3.5" else 30.0}
             for lib, figures in FAKES.items()}
    make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, fakes)
    exp = experiment(tmp_path, 'min_repetitions = 3\nmax_repetitions = 12\n'
                               'stop_on = ["throughput", "p50_latency", "p99_latency"]')
    fake = FakeDecide(None)
    fake.module = lambda: real
    assert run(tmp_path, monkeypatch, fake, exp) == 0
    run_dir = only_run_dir(tmp_path / "out")
    for g in groups(run_dir):
        assert g["stop_reason"] == "decided"
        tail = {(d["kind"], d["verdict"]) for d in g["decisions"] if d["metric"] == "p99_latency"}
        assert tail == {("library", "SLOW"), ("config", "SAME")}
        assert {d["method"] for d in g["decisions"]} == {real.PAIRED_METHOD}
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["design"]["stop_on"] == ["throughput", "p50_latency", "p99_latency"]
    assert m["summary"]["decided"]["p99_latency"] == {"decided": 4, "total": 4}
    agreement, _ = rejudge.rejudge(run_dir)
    assert agreement.ok and agreement.checked == sum(len(g["decisions"]) for g in groups(run_dir))
    # the repetitions' histograms merge into one per cell: every round trip, and a pooled
    # p99 among the repetitions' own
    from testbed.results import explore
    pooled = explore.tail(explore.open_run(run_dir))
    recs = read_results(run_dir)
    assert len(pooled) == len({r["cell_id"] for r in recs}) == 8
    assert pooled["round_trips"].sum() == sum(r["lat_count"] for r in recs)
    for _, row in pooled.iterrows():
        key = (row["library"], row["config"], row["msg_size"])
        own = [r["result"]["latency"]["p99"] for r in recs
               if (r["library"], r["config"], r["msg_size"]) == key]
        assert min(own) * (1 - 1 / 128) <= row["pooled_p99_us"] <= max(own) * (1 + 1 / 128)
    # the report shows each SLOW p99 cell whole: both libraries' pooled round trips and
    # their curves (the pools found through the report's own tables, not the records)
    from testbed.results import report
    text = report.render_run(run_dir, tmp_path / "report").read_text()
    section = text.split("## The latency calls against the candidate, shown whole")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in section.splitlines()
            if line.startswith("| ") and "Round trips" not in line]
    assert len(rows) == 8, section  # 4 cells SLOW at p99, two libraries each
    trips = {(r["library"], r["config"], r["msg_size"]): 0 for r in recs}
    for r in recs:
        trips[(r["library"], r["config"], r["msg_size"])] += r["lat_count"]
    assert sorted(int(row[3].replace(",", "")) for row in rows) == sorted(trips.values())
    assert all("latency p99 -" in row[1] for row in rows[::2])
    assert (tmp_path / "report" / "figures" / "latency-shapes.svg").stat().st_size > 0


def test_the_summary_counts_verdicts_per_candidate_and_the_aa_false_call_rate():
    from testbed.sweep import summary
    from testbed.sweep.adaptive import Group

    def group(*verdicts):
        return Group("g", [], decisions=[{"candidate": c, "metric": m, "verdict": v} for c, m, v in verdicts])
    groups = [group(("B", "throughput", "SAME"), ("B", "p50_latency", "FAST"),
                    ("zlink", "throughput", "SLOW")),
              group(("B", "throughput", "SAME"), ("B", "p50_latency", "AMBIGUOUS"),
                    ("zlink", "throughput", "SLOW"))]
    out = summary.verdicts_by_candidate(groups, {"B"})
    assert out["B"]["aa"] and out["B"]["comparisons"] == 4 and out["B"]["false_calls"] == 1
    assert out["B"]["false_call_rate"] == 0.25
    assert not out["zlink"]["aa"] and out["zlink"]["metrics"] == {"throughput": {"SLOW": 2}}
