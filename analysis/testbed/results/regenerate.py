"""Rebuild every report under reports/ from its stored data, into a scratch directory,
then either compare with what is committed (check) or bring reports/ in line (sync).

Layout (reports/README.md):
  reports/published/<seed>.md, data/<seed>.csv (+ .notes.json), figures/<seed>/...
  reports/<experiment>/<run-id>/manifest.json, results.parquet (or .jsonl) [, ceiling.json, ceiling.jsonl]
                               -> report.md, figures/...
  reports/index.md             the current (newest) run of each experiment
"""
from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from testbed.records import store

from . import load, published, report

PUBLISHED = "published"
INPUTS = (store.MANIFEST_NAME, store.PARQUET_NAME, store.RESULTS_NAME, store.CEILING_HOST_NAME,
          store.CEILING_RUN_NAME)


def run_dirs(reports_dir: Path) -> list[Path]:
    return sorted(p.parent for p in Path(reports_dir).glob(f"*/*/{store.MANIFEST_NAME}")
                  if p.parent.parent.name != PUBLISHED and store.has_results(p.parent))


def _import_seeds(seeds_dir: Path, data_dir: Path) -> None:
    for seed in sorted(Path(seeds_dir).glob("*.txt")):
        res = published.import_report(seed)
        load.write_csv(res.frame, data_dir / f"{seed.stem}.csv")
        (data_dir / f"{seed.stem}.notes.json").write_text(
            json.dumps({"notes": res.notes, "skipped": res.skipped}, indent=2, sort_keys=True) + "\n")


def _published_jobs(reports_dir: Path, seeds_dir: Path | None, out: Path) -> list[tuple]:
    """Fill out/data (from the seeds, else from the stored published/data) and return one
    render_published job per seed; _write_published_index runs after them."""
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    stored = Path(reports_dir) / PUBLISHED / "data"
    if seeds_dir and Path(seeds_dir).is_dir() and any(Path(seeds_dir).glob("*.txt")):
        _import_seeds(seeds_dir, data)
    elif stored.is_dir():  # no seeds here (e.g. a clone without shared/): rebuild from stored data
        for f in sorted(stored.iterdir()):
            shutil.copy2(f, data / f.name)
    jobs = []
    for csv in sorted(data.glob("*.csv")):
        meta = json.loads((data / f"{csv.stem}.notes.json").read_text())
        jobs.append((csv, out, csv.stem, meta["notes"], meta["skipped"]))
    return jobs


def _write_published_index(out: Path, stems: list[str]) -> None:
    index = []
    for stem in stems:
        first = next(
            (line for line in (out / f"{stem}.md").read_text().splitlines()
             if line.startswith("- ") and "helps up to" in line), "",
        )
        index.append((stem, first[2:]))
    if index:
        lines = ["# Published reports, re-analysed", "",
                 "Each seed report was imported into the tidy table (`data/<seed>.csv`) and re-rendered with "
                 "intervals where the report allows them, verdicts, and the sign flips. Rebuild with "
                 "`./testbed regenerate`; `--check` proves the files are current.", "",
                 "| Seed | Report | Data | First sign flip found |", "|---|---|---|---|"]
        lines += [f"| {s} | [{s}.md]({s}.md) | [data/{s}.csv](data/{s}.csv) | {f or '-'} |" for s, f in index]
        (out / "README.md").write_text("\n".join(lines) + "\n")


INDEX = "index.md"


def current_runs(runs: list[Path]) -> dict[str, list[Path]]:
    """Published runs per experiment, newest first. Run ids start with their UTC start
    time (YYYYMMDDTHHMMSSZ-xxxx), so the newest is the current answer and the rest are
    the log behind it."""
    by_experiment: dict[str, list[Path]] = {}
    for run in runs:
        by_experiment.setdefault(run.parent.name, []).append(run)
    return {name: sorted(found, key=lambda p: p.name, reverse=True)
            for name, found in sorted(by_experiment.items())}


def _question(report_md: Path) -> str:
    """The question a report answers: the quoted line under its title, if any."""
    for line in report_md.read_text().splitlines():
        if line.startswith("> "):
            return line[2:].strip()
    return ""


_AA = re.compile(r"This run holds (\d+) A/A comparisons.*?; (\d+) were called FAST or SLOW \(([^)]*)\)")


