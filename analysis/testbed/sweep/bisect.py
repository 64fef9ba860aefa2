"""Bisection over zlink's history: which commit between GOOD and BAD changed a cell's
verdict? (`./testbed bisect`, sweep/bisect_cmd.py runs it.)

Only commits that change zlink/ can change a verdict: the bench, its flags and the
baselines are the working tree's for every revision (zlink@REV builds the revision's
zlink/ only). So the candidates are the commits on BAD's first-parent line after GOOD
whose zlink/ tree differs from their parent's; the others share a build with one of
them.

Every tested revision is compared with GOOD (paired, interleaved, the adaptive
decide of testbed.stats). BAD is measured first: its verdict against GOOD is the
change to look for (SAME: nothing changed, nothing to bisect). A midpoint whose
verdict is SAME lies before the change, one with BAD's verdict at or after it. Any
other verdict (AMBIGUOUS, or a different change, say FAST while BAD is SLOW) stops
the search as undecided, naming the range still open: a guess would send every later
step down a side nobody measured.
"""
from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from testbed.toolchain import zlink_revision

SAME = "SAME"
DECISIVE = ("FAST", "SLOW")


class BisectError(ValueError):
    """Bad input to a bisection (a revision, a range, a cell); names it."""


@dataclass(frozen=True)
class Revision:
    commit: str
    tree: str      # git's id of COMMIT:zlink
    subject: str

    @property
    def short(self) -> str:
        return self.commit[:12]


@dataclass
class Step:
    """One tested revision: its verdict against GOOD and which side that puts it on."""
    revision: Revision
    role: str                      # "bad" (BAD itself, first) or "midpoint"
    verdict: str = ""              # FAST / SLOW / SAME / AMBIGUOUS, or "" when not measured
    ratio: float | None = None     # > 1: the revision better than GOOD (throughput up, latency down)
    low: float | None = None
    high: float | None = None
    pairs: int = 0
    side: str = ""                 # "good", "bad", or "undecided"
    note: str = ""
    run_dir: str = ""

    def as_json(self) -> dict:
        return {**asdict(self), "revision": asdict(self.revision)}


@dataclass
class Outcome:
    status: str                    # "found", "undecided", "no-change", "interrupted"
    first_bad: Revision | None = None
    last_good: Revision | None = None
    open_range: list[Revision] = field(default_factory=list)  # still possible when undecided
    why: str = ""


def _git(repo: Path, *argv: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *argv], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise BisectError(f"git {' '.join(argv)} failed in {repo}: {done.stderr.strip()}")
    return done.stdout


def resolve(revision: str, what: str, repo: Path) -> zlink_revision.Revision:
    try:
        return zlink_revision.resolve(f"zlink{zlink_revision.SEPARATOR}{revision}", repo)
    except zlink_revision.RevisionError as exc:
        raise BisectError(f"{what}: {exc}") from None


def candidates(good: str, bad: str, repo: Path) -> tuple[Revision, Revision, list[Revision]]:
    """(GOOD, BAD, the commits after GOOD up to BAD that change zlink/, oldest first;
    the last one has BAD's zlink tree)."""
    g, b = resolve(good, "GOOD", repo), resolve(bad, "BAD", repo)
    if g.commit == b.commit:
        raise BisectError(f"GOOD and BAD are the same commit ({g.commit[:12]}): nothing to bisect")
    line = _git(repo, "rev-list", "--first-parent", b.commit).split()
    if g.commit not in line:
        raise BisectError(f"GOOD {good!r} ({g.commit[:12]}) is not on the first-parent line of BAD {bad!r} "
                          f"({b.commit[:12]}); allowed: GOOD an ancestor of BAD along its first parents")
    commits = list(reversed(line[:line.index(g.commit)]))
    out, previous = [], g.tree
    for commit in commits:
        tree = _tree(repo, commit)
        if tree is None:
            raise BisectError(f"commit {commit[:12]} between GOOD and BAD has no zlink/ folder: zlink cannot "
                              "be built there; choose GOOD after it")
        if tree != previous:
            out.append(Revision(commit, tree, _git(repo, "log", "-1", "--format=%s", commit).strip()))
        previous = tree
    if not out:
        raise BisectError(f"zlink/ is the same at GOOD ({g.commit[:12]}) and BAD ({b.commit[:12]}): "
                          "one build, no change to find")
    return Revision(g.commit, g.tree, "GOOD"), Revision(b.commit, b.tree, "BAD"), out


def _tree(repo: Path, commit: str) -> str | None:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{commit}:zlink"],
                          capture_output=True, text=True, timeout=60)
    return done.stdout.strip() if done.returncode == 0 else None


def search(changes: list[Revision], measure: Callable[[Revision, str], Step],
           on_step: Callable[[Step], None]) -> Outcome:
    """Bisect `changes` (oldest first; GOOD before the first, the last one BAD).
    measure(revision, role) compares it with GOOD; on_step sees every step (and
    writes it down) before the next one starts."""
    bad = _classify(measure(changes[-1], "bad"), None)
    on_step(bad)
    if bad.verdict == SAME:
        return Outcome("no-change", why=f"BAD is SAME as GOOD ({_ratio_text(bad)}): no verdict changed")
    if bad.verdict not in DECISIVE:
        return Outcome("undecided", open_range=list(changes),
                       why=f"BAD against GOOD is {bad.verdict or 'not measured'}"
                           f"{': ' + bad.note if bad.note else ''}: there is no change to look for")
    lo, hi = -1, len(changes) - 1       # changes[lo] known good (-1: GOOD), changes[hi] known bad
    while hi - lo > 1:
        mid = (lo + hi) // 2
        step = _classify(measure(changes[mid], "midpoint"), bad.verdict)
        on_step(step)
        if step.side == "good":
            lo = mid
        elif step.side == "bad":
            hi = mid
        else:
            return Outcome("undecided", last_good=changes[lo] if lo >= 0 else None,
                           open_range=changes[lo + 1:hi + 1],
                           why=f"{step.revision.short} is {step.verdict or 'not measured'} against GOOD, "
                               f"neither SAME nor BAD's {bad.verdict}{': ' + step.note if step.note else ''}")
    return Outcome("found", first_bad=changes[hi], last_good=changes[lo] if lo >= 0 else None)


def _classify(step: Step, target: str | None) -> Step:
    if step.verdict == SAME:
        step.side = "good"
    elif target is None and step.verdict in DECISIVE or step.verdict == target:
        step.side = "bad"
    else:
        step.side = "undecided"
    return step


def _ratio_text(step: Step) -> str:
    if step.ratio is None:
        return "no ratio"
    return f"ratio {step.ratio:.3f} [{step.low:.3f}, {step.high:.3f}]"
