"""`./testbed run EXPERIMENT`: expand an experiment's sweep and run it (or --dry-run it).

Exit status: 0 every run of the available libraries succeeded; 1 some cell failed or
timed out (listed in the summary and the manifest); 2 bad input; 130 interrupted (the
run directory is resumable; the command to resume is printed).
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from testbed import paths
from testbed.records import manifest as manifestmod
from testbed.records import run_writer
from testbed.sweep import (
    adaptive,
    arms,
    ceiling,
    config,
    config_libraries,
    estimate,
    hostload,
    placement,
    runner,
    slurm_run,
    slurm_script,
    speedref,
)
from testbed.sweep import libs as libsmod
from testbed.sweep import perf as perfmod
from testbed.sweep import plan as planmod
from testbed.sweep.config import ExperimentError
from testbed.sweep.slurm_client import SlurmError, missing_clients


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment",
                        help="name of a folder under experiments/ (or a path to an experiment.toml)")
    parser.add_argument("--profile", default=None, choices=config.PROFILE_NAMES,
                        help="overrides from [profiles.P] (default: default)")
    parser.add_argument("--out", type=Path, default=None, help=f"results root (default {paths.RESULTS_DIR})")
    parser.add_argument("--resume", nargs="?", const="latest", default=None, metavar="RUN_DIR",
                        help="continue an interrupted run (default: the newest unfinished one)")
    parser.add_argument("--shard", default=None, metavar="I/N", help="run only shard I of N (1-based)")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and an estimated duration")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the order shuffle (default: random, recorded)")
    parser.add_argument("--no-build", action="store_true", help="use only libraries already built")
    parser.add_argument("--libs", default=None, metavar="A,B[,...]",
                        help="run these libraries instead of the experiment's [libraries] (the first is "
                             "the reference); zlink@REV is zlink at a git revision, e.g. "
                             "--libs zlink@main~3,zlink for a before/after verdict")
    parser.add_argument("--no-report", action="store_true", help="do not render the report at the end")
    slurm_run.add_arguments(parser)


def fail(text: str) -> int:
    print(f"testbed run: {text}", file=sys.stderr)
    return 2


def main(args: argparse.Namespace, on_finished: Callable[[Path], None] | None = None) -> int:
    """Run the sweep; `on_finished(run_dir)` after a whole run that was not interrupted
    (unless --no-report): the command layer's report step (testbed/commands/run_cmd.py),
    passed in because the sweep never imports the analysis (tests/test_layers.py)."""
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        return _main(args, on_finished)
    except (ExperimentError, ValueError, SlurmError) as exc:  # bad input: one line, no traceback
        return fail(str(exc))
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminated(signum, frame) -> None:
    """SIGTERM stops a run as Ctrl-C does (its bench processes killed, the run marked
    interrupted and resumable): Slurm sends it on scancel and at a task's time limit."""
    raise KeyboardInterrupt


@dataclass
class Plan:
    exp: config.Experiment
    cells: list[planmod.Cell]
    shard: tuple[int, int] | None
    seed: int
    run_dir: Path | None = None
    manifest: manifestmod.RunManifest | None = None
    libs_option: list[str] = field(default_factory=list)  # --libs as given (empty: [libraries])


def _find_resume(out_root: Path, exp_name: str, resume: str) -> Path:
    if resume != "latest":
        run_dir = Path(resume)
        if not run_writer.is_run(run_dir):
            raise ExperimentError(run_dir, "--resume", "not a run directory (no manifest.json)",
                                  f"a directory under {out_root / exp_name}")
        return run_dir
    candidates = [p for p in run_writer.manifests_under(out_root / exp_name, depth=1)
                  if manifestmod.load(p).status != "complete"]
    if not candidates:
        raise ExperimentError(out_root / exp_name, "--resume", "no unfinished run to resume",
                              "an explicit RUN_DIR or a run without --resume")
    return candidates[-1]


def _resumed_plan(args, out_root: Path, names) -> Plan:
    run_dir = _find_resume(out_root, config.experiment_path(args.experiment).parent.name, args.resume)
    m = manifestmod.load(run_dir)
    if args.profile and args.profile != m.profile:
        raise ValueError(f"--profile {args.profile} differs from the run's profile {m.profile}")
    if args.shard:
        raise ValueError("--shard cannot change on --resume (the run directory records its shard)")
    if args.libs:
        raise ValueError("--libs cannot change on --resume (the run records its libraries)")
    exp = _with_libs(config.load(run_writer.toml_copy(run_dir), m.profile, names), m.libs_option, names)
    if exp.name != m.experiment:
        raise ValueError(f"{run_dir} is a run of {m.experiment}, not {exp.name}")
    source = Path(m.experiment_source)
    if source.is_file() and config.load(source, m.profile, names).toml_sha256 != exp.toml_sha256:
        runner.warn(f"{source} changed since this run started; resuming with the run's own copy")
    shard = (m.shard["index"], m.shard["total"]) if m.shard else None
    return Plan(exp, _cells(exp, shard), shard, m.shuffle_seed, run_dir, m, m.libs_option)


