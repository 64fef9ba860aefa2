"""`./testbed bisect CELL GOOD BAD`: the first commit between GOOD and BAD at which
zlink's verdict in one cell changes (the search: sweep/bisect.py; one step:
sweep/bisect_step.py).

Everything measured is kept: results/bisect/<id>/bisect.json (the inputs, the
candidates, every step so far and the outcome, rewritten after every step) and one
ordinary run directory per step under steps/. `--resume DIR` reuses the steps that
finished (a step interrupted half-way runs again; its partial data stays on disk).

Exit status: 0 found; 1 undecided, or no change between GOOD and BAD; 2 bad input;
130 interrupted.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from datetime import UTC, datetime
from pathlib import Path

from testbed import paths
from testbed.sweep import bisect, bisect_step, config
from testbed.sweep.bisect import BisectError, Outcome, Revision, Step
from testbed.sweep.config import ExperimentError

FILE_NAME = "bisect.json"
DEFAULT_EXPERIMENT = "scorecard"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cell", metavar="CELL",
                        help="KEY=VALUE,... naming one cell of the experiment, as ./testbed history "
                             "--cell (keys: " + ", ".join(bisect_step.CELL_KEYS) + "; metric= the verdict to "
                             "follow, default throughput), e.g. pattern=PAIR,transport=tcp,msg_size=64")
    parser.add_argument("good", metavar="GOOD", help="a revision with the old verdict (commit, tag, branch)")
    parser.add_argument("bad", metavar="BAD", help="a later revision with the new verdict")
    parser.add_argument("--experiment", default=DEFAULT_EXPERIMENT,
                        help=f"whose cell and design ([run]) to use (default {DEFAULT_EXPERIMENT}); a name "
                             "under experiments/ or a path to an experiment.toml")
    parser.add_argument("--profile", default="default", choices=config.PROFILE_NAMES,
                        help="the experiment's profile (default: default)")
    parser.add_argument("--out", type=Path, default=None, help="results root (default results/)")
    parser.add_argument("--seed", type=int, default=None, help="order seed of every step (default random)")
    parser.add_argument("--resume", type=Path, default=None, metavar="DIR",
                        help="a bisection directory to continue: its finished steps are reused")


def say(text: str) -> None:
    print(f"testbed bisect: {text}", file=sys.stderr, flush=True)


def main(args: argparse.Namespace) -> int:
    try:
        good, bad, changes = bisect.candidates(args.good, args.bad, paths.REPO_ROOT)
        plan = bisect_step.plan_cell(args.experiment, args.profile, args.cell, good.commit, bad.commit)
        record = Record.open(args, good, bad, changes, plan)
    except (BisectError, ExperimentError, ValueError) as exc:
        say(str(exc))
        return 2
    steps = math.ceil(math.log2(len(changes))) + 1 if len(changes) > 1 else 1
    say(f"{plan.label}, {plan.metric}: GOOD {good.short} .. BAD {bad.short}: {len(changes)} commits change "
        f"zlink/, at most {steps} steps; everything measured goes to {record.dir}")
    try:
        outcome = bisect.search(changes, record.measure, record.add)
    except KeyboardInterrupt:
        outcome = Outcome("interrupted", why="interrupted; continue with --resume " + str(record.dir))
    record.finish(outcome)
    print(table(record.steps))
    print(outcome_text(outcome, good))
    return {"found": 0, "interrupted": 130}.get(outcome.status, 1)


class Record:
    """bisect.json and the step directories of one bisection."""

    def __init__(self, directory: Path, doc: dict, plan, seed: int | None, reuse: dict[str, dict]):
        self.dir, self.doc, self.plan, self.seed, self.reuse = directory, doc, plan, seed, reuse
        self.steps: list[Step] = []

    @classmethod
    def open(cls, args, good: Revision, bad: Revision, changes: list[Revision], plan) -> Record:
        inputs = {"cell": args.cell, "good": args.good, "bad": args.bad, "good_commit": good.commit,
                  "bad_commit": bad.commit, "experiment": str(plan.exp.path), "profile": args.profile,
                  "metric": plan.metric, "cell_label": plan.label}
        reuse: dict[str, dict] = {}
        earlier: list = []
        if args.resume:
            doc = _read(args.resume)
            for key in ("cell", "good_commit", "bad_commit", "experiment", "profile"):
                if doc["inputs"].get(key) != inputs[key]:
                    raise BisectError(f"--resume {args.resume}: its {key} is {doc['inputs'].get(key)!r}, "
                                      f"not {inputs[key]!r}; resume with the same CELL GOOD BAD and options")
            reuse = {s["revision"]["commit"]: s for s in doc.get("steps", []) if s.get("verdict")}
            # The steps as the last session left them stay on record until reused.
            earlier = [*doc.get("earlier_steps", []), doc.get("steps", [])]
            directory = args.resume
        else:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            name = f"{stamp}-{good.short[:7]}-{bad.short[:7]}"
            directory = (args.out or paths.RESULTS_DIR) / "bisect" / name
            directory.mkdir(parents=True)
        doc = {"inputs": inputs, "candidates": [vars(c) for c in changes], "steps": [], "status": "running",
               **({"earlier_steps": earlier} if earlier else {})}
        record = cls(directory, doc, plan, args.seed, reuse)
        record.save()
        return record

    def measure(self, revision: Revision, role: str) -> Step:
        n = len(self.steps) + 1
        done = self.reuse.get(revision.commit)
        if done:
            say(f"step {n}: {role} {revision.short} {revision.subject!r}: reused from {done['run_dir']}")
            kept = {k: v for k, v in done.items() if k not in ("revision", "role", "side")}
            return Step(revision, role, **kept)
        say(f"step {n}: {role} {revision.short} {revision.subject!r}: building and running it against GOOD")
        run_dir = self.dir / "steps" / f"{n:02d}-{revision.short}"
        if run_dir.exists():  # an interrupted attempt: keep its data beside the new one
            run_dir = run_dir.with_name(f"{run_dir.name}-{datetime.now(UTC).strftime('%H%M%S')}")
        return bisect_step.measure(self.plan, revision, role, run_dir, self.seed)

    def add(self, step: Step) -> None:
        self.steps.append(step)
        say(f"step {len(self.steps)}: {step.revision.short}: {step.verdict or 'no verdict'} "
            f"{_interval(step)} ({step.pairs} pairs) -> {step.side}{': ' + step.note if step.note else ''}")
        self.save()

    def finish(self, outcome: Outcome) -> None:
        self.doc["status"] = outcome.status
        self.doc["outcome"] = {"status": outcome.status, "why": outcome.why,
                               "first_bad": vars(outcome.first_bad) if outcome.first_bad else None,
                               "last_good": vars(outcome.last_good) if outcome.last_good else None,
                               "open_range": [vars(r) for r in outcome.open_range]}
        self.save()

    def save(self) -> None:
        self.doc["steps"] = [s.as_json() for s in self.steps]
        tmp = self.dir / (FILE_NAME + ".tmp")
        tmp.write_text(json.dumps(self.doc, indent=1) + "\n")
        tmp.replace(self.dir / FILE_NAME)


def _read(directory: Path) -> dict:
    try:
        return json.loads((directory / FILE_NAME).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise BisectError(f"--resume {directory}: no readable {FILE_NAME} ({exc})") from None


def _interval(step: Step) -> str:
    if step.ratio is None:
        return "-"
    return f"{step.ratio:.3f} [{step.low:.3f}, {step.high:.3f}]"


def table(steps: list[Step]) -> str:
    head = ["step", "role", "commit", "subject", "verdict vs GOOD", "ratio [CI] (> 1 = revision better)",
            "pairs", "side"]
    rows = [[str(i), s.role, s.revision.short, s.revision.subject[:48], s.verdict or "-", _interval(s),
             str(s.pairs), s.side] for i, s in enumerate(steps, 1)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def outcome_text(outcome: Outcome, good: Revision) -> str:
    if outcome.status == "found":
        before = outcome.last_good.short if outcome.last_good else f"GOOD {good.short}"
        first = outcome.first_bad
        return (f"first commit with the new verdict: {first.commit} {first.subject!r} "
                f"(the last with GOOD's: {before})")
    if outcome.status == "undecided":
        span = ", ".join(r.short for r in outcome.open_range)
        return f"undecided: {outcome.why}; the change is in one of: {span or '-'}"
    return f"{outcome.status}: {outcome.why}"
