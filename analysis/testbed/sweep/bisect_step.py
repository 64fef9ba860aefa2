"""One step of `./testbed bisect`: zlink at a revision against zlink at GOOD, in one
cell, by the sweep's own procedure. The step is an ordinary run directory (a manifest
naming both commits, results.jsonl, speed.jsonl), written by the same runner as
`./testbed run EXPERIMENT --libs zlink@GOOD,zlink@REV`: the block's two libraries
back to back in alternating order at every repetition, calibrated counts, the host
speed reference, and the adaptive loop stopping at the first planned look where
`testbed.stats.decide` decides the one metric the bisection follows.
"""
from __future__ import annotations

import dataclasses
import random
import shlex
from dataclasses import dataclass
from pathlib import Path

from testbed.records import cell_selector
from testbed.sweep import adaptive, arms, config, config_libraries, runner
from testbed.sweep import libs as libsmod
from testbed.sweep import plan as planmod
from testbed.sweep import run_cmd as sweep_run
from testbed.sweep.bisect import BisectError, Revision, Step

# The cell keys a bisection selects on (the history's, less what the bisection sets:
# the libraries are GOOD and the revision).
CELL_KEYS = ("pattern", "transport", "msg_size", "io_threads", "config", "placement", "process_model", "link",
             "metric")
# metric= takes the results' names (./testbed history) or the sweep's own.
METRIC_NAMES = {"throughput_msgs": "throughput", "lat_p50_us": "p50_latency", "lat_p99_us": "p99_latency",
                "throughput": "throughput", "p50_latency": "p50_latency", "p99_latency": "p99_latency"}
MODE_FOR = {"throughput": "thr", "p50_latency": "lat", "p99_latency": "lat"}
DEFAULT_METRIC = "throughput"


@dataclass(frozen=True)
class CellPlan:
    """The experiment narrowed to one cell: what every step runs."""
    exp: config.Experiment
    selector: dict       # Cell.fields() key -> allowed values (strings)
    metric: str          # adaptive.METRICS name
    label: str           # for people: "PAIR inproc 64B io1 default one-core one-process"


def lib_name(commit: str) -> str:
    return f"zlink{config_libraries.REVISION_SEPARATOR}{commit}"


def plan_cell(experiment: str, profile: str, cell_text: str, good: str, bad: str) -> CellPlan:
    """Parse CELL and check that it names exactly one cell of EXPERIMENT (one block, one
    configuration), naming the choices when it names none or several."""
    try:
        chosen = cell_selector.parse(cell_text, CELL_KEYS, option="CELL")
    except cell_selector.CellSelectorError as exc:
        raise BisectError(str(exc)) from None
    metric_text = chosen.pop("metric", DEFAULT_METRIC)
    if metric_text not in METRIC_NAMES:
        raise BisectError(f"CELL: metric={metric_text} is not one of {', '.join(METRIC_NAMES)}")
    metric = METRIC_NAMES[metric_text]
    names = libsmod.known_names()
    base = config.load(config.experiment_path(experiment), profile, names)
    if base.kind != "bench":
        raise BisectError(f"{base.path}: kind {base.kind!r}; bisect runs bench experiments only")
    design = dataclasses.replace(base.design, stop_on=(metric,), verdicts=True)
    exp = dataclasses.replace(base, design=design, mode=MODE_FOR[metric], ceiling=None, perf_record=(),
                              work_per_message=False)
    exp = config_libraries.override(exp, [lib_name(good), lib_name(bad)], names)
    selector = {k: (str(v),) for k, v in chosen.items()}
    cells = [c for c in planmod.expand(exp) if planmod.matches(selector, c.fields())]
    blocks = {(c.block_id, c.config) for c in cells}
    if len(blocks) != 1:
        everything = planmod.expand(exp)
        raise BisectError(_choices_text(cell_text, selector, cells or everything, exp, bool(cells)))
    return CellPlan(exp, selector, metric, cells[0].label.split(" ", 1)[1])