def _answer(report_md: Path) -> str:
    """The current answer in one cell: the verdict counts of the report's Summary (each
    "X vs Y" table's metric rows) and its A/A false calls, copied from the rendered
    report so the index cannot disagree with it."""
    found: dict[str, list[str]] = {}
    in_summary, heading = False, ""
    for line in report_md.read_text().splitlines():
        if line.startswith("## "):
            if in_summary:
                break
            in_summary = line == "## Summary"
        elif not in_summary:
            continue
        elif line.startswith("### "):
            heading = line[4:].strip()
        elif " vs " in heading and line.startswith("| "):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 7 and cells[1].isdigit():  # Metric, FAST, SLOW, SAME, AMBIGUOUS, Decided, n
                found.setdefault(heading, []).append(
                    f"{cells[0]} {cells[1]} FAST, {cells[2]} SLOW, {cells[3]} SAME, "
                    f"{cells[4]} AMBIGUOUS of {cells[6]}"
                )
        elif match := _AA.search(line):
            found["A/A"] = [f"{match.group(2)} of {match.group(1)} called FAST/SLOW ({match.group(3)})"]
    return "<br>".join(f"{head}: {'; '.join(rows)}" for head, rows in found.items()).replace("|", "\\|")


def write_index(runs: list[Path], rendered_root: Path, out: Path) -> None:
    """reports/index.md: one row per experiment naming its current run, so a reader
    meets the current answer first; the superseded runs follow in their own table,
    each with the answer it gave, and only there."""
    lines = ["# Reports: the current run of each experiment", "",
             "Generated by `./testbed regenerate`. The current run of an experiment is its newest "
             "published run. Earlier runs are superseded: they stay as the log, listed under "
             "[Superseded runs](#superseded-runs) and marked so at the top of their reports. The "
             "five seed reports, re-analysed, are in [published/](published/README.md).", "",
             "| Experiment | Current run | Question | Its answer (the report's summary) | Superseded runs |",
             "|---|---|---|---|---|"]
    superseded = []
    for name, found in current_runs(runs).items():
        newest = found[0]
        rel = f"{name}/{newest.name}/{report.REPORT_NAME}"
        question = _question(rendered_root / rel).replace("|", "\\|")
        answer = _answer(rendered_root / rel)
        lines.append(
            f"| {name} | [{newest.name}]({rel}) | {question or '-'} | {answer or '-'} | {len(found) - 1} |"
        )
        for old in found[1:]:
            old_rel = f"{name}/{old.name}/{report.REPORT_NAME}"
            superseded.append(f"| {name} | [{old.name}]({old_rel}) | [{newest.name}]({rel}) | "
                              f"{_answer(rendered_root / old_rel) or '-'} |")
    if superseded:
        lines += ["", "## Superseded runs", "",
                  "Newest first within each experiment; each gave this answer when it was current.", "",
                  "| Experiment | Run | Superseded by | Its answer (the report's summary) |",
                  "|---|---|---|---|", *superseded]
    out.write_text("\n".join(lines) + "\n")


SUPERSEDED_MARK = "**Superseded**"


def mark_superseded(runs: list[Path], rendered_root: Path) -> None:
    """Put a line under the title of every superseded run's rendered report naming the
    current run, so a reader who lands on an old report by link knows it is the log."""
    for name, found in current_runs(runs).items():
        current = found[0].name
        for old in found[1:]:
            path = rendered_root / name / old.name / report.REPORT_NAME
            title, _, rest = path.read_text().partition("\n")
            note = (f"{SUPERSEDED_MARK} by [{current}](../{current}/{report.REPORT_NAME}), the current run "
                    f"of {name} ([index](../../{INDEX})); this run stays as the log.")
            path.write_text(f"{title}\n\n{note}\n{rest}")


def _render(job: tuple) -> None:
    """One report: a published seed's (5 arguments) or a run's (source, destination,
    draw its figures)."""
    if len(job) == 5:
        report.render_published(*job)
    else:
        source, dest, draw = job
        report.render_run(source, dest, draw=draw)


def _workers(jobs: int) -> int:
    """One process per core: drawing the figures is most of the time, and each run's
    report is independent of the others (the output does not depend on the order)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, jobs, int(os.environ.get("TESTBED_REGENERATE_JOBS", cores))))


def newest_runs(runs: list[Path]) -> list[Path]:
    """Each experiment's newest run: the one its notebook shows."""
    return [found[0] for found in current_runs(runs).values()]


