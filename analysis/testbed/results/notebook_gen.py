"""The notebooks under notebooks/, generated: one per experiment folder from one
template (only the parameters' defaults and the introduction differ), and the
cross-run notebook. `./testbed notebook --generate` writes them; the tests check the
committed files equal what this module gives, so the template is the one place to edit.

Every code cell only calls testbed.results.explore (the functions the report uses), so
a notebook cannot compute something the CLI does not. The parameters cell carries the
tag `parameters` (papermill's convention); notebook_exec injects values after it."""
from __future__ import annotations

import tomllib
from pathlib import Path

import nbformat
from nbformat import v4

CROSS_RUN = "compare-runs"

# What each experiment's README asks the reader to look at behind a verdict; the
# sections themselves are the same in every notebook (each says when its data is absent).
WHY = {
    "batch-sweep": "where a batch size stops paying (inflections, the size-adaptive policy) and the host "
                   "speed reference, which the README uses to tell host slow-downs from the libraries",
    "io-threads": "the verdict tables per IO-thread count and the spread within cells",
    "noise-floor": "the A/A calibration block of the summary (the false-call rate) and the spread within "
                   "cells",
    "placement": "the spread within cells per size, placement and process model: which combination decides "
                 "soonest",
    "router-pubsub": "the drill-down of the large inproc cells the seed claimed, repetition by repetition",
    "scorecard": "work per message and perf counters beside the timing verdicts, and the host speed "
                 "reference",
    "security-cost": "the configuration block (CURVE against NULL, per library) and where the cost changes "
                     "with size",
    "side-by-side": "the A/A pair inside the run (libzmq-B against libzmq-A): its false calls bound the rest",
    "split-cores": "the host speed reference and the counters (context switches per message) behind the "
                   "large-message rows",
    "startup": "the spread of the whole-process times (hyperfine) per transport",
    "transport-matrix": "the verdict tables per transport and size",
    "two-host": "the verdicts per link (unshaped, 1 Gbit/s) and the share of the host ceiling",
}


def _md(text: str):
    return v4.new_markdown_cell(text.strip("\n"))


def _code(text: str, tags=()):
    cell = v4.new_code_cell(text.strip("\n"))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def _notebook(cells) -> nbformat.NotebookNode:
    nb = v4.new_notebook(cells=cells)
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    for i, cell in enumerate(nb.cells):  # stable ids: the files do not change when regenerated
        cell["id"] = f"cell-{i:02d}"
    return nb


def experiment_notebook(experiment: str) -> nbformat.NotebookNode:
    why = WHY.get(experiment, "the views below")
    return _notebook([
        _md(f"""
# {experiment}: one run

The question, the run and its verdicts as its report (`report.md`) gives them, then what the report does not
show: every repetition behind one comparison, and the views behind a verdict. The README of this experiment
(`experiments/{experiment}/README.md`) points to {why}.

Every cell calls `testbed.results.explore`, the functions the report is rendered with: the tables here and in
the report agree (a test checks it). Set `RUN` to another run directory (or start it with
`./testbed notebook {experiment} --run DIR`)."""),
        _code(f"""
import os

EXPERIMENT = "{experiment}"
# A run directory; "" = the experiment's newest published run (reports/{experiment}/), else its newest run
# under results/. `./testbed notebook --run DIR` sets TESTBED_NOTEBOOK_RUN.
RUN = os.environ.get("TESTBED_NOTEBOOK_RUN", "")
PATTERNS = None  # patterns whose figures are drawn; None = every pattern
# A comparison to drill into: dict(pattern=, transport=, msg_size=, metric=[, config=, library=]);
# None = the first undecided one.
DRILL = None""",
              tags=("parameters",)),
        _code("""
from IPython.display import Image, Markdown, display

from testbed.results import explore, runs

run_dir = runs.pick_published_run(RUN, EXPERIMENT)
view = explore.open_run(run_dir)
display(Markdown(f"**{view.context['title']}** (`{run_dir}`)\\n\\n> {view.context['question']}"))
explore.brief(view)"""),
        _md("## Summary (the report's own section)"),
        _code("display(Markdown(explore.summary_markdown(view)))"),
        _md("## Verdicts\n\nEvery comparison, as a frame to filter; the counts per candidate and metric:"),
        _code("""
table = explore.verdicts(view)
display(explore.verdict_counts(view))
table.round(2)"""),
        _md("The report's verdict tables, verbatim:"),
        _code("display(Markdown(explore.detail_markdown(view)))"),
        _md("## Figures (the report's, drawn by the same code)"),
        _code("""
for pattern, caption, fig in explore.figures(view, PATTERNS):
    display(Markdown(f"**{pattern}**: {caption}"), Image(explore.png(fig)))"""),
        _md("""
## One comparison, every repetition

The two cells behind one verdict: each repetition, paired by index where the run ran the libraries back to
back (the ratio column is then the pair's), and the comparison recomputed from them, which must equal the
table's row."""),
        _code("""
row = explore.pick_cell(view) if DRILL is None else explore.find(view, DRILL)
cell = explore.drill(view, row)
keys = ["pattern", "transport", "msg_size", "config", "metric", "library", "reference"]
display(Markdown(" · ".join(f"{k} `{row[k]}`" for k in keys)))
display(explore.drill_summary(cell))
cell.repetitions.round(4)"""),
        _md("## Why: spread within cells (per size, and placement, process model or link where they vary)"),
        _code("explore.spread(view).round(2)"),
        _md("""
## Why: the latency tail

Each cell's round trips pooled over its repetitions (the bench's histograms merged) at p50/p99/p99.9, beside
the median and spread of the repetitions' own p99, which the p99 verdicts pair. A pooled p99 far above the
repetitions' median means a few repetitions carry the tail."""),
        _code("""
tails = explore.tail(view)
print("no latency histograms in this run (runs before 2026-11-27 have none)") if tails.empty \\
    else display(tails.round(1))"""),
        _md("## Why: work per message and perf counters (work, not speed)"),
        _code("""
work = explore.counters(view)
print("no counters recorded in this run") if work.empty else display(work.round(3))"""),
        _md("## Why: host speed reference"),
        _code("""
summary, series = explore.host_speed(view)
if series.empty:
    print("no host speed reference recorded in this run")
else:
    display(summary)
    display(Image(explore.png(explore.draw_host_speed(series))))"""),
        _md("## Ceiling, inflections, failed cells"),
        _code("""
display(Markdown(explore.broken_ceiling_markdown(view) or "no cell went beyond the host ceiling"))
for sentence in explore.inflection_lines(view):
    print("-", sentence)
view.context["failed"]"""),
    ])


