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
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from testbed.records import answer_spec, store
from testbed.records.manifest import RunManifest

from . import answer_blocks, freshness, load, published, report, run_settings
from .freshness import Freshness
from .report import RunSummary

PUBLISHED = "published"
INPUTS = (store.MANIFEST_NAME, store.PARQUET_NAME, store.RESULTS_NAME, store.CEILING_HOST_NAME,
          store.CEILING_RUN_NAME, store.TOML_COPY_NAME)
# The new texts of the checkout's generated answer blocks, under the scratch build.
ANSWERS = "_answers"
ANSWERS_KIND = "answers"


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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_index(runs: list[Path], summaries: dict[Path, RunSummary], fresh: dict[str, Freshness],
                questions: dict[str, str], out: Path) -> None:
    """reports/index.md: one row per experiment naming its current run, the settings it
    ran with and its answer to the experiment's question (answer.py: the sentence its
    report opens with; "Stale" where the run predates its toml), so a reader meets the
    current answer first; the superseded runs follow in their own table, each with the
    answer it gives, and only there."""
    lines = ["# Reports: the current run of each experiment", "",
             "Generated by `./testbed regenerate`. The current run of an experiment is its newest "
             "published run; its answer is the sentence its report opens with, from the comparisons its "
             "toml's `[answer]` declares, and its settings are read from its records. **Stale** marks a "
             "current run that predates its experiment's toml (what changed is named). Earlier runs are "
             "superseded: they stay as the log, listed under [Superseded runs](#superseded-runs) and marked "
             "so at the top of their reports. The five seed reports, re-analysed, are in "
             "[published/](published/README.md).", "",
             "| Experiment | Current run | Settings (from the records) | Question | Answer "
             "| Superseded runs |",
             "|---|---|---|---|---|---|"]
    superseded = []
    for name, found in current_runs(runs).items():
        newest = found[0]
        rel = f"{name}/{newest.name}/{report.REPORT_NAME}"
        summary = summaries[newest]
        stale = fresh.get(name)
        said = (f"{stale.text()} " if stale and stale.stale else "") + summary.answer.sentence
        question = questions.get(name) or summary.question
        settings = _cell(run_settings.line(summary.settings))
        lines.append(f"| {name} | [{newest.name}]({rel}) | {settings} | {_cell(question) or '-'} | "
                     f"{_cell(said)} | {len(found) - 1} |")
        for old in found[1:]:
            old_rel = f"{name}/{old.name}/{report.REPORT_NAME}"
            superseded.append(f"| {name} | [{old.name}]({old_rel}) | [{newest.name}]({rel}) | "
                              f"{_cell(run_settings.line(summaries[old].settings))} | "
                              f"{_cell(summaries[old].answer.sentence)} |")
    if superseded:
        lines += ["", "## Superseded runs", "",
                  "Newest first within each experiment; each answer is the current `[answer]` applied to "
                  "that run.", "",
                  "| Experiment | Run | Superseded by | Settings (from the records) | Its answer |",
                  "|---|---|---|---|---|", *superseded]
    out.write_text("\n".join(lines) + "\n")


SUPERSEDED_MARK = "**Superseded**"


# A superseded run's figures are drawn on demand only (not committed: reports/ must fit
# a clone, issue 43.6); the folder they are drawn into carries this file, and the run
# a .gitignore naming the folder.
ON_DEMAND = ".on-demand"
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = (f"# This run is superseded: its figures are drawn on demand (./testbed regenerate "
                  f"--draw-superseded), not committed.\n{report.FIGURES}/\n")


