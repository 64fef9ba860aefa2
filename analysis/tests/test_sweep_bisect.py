"""`./testbed bisect`'s pieces without building anything: the search (sweep/bisect.py)
over a scripted measure, the candidates in a tiny git repository, and the CELL
argument against the scorecard (sweep/bisect_step.py). The end-to-end bisection of a
real slowdown is tests/test_bisect_slowdown.py."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from testbed.sweep import bisect, bisect_step
from testbed.sweep.bisect import BisectError, Revision, Step

REVS = [Revision(f"{i:040x}", f"t{i}", name) for i, name in enumerate("BCDEFG", 1)]


def _scripted(verdicts: dict[str, str]):
    asked: list[str] = []

    def measure(rev: Revision, role: str) -> Step:
        asked.append(rev.subject)
        ratio = {"SAME": 1.0, "SLOW": 0.5, "FAST": 2.0}.get(verdicts[rev.subject], 1.1)
        return Step(rev, role, verdict=verdicts[rev.subject], ratio=ratio, low=ratio, high=ratio, pairs=8)
    return measure, asked


@pytest.mark.parametrize("first_bad", list("BCDEFG"))
def test_search_finds_the_first_slow_commit(first_bad):
    verdicts = {r.subject: ("SLOW" if r.subject >= first_bad else "SAME") for r in REVS}
    measure, asked = _scripted(verdicts)
    seen: list[Step] = []
    out = bisect.search(REVS, measure, seen.append)
    assert out.status == "found" and out.first_bad.subject == first_bad
    assert asked[0] == "G" and len(asked) <= 4  # BAD first, then log2(6) rounded up midpoints
    assert [s.side for s in seen] == ["bad" if verdicts[a] == "SLOW" else "good" for a in asked]


def test_a_midpoint_that_does_not_decide_stops_the_search_undecided():
    measure, asked = _scripted({"B": "SAME", "C": "SAME", "D": "AMBIGUOUS", "E": "SLOW", "F": "SLOW",
                                "G": "SLOW"})
    out = bisect.search(REVS, measure, lambda s: None)
    assert asked == ["G", "D"]  # no step after the undecided one: nothing is guessed
    assert out.status == "undecided" and out.first_bad is None
    assert [r.subject for r in out.open_range] == list("BCDEFG") and "AMBIGUOUS" in out.why


def test_a_different_change_is_undecided_not_a_side():
    measure, asked = _scripted({"B": "SAME", "C": "SAME", "D": "FAST", "E": "SLOW", "F": "SLOW", "G": "SLOW"})
    out = bisect.search(REVS, measure, lambda s: None)
    assert out.status == "undecided" and "neither SAME nor BAD's SLOW" in out.why


@pytest.mark.parametrize("bad_verdict,status", [("SAME", "no-change"), ("AMBIGUOUS", "undecided")])
def test_bad_without_a_decided_change_ends_before_any_midpoint(bad_verdict, status):
    measure, asked = _scripted({r.subject: bad_verdict for r in REVS})
    assert bisect.search(REVS, measure, lambda s: None).status == status
    assert asked == ["G"]


def _git(repo: Path, *argv: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                           *argv], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    made = {}
    for name, files in [("A", {"zlink/a.cpp": "1"}), ("docs", {"README": "x"}), ("B", {"zlink/a.cpp": "2"}),
                        ("C", {"zlink/b.cpp": "3"})]:
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", name)
        made[name] = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-q", "-b", "side", made["A"])
    (root / "zlink/a.cpp").write_text("side")
    _git(root, "commit", "-qam", "side")
    made["side"] = _git(root, "rev-parse", "HEAD")
    return root, made


def test_candidates_are_the_commits_that_change_zlink(repo):
    root, made = repo
    good, bad, changes = bisect.candidates("main~3", "main", root)
    assert (good.commit, bad.commit) == (made["A"], made["C"])
    assert [c.subject for c in changes] == ["B", "C"]  # the docs-only commit shares A's build


@pytest.mark.parametrize("good,bad,message", [
    ("nope", "main", "GOOD: zlink@nope: unknown revision 'nope'"),
    ("main", "main", "the same commit"),
    ("side", "main", "not on the first-parent line of BAD"),
    ("main~3", "main~2", "zlink/ is the same at GOOD"),
])
def test_bad_ranges_are_named(repo, good, bad, message):
    with pytest.raises(BisectError, match=message):
        bisect.candidates(good, bad, repo[0])


GOOD, BAD = "1" * 40, "2" * 40


def test_cell_names_one_cell_of_the_experiment():
    plan = bisect_step.plan_cell("scorecard", "quick", "pattern=PAIR,msg_size=64,metric=lat_p50_us", GOOD,
                                 BAD)
    assert plan.metric == "p50_latency" and plan.exp.mode == "lat"
    assert plan.exp.design.stop_on == ("p50_latency",) and plan.exp.design.verdicts
    assert plan.label.startswith("PAIR tcp 64B")
    assert [e.name for e in plan.exp.libraries] == [f"zlink@{GOOD}", f"zlink@{BAD}"]


@pytest.mark.parametrize("cell,message", [
    ("pattern=PAIR", r"matches 2 cells .* add msg_size in \{64, 262144\}"),
    ("pattern=PUBSUB,msg_size=64", r"matches no cell .* pattern in \{PAIR, ROUTER_ROUTER\}"),
    ("size=64", "not KEY=VALUE with KEY one of pattern"),
    ("pattern=PAIR,msg_size=64,metric=speed", "metric=speed is not one of"),
])
def test_bad_cells_are_named_with_the_choices(cell, message):
    with pytest.raises(BisectError, match=message):
        bisect_step.plan_cell("scorecard", "quick", cell, GOOD, BAD)


def test_resume_reuses_finished_steps_and_refuses_other_inputs(tmp_path, monkeypatch):
    from argparse import Namespace

    from testbed.sweep import bisect_cmd
    plan = bisect_step.plan_cell("scorecard", "quick", "pattern=PAIR,msg_size=64", GOOD, BAD)
    good, bad = Revision(GOOD, "tg", "GOOD"), Revision(BAD, "tb", "BAD")
    args = Namespace(cell="pattern=PAIR,msg_size=64", good="g", bad="b", profile="quick", seed=1, resume=None,
                     out=tmp_path)
    first = bisect_cmd.Record.open(args, good, bad, [bad], plan)
    first.add(Step(bad, "bad", verdict="SLOW", ratio=0.5, low=0.4, high=0.6, pairs=7, side="bad",
                   run_dir="steps/01"))

    def no_measuring(*a, **k):
        raise AssertionError("a finished step was measured again")
    monkeypatch.setattr(bisect_step, "measure", no_measuring)
    again = bisect_cmd.Record.open(Namespace(**{**vars(args), "resume": first.dir}), good, bad, [bad], plan)
    step = again.measure(bad, "bad")
    assert (step.verdict, step.ratio, step.pairs, step.run_dir) == ("SLOW", 0.5, 7, "steps/01")
    assert again.doc["earlier_steps"][0][0]["verdict"] == "SLOW"  # on record until re-added
    with pytest.raises(BisectError, match="its cell is"):
        bisect_cmd.Record.open(Namespace(**{**vars(args), "resume": first.dir, "cell": "pattern=PAIR"}),
                               good, bad, [bad], plan)