def _choices_text(text: str, selector: dict, cells: list[planmod.Cell], exp, matched: bool) -> str:
    keys = [k for k in CELL_KEYS if k != "metric"]
    varying = {k: sorted({c.fields()[k] for c in cells}, key=_numbers_first) for k in keys}
    # Matched several: the keys that still vary. Matched none: those asked for too.
    open_keys = {k: v for k, v in varying.items() if len(v) > 1 or (not matched and k in selector)}
    where = f"{exp.path} (profile {exp.profile})"
    what = (f"CELL {text!r} matches {len({(c.block_id, c.config) for c in cells})} cells of {where}; add "
            if matched else f"CELL {text!r} matches no cell of {where}; its cells have ")
    return what + "; ".join(f"{k} in {{{', '.join(v)}}}" for k, v in open_keys.items())


def _numbers_first(value: str) -> tuple:
    return (not value.isdigit(), int(value) if value.isdigit() else 0, value)


def cells_for(plan: CellPlan, revision: str) -> tuple[config.Experiment, list[planmod.Cell]]:
    good = plan.exp.libraries[0].name
    exp = config_libraries.override(plan.exp, [good, lib_name(revision)], libsmod.known_names())
    return exp, [c for c in planmod.expand(exp) if planmod.matches(plan.selector, c.fields())]


def measure(plan: CellPlan, revision: Revision, role: str, run_dir: Path, seed: int | None) -> Step:
    """Build zlink at `revision` (and GOOD; both cached by source), run the cell, and
    read the verdict of the metric the bisection follows from the run's manifest."""
    step = Step(revision, role, run_dir=str(run_dir))
    exp, cells = cells_for(plan, revision.commit)
    design, note, decider = sweep_run.checked_design(exp)
    found, missing = libsmod.resolve([e.name for e in exp.libraries], build=True)
    arms.build_bench(exp, runner.warn)
    if missing:
        step.note = "; ".join(missing.values())
        return step
    perf = sweep_run.perf_setup(exp)
    seed = seed if seed is not None else random.randrange(2**31)
    m = sweep_run.open_run_dir(exp, run_dir, None, seed, cells, found, missing, perf, 0.0, design, note,
                               [e.name for e in exp.libraries])
    # The same layout choice as `./testbed run`: with arms, GOOD's and this revision's zlink
    # alternate in slices inside one process pair, so a slow spell of the host falls on
    # both. In blocks (one process per run at 0.1 s) a CI host under load once called
    # GOOD's own code FAST beyond a 40% margin and left the bisection undecided.
    try:
        layout, why = arms.choose(exp, found, [c for c in cells if c.library_name in found])
    except ValueError as exc:
        step.note = str(exc)
        return step
    m.design.update(layout=layout, layout_reason=why)
    ctx = runner.RunContext(exp, run_dir, m, cells, found, missing,
                            f"(a bisection step; its data stays here) {shlex.quote(str(run_dir))}",
                            design, decider, layout=layout)
    code = runner.run(ctx, seed, perf)
    if code == 130:
        raise KeyboardInterrupt
    return _read_verdict(step, m, plan.metric)


def _read_verdict(step: Step, m, metric: str) -> Step:
    decisions = [d for g in m.summary.get("groups", []) for d in g.get("decisions", [])
                 if d.get("kind") == "library" and d.get("metric") == metric]
    if len(decisions) != 1:
        failed = m.summary.get("failed", 0)
        step.note = f"no {metric} verdict in the run ({failed} failed runs; see its manifest)"
        return step
    d = decisions[0]
    step.verdict = d["verdict"] if d["verdict"] != adaptive.UNDECIDED else "AMBIGUOUS"
    step.ratio, step.low, step.high = _oriented(d.get("ratio"), d.get("low"), d.get("high"), metric)
    step.pairs = min(d.get("n_reference", 0), d.get("n_candidate", 0))
    step.note = d.get("why", "") or ""
    return step


def _oriented(ratio, low, high, metric: str) -> tuple:
    """As ./testbed history shows it: > 1 is the revision better than GOOD (throughput
    revision/GOOD, latency GOOD/revision)."""
    if ratio is None or adaptive.METRICS[metric][1]:
        return ratio, low, high
    return 1 / ratio, 1 / high, 1 / low