def mark_superseded(runs: list[Path], rendered_root: Path) -> None:
    """Put a line under the title of every superseded run's rendered report naming the
    current run, so a reader who lands on an old report by link knows it is the log,
    and how to draw its figures; and the run's .gitignore that keeps them out of git."""
    for name, found in current_runs(runs).items():
        current = found[0].name
        for old in found[1:]:
            path = rendered_root / name / old.name / report.REPORT_NAME
            title, _, rest = path.read_text().partition("\n")
            note = (f"{SUPERSEDED_MARK} by [{current}](../{current}/{report.REPORT_NAME}), the current run "
                    f"of {name} ([index](../../{INDEX})); this run stays as the log. Its figures are not "
                    "committed: `./testbed regenerate --draw-superseded` draws them.")
            path.write_text(f"{title}\n\n{note}\n{rest}")
            (path.parent / GITIGNORE).write_text(GITIGNORE_TEXT)


def _render(job: tuple) -> RunSummary | None:
    """One report: a published seed's (5 arguments) or a run's (source, destination,
    draw its figures, the experiments folder its answer is declared in): a run's
    answer and settings come back for the index and the READMEs."""
    if len(job) == 5:
        report.render_published(*job)
        return None
    source, dest, draw, experiments_dir = job
    return report.render_run_answer(source, dest, draw=draw, experiments_dir=experiments_dir)[1]


def _workers(jobs: int) -> int:
    """One process per core: drawing the figures is most of the time, and each run's
    report is independent of the others (the output does not depend on the order)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, jobs, int(os.environ.get("TESTBED_REGENERATE_JOBS", cores))))


def _freshness(reports_dir: Path, newest: list[Path], summaries: dict, experiments_dir: Path) -> dict:
    """Experiment -> whether its current run predates its toml (nothing to judge against
    without an experiments folder)."""
    if not experiments_dir.is_dir():
        return {}
    out = {}
    for rel in newest:
        run = Path(reports_dir) / rel
        out[rel.parent.name] = freshness.judge(run, RunManifest.read(load.read_manifest(run), run),
                                               experiments_dir, summaries[rel].settings)
    return out


def _questions(experiments_dir: Path) -> dict[str, str]:
    """Experiment -> the question its toml asks now."""
    out = {}
    for name, toml in answer_spec.experiment_tomls(experiments_dir).items():
        question = answer_spec.read(toml)[0].get("experiment", {}).get("question")
        if isinstance(question, str):
            out[name] = question
    return out


def newest_runs(runs: list[Path]) -> list[Path]:
    """Each experiment's newest run: the one its notebook shows."""
    return [found[0] for found in current_runs(runs).values()]


def build(reports_dir: Path, seeds_dir: Path | None, out_root: Path, runs: bool = True,
          notebooks: bool = True, root: Path | None = None) -> list[Path]:
    """Render everything into out_root; return the managed roots (relative paths).
    runs=False renders the published seed reports only. notebooks: also execute each
    experiment's notebook on its newest run and keep its HTML (notebook.html) beside
    that run's report; notebook.html anywhere else is stale. Only each experiment's
    newest run gets its figures: a superseded run gets its report.md and a .gitignore,
    and its figures folder is managed as empty (a committed figure of a run that became
    superseded is stale, so syncing removes it; one drawn on demand is left alone:
    differences()). root: the checkout whose experiments/ declare the answers and whose
    READMEs hold the generated answer blocks (default: the folder holding reports_dir);
    the blocks' new texts go to out_root/ANSWERS (answer_blocks.py)."""
    root = Path(root) if root is not None else Path(reports_dir).resolve().parent
    experiments_dir = root / "experiments"
    # A marker naming an unknown experiment fails now, not after every report is drawn.
    answer_blocks.check_markers(root, set(answer_spec.experiment_tomls(experiments_dir))
                                | {r.parent.name for r in run_dirs(reports_dir)})
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
        jobs.append((Path(reports_dir) / rel, dest, rel in newest, experiments_dir))
        managed += [rel / report.REPORT_NAME, rel / report.FIGURES]
        managed += [] if rel in newest else [rel / GITIGNORE]
    # The published seeds and the runs share one pool: the seeds are the largest
    # reports, and drawn one after another they left the other cores idle.
    workers = _workers(len(jobs))
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            done = list(pool.map(_render, jobs))
    else:
        done = [_render(job) for job in jobs]
    summaries = {rel: s for rel, s in zip(rels, done[len(published_jobs):], strict=True)}
    if published_jobs:
        _write_published_index(out_root / PUBLISHED, [job[2] for job in published_jobs])
    if rels:
        mark_superseded(rels, out_root)
        fresh = _freshness(reports_dir, newest_runs(rels), summaries, experiments_dir)
        write_index(rels, summaries, fresh, _questions(experiments_dir), out_root / INDEX)
        managed.append(Path(INDEX))
        newest_summaries = {s.experiment: summaries[rel] for rel in newest_runs(rels)
                            for s in [summaries[rel]]}
        for rel_file, text in answer_blocks.updated(root, Path(reports_dir), newest_summaries, fresh).items():
            (out_root / ANSWERS / rel_file).parent.mkdir(parents=True, exist_ok=True)
            (out_root / ANSWERS / rel_file).write_text(text)
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