def cross_run_notebook() -> nbformat.NotebookNode:
    return _notebook([
        _md("""
# Two runs side by side

Which zlink-vs-libzmq verdicts replicate between two runs and which flip, and what the data says about why:
whether the two intervals overlap (both runs fit one ratio, an edge crossed a line) or not (the ratio moved),
and what differs between the runs besides the code (commit, host, load, host speed, spread within cells).
Default: the two newest published scorecard runs. `B` may also be a published seed's tidy CSV
(reports/published/data/), which has no run facts."""),
        _code("""
import os

EXPERIMENT = "scorecard"
A = os.environ.get("TESTBED_NOTEBOOK_RUN", "")  # "" = the second newest published run of EXPERIMENT
B = os.environ.get("TESTBED_NOTEBOOK_OTHER", "")  # "" = the newest
METRICS = ["throughput_msgs", "lat_p50_us"]""", tags=("parameters",)),
        _code("""
from IPython.display import Markdown, display

from testbed.results import explore, runs

a_dir, b_dir = runs.pick_pair(A, B, EXPERIMENT)
a, b = explore.open_any(a_dir), explore.open_any(b_dir)
display(Markdown(f"**a** `{a_dir}`  \\n**b** `{b_dir}`"))
explore.facts_side_by_side(a, b)"""),
        _md("## Replicated, flipped, changed"),
        _code("""
tables = {m: explore.replication(a, b, m) for m in METRICS}
for metric, t in tables.items():
    display(Markdown(f"**{metric}**: {len(t)} comparisons in common"), explore.replication_counts(t))"""),
        _md("## The ones that did not replicate, with the reason"),
        _code("""
import pandas as pd

for metric, t in tables.items():
    moved = explore.moved(t)
    display(Markdown(f"**{metric}**: {len(moved)} did not replicate"))
    if not moved.empty:
        with pd.option_context("display.max_colwidth", None):
            display(moved.round(2))"""),
    ])


# Experiment kinds whose runs are not sweep runs (testbed.faults writes its own run
# directories and report): the template's explore calls cannot read them.
NOT_SWEEPS = ("faults", "faults-soak")


def sweep_experiments(experiments_dir: Path) -> list[str]:
    """The experiment folders whose runs the sweep writes (every kind but NOT_SWEEPS)."""
    names = []
    for p in sorted(Path(experiments_dir).glob("*/experiment.toml")):
        workload = tomllib.loads(p.read_text()).get("workload", {})
        if not (isinstance(workload, dict) and workload.get("kind") in NOT_SWEEPS):
            names.append(p.parent.name)
    return names


def expected(experiments_dir: Path) -> dict[str, nbformat.NotebookNode]:
    """file name -> notebook, for every sweep experiment folder and the cross-run one."""
    names = sweep_experiments(experiments_dir)
    out = {f"{n}.ipynb": experiment_notebook(n) for n in names}
    out[f"{CROSS_RUN}.ipynb"] = cross_run_notebook()
    return out


def text(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def stale(experiments_dir: Path, notebooks_dir: Path) -> list[str]:
    """Notebook files that differ from what the template gives (or are missing)."""
    out = []
    for name, nb in expected(experiments_dir).items():
        path = Path(notebooks_dir) / name
        if not path.is_file() or path.read_text() != text(nb):
            out.append(name)
    return out


def write(experiments_dir: Path, notebooks_dir: Path) -> list[str]:
    changed = stale(experiments_dir, notebooks_dir)
    for name, nb in expected(experiments_dir).items():
        if name in changed:
            (Path(notebooks_dir) / name).write_text(text(nb))
    return changed
