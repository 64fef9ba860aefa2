"""The generated answer blocks in the checkout's markdown: each experiment README opens
with its current answer, and README.md, zlink/README.md and docs/profiling/README.md
quote answers in bullet blocks. `./testbed regenerate` rewrites the text between the
markers from the current runs' reports; `--check` fails where a block differs, so a
hand-edited answer, or one a newer run (or a changed toml: "stale") has overtaken,
cannot stay in a README.

    <!-- BEGIN generated answer -->            an experiment README: every experiment of
    ...                                        its folder (experiment.toml first)
    <!-- END generated answer -->
    <!-- BEGIN generated answers: scorecard perf-tools -->    anywhere in CLAIM_FILES:
    ...                                                      one bullet per experiment named
    <!-- END generated answers -->
"""
from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from testbed.records import answer_spec, run_status
from testbed.records.freshness import Freshness

from .report import REPORT_NAME, RunSummary
from .run_settings import line as settings_line

CLAIM_FILES = ("README.md", "zlink/README.md", "docs/profiling/README.md")
EXPERIMENT_README = "README.md"
NOTE = "(./testbed regenerate writes this from reports/; edit the experiment's [answer], not this text)"
BEGIN_ANSWER = f"<!-- BEGIN generated answer {NOTE} -->"
END_ANSWER = "<!-- END generated answer -->"
BEGIN_ANSWERS = re.compile(r"^( *)<!-- BEGIN generated answers: ([a-z0-9 _-]+?) -->", re.M)
END_ANSWERS = "<!-- END generated answers -->"


class BlockError(ValueError):
    """A marker the generator cannot honour: names the file and what is wrong."""


@dataclass(frozen=True)
class Current:
    """What a block says of one experiment: its newest run (None: no published run),
    whether that run is stale, and the toml's question."""
    experiment: str
    question: str
    summary: RunSummary | None
    freshness: Freshness | None
    run_as: str = ""    # what `./testbed run` takes for it: the folder, or the toml's path
    fault_run: FaultRun | None = None   # the fault runner's newest published report, if any


@dataclass(frozen=True)
class FaultRun:
    """A published run of the fault runner (faults, faults-soak): no manifest.json and no
    RunSummary, but a report.md whose "## Verdict" bullets are its answer."""
    run_id: str
    report: Path
    verdict: list[str]


def fault_run(reports_dir: Path, experiment: str) -> FaultRun | None:
    """The current published fault-runner run of `experiment` (records/run_status.py)."""
    runs = run_status.fault_runs(reports_dir, experiment)
    if not runs:
        return None
    report = run_status.fault_report(runs[-1])
    lines, inside = [], False
    for line in report.read_text().splitlines():
        if line.startswith("## "):
            inside = line.strip() == "## Verdict"
        elif inside and line.startswith("- "):
            lines.append(line[2:])
    return FaultRun(runs[-1].name, report, lines)


def _link(current: Current, md_file: Path, reports_dir: Path) -> str:
    s = current.summary
    target = Path(reports_dir) / s.experiment / s.run_id / REPORT_NAME
    rel = Path(os.path.relpath(target, Path(md_file).parent)).as_posix()
    return f"[{s.run_id}]({rel})"


def _fault_link(run: FaultRun, md_file: Path) -> str:
    rel = Path(os.path.relpath(run.report, Path(md_file).parent)).as_posix()
    return f"[{run.run_id}]({rel})"


def _no_run(current: Current) -> str:
    return (f"no published run yet (`./testbed run {current.run_as or current.experiment}`, then "
            f"`./testbed report results/{current.experiment}/<run-id> --publish`)")


def answer_section(currents: list[Current], md_file: Path, reports_dir: Path) -> list[str]:
    """The "Current answer" block of an experiment README."""
    lines = [BEGIN_ANSWER, "## Current answer", ""]
    for c in currents:
        if len(currents) > 1:
            lines += [f"### {c.experiment}", ""]
        lines += [f"**Question.** {c.question}", ""]
        if c.summary is None and c.fault_run is not None:
            lines += [f"Run {_fault_link(c.fault_run, md_file)} (the fault runner's report; its "
                      "verdict, copied from it):", "", *(f"- {v}" for v in c.fault_run.verdict), ""]
            continue
        if c.summary is None:
            lines += [f"No answer: {_no_run(c)}.", ""]
            continue
        s = c.summary
        lines += [f"Run {_link(c, md_file, reports_dir)} ({s.profile} profile). "
                  f"Settings, from its records: {settings_line(s.settings)}.", ""]
        if c.freshness and c.freshness.stale:
            lines += [c.freshness.text(), ""]
        lines += [s.answer.sentence, ""]
    return lines[:-1] + [END_ANSWER]


def bullet(c: Current, md_file: Path, reports_dir: Path) -> str:
    """One experiment's answer as a bullet: run, settings, staleness, sentence."""
    if c.summary is None and c.fault_run is not None:
        return (f"- **{c.experiment}** (run {_fault_link(c.fault_run, md_file)}, the fault runner's report): "
                + "; ".join(c.fault_run.verdict))
    if c.summary is None:
        return f"- **{c.experiment}**: {_no_run(c)}."
    stale = f" {c.freshness.text()}" if c.freshness and c.freshness.stale else ""
    return (f"- **{c.experiment}** (run {_link(c, md_file, reports_dir)}, {c.summary.profile} profile; "
            f"{settings_line(c.summary.settings)}):{stale} {c.summary.answer.sentence}")