def build(reports_dir: Path, seeds_dir: Path | None, out_root: Path, runs: bool = True,
          notebooks: bool = True, superseded_figures: bool = True) -> list[Path]:
    """Render everything into out_root; return the managed roots (relative paths).
    runs=False renders the published seed reports only. notebooks: also execute each
    experiment's notebook on its newest run and keep its HTML (notebook.html) beside
    that run's report; notebook.html anywhere else is stale. superseded_figures=False:
    a run that is not its experiment's newest gets its report.md only (its figures are
    named, not drawn, and left out of the managed roots, so neither checked nor synced):
    drawing is most of the time, and the newest runs' figures already exercise the same
    plotting code."""
    managed = (
        [Path(PUBLISHED)]
        if (seeds_dir and Path(seeds_dir).is_dir()) or (Path(reports_dir) / PUBLISHED).is_dir()
        else []
    )
    published_jobs = _published_jobs(reports_dir, seeds_dir, out_root / PUBLISHED) if managed else []
    rels = [run.relative_to(reports_dir) for run in run_dirs(reports_dir)] if runs else []
    newest = set(newest_runs(rels))
    jobs = list(published_jobs)
    for rel in rels:
        dest = out_root / rel
        dest.mkdir(parents=True, exist_ok=True)
        draw = superseded_figures or rel in newest
        jobs.append((Path(reports_dir) / rel, dest, draw))
        managed += [rel / report.REPORT_NAME] + ([rel / report.FIGURES] if draw else [])
    # The published seeds and the runs share one pool: the seeds are the largest
    # reports, and drawn one after another they left the other cores idle.
    workers = _workers(len(jobs))
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            list(pool.map(_render, jobs))
    else:
        for job in jobs:
            _render(job)
    if published_jobs:
        _write_published_index(out_root / PUBLISHED, [job[2] for job in published_jobs])
    if rels:
        mark_superseded(rels, out_root)
        write_index(rels, out_root, out_root / INDEX)
        managed.append(Path(INDEX))
    if notebooks and runs:
        managed += _notebooks(reports_dir, out_root)
    return managed


def _notebooks(reports_dir: Path, out_root: Path) -> list[Path]:
    """notebook.html beside each experiment's newest run, and compare-runs.html (that run
    against the one before it) for notebook_exec.CROSS_RUN_EXPERIMENTS."""
    from . import notebook_exec as ne
    runs = run_dirs(reports_dir)
    jobs = []
    for run in newest_runs(runs):
        rel = run.relative_to(reports_dir)
        jobs.append((ne.render, run.parent.name, run, out_root / rel / ne.HTML_NAME))
        earlier = [r for r in runs if r.parent == run.parent and r < run]
        if run.parent.name in ne.CROSS_RUN_EXPERIMENTS and earlier:
            jobs.append((ne.render_cross_run, earlier[-1], run, out_root / rel / ne.CROSS_RUN_HTML))
    # Each notebook runs in its own kernel process: one per core at a time.
    with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        for done in [pool.submit(*job) for job in jobs]:
            done.result()
    return [run.relative_to(reports_dir) / name for run in runs for name in (ne.HTML_NAME, ne.CROSS_RUN_HTML)]


def _files(root: Path, rels: list[Path]) -> set[Path]:
    out = set()
    for rel in rels:
        p = root / rel
        if p.is_file():
            out.add(rel)
        elif p.is_dir():
            out |= {f.relative_to(root) for f in p.rglob("*") if f.is_file()}
    return out


# Files whose bytes the plotting toolchain decides (matplotlib, FreeType, nbconvert),
# not the data: another Python set (nixpkgs' against analysis/uv.lock's) draws them
# differently from the same data. figures_by_name compares these by name only.
TOOLCHAIN_DRAWN = (".png", ".svg", ".html")


def compare(fresh_root: Path, current_root: Path, rels: list[Path],
            figures_by_name: bool = False) -> list[str]:
    """new/stale/changed lines for the files under rels in fresh_root against current_root:
    byte for byte, except TOOLCHAIN_DRAWN files when figures_by_name (then present or not)."""
    fresh, current = _files(fresh_root, rels), _files(Path(current_root), rels)
    changes = []
    for rel in sorted(fresh | current):
        if rel not in current:
            changes.append(f"new: {rel}")
        elif rel not in fresh:
            changes.append(f"stale: {rel}")
        elif figures_by_name and rel.suffix in TOOLCHAIN_DRAWN:
            continue
        elif not filecmp.cmp(fresh_root / rel, Path(current_root) / rel, shallow=False):
            changes.append(f"changed: {rel}")
    return changes


def differences(reports_dir: Path, seeds_dir: Path | None, runs: bool = True, notebooks: bool = True,
                figures_by_name: bool = False,
                superseded_figures: bool = True) -> tuple[list[str], Path, list[Path]]:
    """(changed/new/stale file list, scratch dir holding the fresh build, managed roots)."""
    scratch = Path(tempfile.mkdtemp(prefix="testbed-regenerate-"))
    managed = build(reports_dir, seeds_dir, scratch, runs, notebooks, superseded_figures)
    return compare(scratch, reports_dir, managed, figures_by_name), scratch, managed


def sync(reports_dir: Path, scratch: Path, changes: list[str]) -> None:
    for line in changes:
        kind, rel = line.split(": ", 1)
        dest = Path(reports_dir) / rel
        if kind == "stale":
            dest.unlink()
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(scratch / rel, dest)