def _cells(exp: config.Experiment, shard) -> list[planmod.Cell]:
    cells = planmod.expand(exp)
    if shard:
        cells = planmod.shard(cells, *shard)
    if not cells:
        raise ValueError(f"{exp.path}: the sweep expands to no cells (check [[sweep.exclude]] and --shard)")
    return cells


def _with_libs(exp: config.Experiment, libs: list[str], names) -> config.Experiment:
    """--libs (as given now, or as the run being resumed recorded it) replaces [libraries]."""
    if not libs:
        return exp
    return config_libraries.override(exp, libs, names)


def _new_plan(args, names) -> Plan:
    exp = config.load(config.experiment_path(args.experiment), args.profile or "default", names)
    libs = [name.strip() for name in args.libs.split(",")] if args.libs else []
    exp = _with_libs(exp, libs, names)
    shard = planmod.parse_shard(args.shard) if args.shard else None
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    return Plan(exp, _cells(exp, shard), shard, seed, libs_option=libs)


def checked_design(exp: config.Experiment):
    """(design, note, decider or None). The planner raises a minimum that cannot reach
    a decision and refuses a cap that cannot (adaptive.checked_design)."""
    if exp.kind not in ("bench", "perf-tools") or not exp.design.verdicts:
        return exp.design, "", None
    try:
        decider = adaptive.load_decide()
    except ImportError as exc:
        if exp.design.adaptive:
            raise ExperimentError(exp.path, "run.max_repetitions", "adaptive repetitions need "
                                  f"testbed.stats.decide, which is not available ({exc})",
                                  "repetitions = N (a fixed design) until it is") from None
        return exp.design, "", None
    design, note = adaptive.checked_design(exp.design, decider, str(exp.path))
    return design, note, decider


def _main(args: argparse.Namespace, on_finished: Callable[[Path], None] | None) -> int:
    out_root = args.out or paths.RESULTS_DIR
    _check_slurm_options(args)
    speedref.rounds_per_slice()  # a bad $TESTBED_SPEEDREF_ROUNDS stops here, named
    names = libsmod.known_names()
    plan = _resumed_plan(args, out_root, names) if args.resume else _new_plan(args, names)
    exp = plan.exp
    libsmod.check([e.name for e in exp.libraries])  # a bad zlink@REV stops here, naming it
    try:
        design, note, decider = checked_design(exp)
    except adaptive.DesignError as exc:
        return fail(str(exc))
    if note:
        runner.warn(note)
    if args.slurm:
        tasks = slurm_run.task_count(args.slurm_tasks, plan.cells)  # a bad count stops before any build
    if args.dry_run:
        code = dry_run(exp, plan.cells, plan.shard, plan.seed, estimate.load_history(out_root), design)
        if args.slurm:
            print(f"slurm: {tasks} array task(s), one shard of whole blocks each, --exclusive")
        return code
    found, missing = _libraries(exp, args)
    if not found:
        return fail("no library of this experiment is available; nothing to run (see warnings above)")
    if args.slurm:  # the shards run as array tasks; this process submits, watches and merges
        return slurm_run.run(exp, plan.cells, plan.seed, plan.libs_option, out_root, args, on_finished)
    perf = perf_setup(exp)
    history = estimate.load_history(out_root)
    planned = [c for c in plan.cells if c.library_name in found]
    est = estimate.bounds(planned, exp, history)[1]
    if warning := estimate.budget_warning(planned, exp, history):
        runner.warn(warning)
    if plan.manifest is None:
        _start_run(plan, out_root, found, missing, perf, est, design, note)
    elif not _refresh_manifest(plan.manifest, exp, found, missing, perf):
        return 2
    print(f"testbed run: {exp.name} ({exp.profile}): {len(plan.cells)} cells x {design.min_repetitions}"
          f"{'..' + str(design.max_repetitions) if design.adaptive else ''} repetitions, "
          f"estimated up to {fmt_duration(est)}; results in {plan.run_dir}", file=sys.stderr)
    try:
        layout, why = _layout(exp, found, plan)
    except ValueError as exc:
        return fail(str(exc))
    plan.manifest.design.update(layout=layout, layout_reason=why)
    ctx = runner.RunContext(exp, plan.run_dir, plan.manifest, plan.cells, found, missing,
                            runner.resume_command(exp, plan.run_dir), design, decider, layout=layout)
    code = runner.run(ctx, plan.seed, perf)
    if plan.shard and code != 130:
        print(f"testbed run: shard {plan.shard[0]}/{plan.shard[1]} done; when every shard is, join them "
              "with ./testbed merge <run dirs> and report the merged run", file=sys.stderr)
    elif code != 130 and not args.no_report and on_finished is not None:
        on_finished(plan.run_dir)
    return code