def folder_experiments(folder: Path) -> list[str]:
    """The experiments a folder's tomls declare: experiment.toml's first."""
    tomls = sorted(Path(folder).glob("*.toml"), key=lambda p: (p.name != "experiment.toml", p.name))
    names = []
    for toml in tomls:
        name = tomllib.loads(toml.read_text()).get("experiment", {}).get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def _replace(text: str, start: int, begin: str, end: str, body: list[str], path: Path) -> tuple[str, int]:
    """text with the block whose `begin` marker is at `start` (through its `end`
    marker) replaced by body; and where the replacement ends."""
    stop = text.find(end, start + len(begin))
    if stop < 0:
        raise BlockError(f"{path}: `{begin.strip()}` without `{end}` after it")
    block = "\n".join(body)
    return text[:start] + block + text[stop + len(end):], start + len(block)


def with_answer(text: str, body: list[str], path: Path) -> str:
    """The README with its answer block replaced, or inserted under its title."""
    if BEGIN_ANSWER in text:
        return _replace(text, text.index(BEGIN_ANSWER), BEGIN_ANSWER, END_ANSWER, body, path)[0]
    if "<!-- BEGIN generated answer " in text:
        raise BlockError(f"{path}: a 'BEGIN generated answer' marker that is not `{BEGIN_ANSWER}`")
    title, _, rest = text.partition("\n")
    if not title.startswith("# "):
        raise BlockError(f"{path}: no '# title' on its first line to put the answer under")
    return f"{title}\n\n" + "\n".join(body) + "\n\n" + rest.lstrip("\n")


def with_bullets(text: str, currents: dict[str, Current], path: Path, reports_dir: Path) -> str:
    """Every `BEGIN generated answers: NAME...` block of text, rewritten (its bullets as
    indented as its marker)."""
    at = 0
    while match := BEGIN_ANSWERS.search(text, at):
        indent, names = match.group(1), match.group(2).split()
        unknown = [n for n in names if n not in currents]
        if unknown:
            raise BlockError(f"{path}: generated answers name {', '.join(unknown)}, which no toml under "
                             "experiments/ declares and no published run has; known: "
                             f"{', '.join(sorted(currents))}")
        # An indented marker nests its bullets in the list item it sits in.
        body = [match.group(0)] + [indent + bullet(currents[n], path, reports_dir) for n in names] \
            + [indent + END_ANSWERS]
        text, at = _replace(text, match.start(), match.group(0), END_ANSWERS, body, path)
    return text


def claim_files(root: Path) -> list[Path]:
    """The files whose generated blocks regenerate keeps current (those that exist)."""
    root = Path(root)
    files = [root / f for f in CLAIM_FILES] + sorted((root / "experiments").glob(f"*/{EXPERIMENT_README}"))
    return [f for f in files if f.is_file()]


def check_markers(root: Path, known: set[str]) -> None:
    """Raise BlockError for a marker that names an experiment nobody declares or ran."""
    for path in claim_files(root):
        for match in BEGIN_ANSWERS.finditer(path.read_text()):
            unknown = [n for n in match.group(2).split() if n not in known]
            if unknown:
                raise BlockError(f"{path}: generated answers name {', '.join(unknown)}, which no toml under "
                                 f"experiments/ declares and no published run has; known: "
                                 f"{', '.join(sorted(known))}")


def currents(summaries: dict[str, RunSummary], fresh: dict[str, Freshness], experiments_dir: Path,
             reports_dir: Path | None = None) -> dict:
    """Every experiment a toml declares, and every experiment with a run: its Current."""
    tomls = answer_spec.experiment_tomls(experiments_dir)
    out = {}
    for name in sorted(set(tomls) | set(summaries)):
        question = tomllib.loads(tomls[name].read_text())["experiment"]["question"] if name in tomls \
            else summaries[name].question
        toml = tomls.get(name)
        run_as = "" if toml is None else toml.parent.name if toml.name == "experiment.toml" \
            else toml.relative_to(Path(experiments_dir).parent).as_posix()
        faults = fault_run(reports_dir, name) if reports_dir is not None and name not in summaries else None
        out[name] = Current(name, question, summaries.get(name), fresh.get(name), run_as, faults)
    return out


def updated(root: Path, reports_dir: Path, summaries: dict[str, RunSummary],
            fresh: dict[str, Freshness]) -> dict[Path, str]:
    """Path relative to root -> its text with every generated block current (only the
    files whose text changes)."""
    root = Path(root)
    experiments_dir = root / "experiments"
    by_name = currents(summaries, fresh, experiments_dir, reports_dir)
    out = {}
    for path in claim_files(root):
        text = path.read_text()
        new = with_bullets(text, by_name, path, reports_dir)
        if path.parent.parent == experiments_dir:
            names = folder_experiments(path.parent)
            if names:
                new = with_answer(new, answer_section([by_name[n] for n in names], path, reports_dir), path)
        if new != text:
            out[path.relative_to(root)] = new
    return out