def _drawn_on_demand(reports_dir: Path, line: str) -> bool:
    """A `stale:` line of a figure drawn on demand (its folder holds ON_DEMAND)."""
    kind, rel = line.split(": ", 1)
    parts = Path(rel).parts
    return (kind == "stale" and len(parts) > 3 and parts[2] == report.FIGURES
            and (Path(reports_dir).joinpath(*parts[:3]) / ON_DEMAND).is_file())


def differences(reports_dir: Path, seeds_dir: Path | None, runs: bool = True, notebooks: bool = True,
                figures_by_name: bool = False,
                root: Path | None = None) -> tuple[list[str], Path, list[Path]]:
    """(changed/new/stale file list, scratch dir holding the fresh build, managed roots).
    A generated answer block that differs is a line `answers: <file relative to root>`."""
    scratch = Path(tempfile.mkdtemp(prefix="testbed-regenerate-"))
    managed = build(reports_dir, seeds_dir, scratch, runs, notebooks, root)
    answers = sorted(p.relative_to(scratch / ANSWERS) for p in (scratch / ANSWERS).rglob("*") if p.is_file())
    changes = [c for c in compare(scratch, reports_dir, managed, figures_by_name)
               if not _drawn_on_demand(reports_dir, c)]
    return changes + [f"{ANSWERS_KIND}: {rel.as_posix()}" for rel in answers], scratch, managed


def draw_superseded(reports_dir: Path) -> list[Path]:
    """Draw every superseded run's figures into its folder (marked ON_DEMAND; its
    .gitignore keeps them out of git): the figures regenerate no longer commits."""
    runs = run_dirs(reports_dir)
    newest = set(newest_runs(runs))
    jobs, drawn = [], []
    scratch = Path(tempfile.mkdtemp(prefix="testbed-figures-"))
    for run in runs:
        if run not in newest:
            jobs.append((run, scratch / run.relative_to(reports_dir), True, None))
    with ProcessPoolExecutor(max_workers=_workers(len(jobs) or 1)) as pool:
        list(pool.map(_render, jobs))
    for run, dest, _, _ in jobs:
        target = run / report.FIGURES
        if (dest / report.FIGURES).is_dir():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(dest / report.FIGURES, target)
            (target / ON_DEMAND).write_text("drawn by ./testbed regenerate --draw-superseded\n")
            drawn.append(target)
    shutil.rmtree(scratch, ignore_errors=True)
    return drawn


def sync(reports_dir: Path, scratch: Path, changes: list[str], root: Path | None = None) -> None:
    root = Path(root) if root is not None else Path(reports_dir).resolve().parent
    for line in changes:
        kind, rel = line.split(": ", 1)
        if kind == ANSWERS_KIND:
            shutil.copyfile(scratch / ANSWERS / rel, root / rel)
            continue
        dest = Path(reports_dir) / rel
        if kind == "stale":
            dest.unlink()
            if dest.parent.name == report.FIGURES and not any(dest.parent.iterdir()):
                dest.parent.rmdir()
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(scratch / rel, dest)