def _layout(exp: config.Experiment, found: dict, plan) -> tuple[str, str]:
    """arms or blocks (sweep/arms.py); a resumed run keeps the layout it started with."""
    started = plan.manifest.design.get("layout") if plan.manifest is not None else None
    if started in (arms.ARMS, arms.BLOCKS) and plan.manifest.sessions:
        return started, plan.manifest.design.get("layout_reason", "")
    return arms.choose(exp, found, [c for c in plan.cells if c.library_name in found])


def _check_slurm_options(args) -> None:
    if not args.slurm:
        options = (("--slurm-tasks", args.slurm_tasks is not None),
                   ("--slurm-partition", args.slurm_partition),
                   ("--slurm-option", args.slurm_option), ("--no-wait", args.no_wait))
        given = [name for name, on in options if on]
        if given:
            raise ValueError(f"{', '.join(given)} only apply with --slurm")
        return
    for option, value in (("--resume", args.resume), ("--shard", args.shard)):
        if value:
            raise ValueError(f"--slurm cannot take {option}: it runs every shard itself (a Slurm sweep "
                             "that stopped is merged with ./testbed merge SLURM_DIR)")
    for option in args.slurm_option:
        slurm_script.check_option(option)
    if not args.dry_run and (why := missing_clients()):
        raise SlurmError(why)


def _libraries(exp: config.Experiment, args) -> tuple[dict, dict]:
    if not args.no_build and not os.environ.get("TESTBED_PREBUILT"):
        # A fresh machine: the README's main command installs what it needs itself.
        from testbed.toolchain import progress as progressmod
        from testbed.toolchain import system
        if system.missing() or any(not system.tool_path(t.binary) for t in system.CARGO_TOOLS):
            system.ensure_all(progressmod.Progress())
    found, missing = libsmod.resolve([e.name for e in exp.libraries], build=not args.no_build)
    if not args.no_build:
        arms.build_bench(exp, runner.warn)
    for e in exp.libraries:
        if e.name in missing:
            runner.warn(f"library {e.label} ({e.name}) is MISSING and will not run: {missing[e.name]}")
    return found, missing


def perf_setup(exp: config.Experiment) -> perfmod.PerfSetup:
    if not exp.perf_stat:
        runner.warn("perf stat is off for speed runs ([perf].stat = false): block runs carry no counters "
                    "(arms runs count per slice themselves)")
        return perfmod.PerfSetup(False, "off: [perf].stat = false (speed runs are not wrapped in perf stat)")
    perf = perfmod.detect(exp.perf_events, exp.perf_hardware)
    if not perf.available:
        runner.warn(f"perf unavailable: {perf.reason}; cells run without counters")
    elif perf.unsupported:
        runner.warn(f"perf events not countable on this host (skipped): {', '.join(perf.unsupported)}")
    return perf


def _start_run(plan: Plan, out_root: Path, found, missing, perf, est: float, design, note: str) -> None:
    exp = plan.exp
    run_id = runner.new_run_id(plan.shard)
    plan.run_dir = out_root / exp.name / run_id
    plan.manifest = open_run_dir(exp, plan.run_dir, plan.shard, plan.seed, plan.cells, found, missing, perf,
                                 est, design, note, plan.libs_option)


def open_run_dir(exp: config.Experiment, run_dir: Path, shard, seed: int, cells, found, missing, perf,
                 est: float, design, note: str, libs_option) -> manifestmod.RunManifest:
    """Create a new run directory (the experiment file's copy beside it) and its first
    manifest, with the competing host load at the start: every new run, a bisection
    step's too, starts here."""
    run_dir.mkdir(parents=True)
    run_writer.keep_toml(run_dir, exp.path)
    m = runner.initial_manifest(exp, run_dir.name, shard, seed, cells, found, missing, perf, est, sys.argv,
                                design, note)
    m.libs_option = list(libs_option)
    load = hostload.competing_cpu()
    m.host["competing_before"] = load
    if text := hostload.warning(load):
        runner.warn(text)
    return m


def _refresh_manifest(m: manifestmod.RunManifest, exp, found, missing, perf) -> bool:
    for lib in m.libraries:
        now_id = found[lib["name"]].info.get("build_id") if lib["name"] in found else None
        if lib.get("available") and now_id and lib.get("build_id") != now_id:
            fail(f"{lib['label']} is now build {now_id}, but this run started with build "
                 f"{lib.get('build_id')}; results of two builds never mix in one run (start a new run)")
            return False
    # Libraries may have become available (e.g. zlink built) or gone since.
    m.libraries = runner.library_table(exp, found, missing)
    m.missing_libraries = runner.missing_table(exp, missing)
    m.perf = perf.as_manifest()
    return True


def fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    m, s = divmod(seconds, 60)
    return f"{m // 60}h{m % 60:02d}m" if m >= 60 else f"{m}m{s:02d}s"


def _placement_warnings(exp: config.Experiment) -> list[str]:
    try:
        cpus = placement.usable_cpus(exp.cpus)
    except (placement.PlacementError, ValueError) as exc:
        return [str(exc)]
    out = []
    for p in exp.placement:
        try:
            placement.pins_for(p, cpus)
        except ValueError as exc:
            out.append(f"cells with placement {p!r} will fail: {exc}")
    return out


def _layout_text(exp: config.Experiment, design, cells) -> str:
    if not estimate.arms_likely(exp):
        return "; runs as blocks"
    if problem := arms.bench_variable_problem(cells):
        return f"; runs as blocks ({problem})"
    how = "arms" if design.layout == "arms" else "arms where it can (auto)"
    return f"; runs as {how}: {design.rounds} rounds of ~{design.slice_s:g} s slices per run"


def dry_run(exp: config.Experiment, cells, shard, seed: int, history: dict, design) -> int:
    names = [e.name for e in exp.libraries]
    found, missing = libsmod.resolve(names, build=False)
    print(f"experiment {exp.name} (profile {exp.profile}){f' shard {shard[0]}/{shard[1]}' if shard else ''}")
    print(f"  question: {exp.question}")
    print(f"  seed report: {exp.seed or 'none'}")
    for e in exp.libraries:
        state = "built" if e.name in found else f"NOT BUILT ({missing.get(e.name, '?')})"
        role = "reference" if e.label == exp.reference else "candidate"
        alias = f" = {e.name}" if e.label != e.name else ""
        print(f"  library {e.label}{alias} [{role}]: {state}")
    for warning in [*_placement_warnings(exp), estimate.budget_warning(cells, exp, history)]:
        if warning:
            print(f"  WARNING: {warning}")
    print(f"  {'pattern':<19}{'transport':<10}{'size':>8}{'count':>9}{'lat':>6} io  "
          "config        placement process     link     library   est")
    as_arms = estimate.runs_as_arms(exp, cells)
    for c in cells:
        est = estimate.cell_seconds(c, exp, history, as_arms)
        print(f"  {c.pattern:<19}{c.transport:<10}{c.msg_size:>8}{c.count:>9}{c.lat_count:>6} "
              f"{c.io_threads:>2}  {c.config[:12]:<13} {c.placement:<9} {c.process_model:<12} "
              f"{c.link[:8]:<8} {c.library:<9} {est:5.2f}s")
    low, high = estimate.bounds(cells, exp, history)
    measured = sum(1 for c in cells if estimate.cell_history_key(c, exp) in history)
    low_reps = design.min_repetitions
    reps = f"{low_reps}..{design.max_repetitions}" if design.adaptive else str(low_reps)
    print(f"cells: {len(cells)}; repetitions: {low_reps}; runs: {len(cells) * low_reps}; "
          f"shuffle seed: {seed}; per-cell timeout: {exp.timeout_s:g}s")
    print(f"design: repetitions {reps}, budget {design.time_budget_s or 'none'}, "
          f"min window {design.min_window_s:g}s, "
          + (f"latency warm-up {design.lat_warmup_s:g}s, " if design.lat_warmup_s else "")
          + (f"latency window >= {design.tail_round_trips} round trips above p99, "
             if design.tail_round_trips else "")
          + (f"stops on {'+'.join(design.stop_on)}, " if design.stop_on else "")
          + f"confidence {design.confidence:g}, margin {design.margin:g}"
          + (f" (configurations {design.config_margin:g})" if design.config_margin is not None else "")
          + _layout_text(exp, design, cells))
    if exp.ceiling is not None:
        probes = estimate.ceiling_seconds(cells, exp)
        blocks = len({c.block_id for c in cells if ceiling.bounds(exp, c)})
        print(f"ceiling: sizes {', '.join(map(str, exp.ceiling.sizes))}; {blocks} block(s) probed once per "
              f"repetition: about {fmt_duration(probes * low_reps)} at {low_reps} repetitions "
              f"({probes / max(blocks, 1):.2f}s a probe, included below)")
    if counting := estimate.counting_seconds(cells, exp):
        print(f"counting runs: {design.counting_runs} per block (syscall tracepoints, never timed): about "
              f"{fmt_duration(counting)}, inside the budget (included below)")
    span = fmt_duration(low) + (f" to {fmt_duration(high)}" if high > low else "")
    print(f"estimated duration: {span} (all listed libraries; {measured} of {len(cells)} "
          f"cells timed from earlier runs, the rest from a rough model)")
    return 0
