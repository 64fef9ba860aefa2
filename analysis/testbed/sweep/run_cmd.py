"""`./testbed run EXPERIMENT`: expand an experiment's sweep and run it (or --dry-run it).

Exit status: 0 every planned run of the available libraries succeeded; 1 some cell
failed or timed out (listed in the summary and the manifest); 2 bad input;
130 interrupted (the run directory is resumable; the command to resume is printed).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
from pathlib import Path

from testbed import paths
from testbed.sweep import config, runner
from testbed.sweep import libs as libsmod
from testbed.sweep import perf as perfmod
from testbed.sweep import plan as planmod
from testbed.sweep.config import ExperimentError


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
    parser.add_argument("--no-report", action="store_true", help="do not render the report at the end")


def fail(text: str) -> int:
    print(f"testbed run: {text}", file=sys.stderr)
    return 2


def main(args: argparse.Namespace) -> int:
    try:
        return _main(args)
    except (ExperimentError, ValueError) as exc:  # bad input: one line, no traceback
        return fail(str(exc))


def _find_resume(out_root: Path, exp_name: str, resume: str) -> Path:
    if resume != "latest":
        run_dir = Path(resume)
        if not (run_dir / "manifest.json").is_file():
            raise ExperimentError(run_dir, "--resume", "not a run directory (no manifest.json)",
                                  f"a directory under {out_root / exp_name}")
        return run_dir
    candidates = []
    for m in sorted((out_root / exp_name).glob("*/manifest.json")):
        status = json.loads(m.read_text()).get("status")
        if status != "complete":
            candidates.append(m.parent)
    if not candidates:
        raise ExperimentError(out_root / exp_name, "--resume", "no unfinished run to resume",
                              "an explicit RUN_DIR or a run without --resume")
    return candidates[-1]


def _main(args: argparse.Namespace) -> int:
    out_root = args.out or paths.RESULTS_DIR
    names = libsmod.known_names()
    manifest = None
    if args.resume:
        run_dir = _find_resume(out_root, config.experiment_path(args.experiment).parent.name, args.resume)
        manifest = json.loads((run_dir / "manifest.json").read_text())
        if args.profile and args.profile != manifest["profile"]:
            return fail(f"--profile {args.profile} differs from the run's profile {manifest['profile']}")
        if args.shard:
            return fail("--shard cannot change on --resume (the run directory records its shard)")
        exp = config.load(run_dir / runner.TOML_COPY, manifest["profile"], names)
        if exp.name != manifest["experiment"]:
            return fail(f"{run_dir} is a run of {manifest['experiment']}, not {exp.name}")
        source = Path(manifest["experiment_source"])
        if source.is_file():
            changed = config.load(source, manifest["profile"], names).toml_sha256 != exp.toml_sha256
        else:
            changed = False
        if changed:
            runner.warn(f"{source} changed since this run started; resuming with the run's own copy")
        shard = (manifest["shard"]["index"], manifest["shard"]["total"]) if manifest["shard"] else None
        seed = manifest["shuffle_seed"]
    else:
        exp = config.load(config.experiment_path(args.experiment), args.profile or "default", names)
        shard = planmod.parse_shard(args.shard) if args.shard else None
        seed = args.seed if args.seed is not None else random.randrange(2**31)
    cells = planmod.expand(exp)
    if shard:
        cells = planmod.shard(cells, *shard)
    if not cells:
        return fail(f"{exp.path}: the sweep expands to no cells (check [[sweep.exclude]] and --shard)")
    if args.dry_run:
        return dry_run(exp, cells, shard, seed, runner.load_history(out_root))

    lib_names = [e.name for e in exp.libraries]
    if not args.no_build and not os.environ.get("TESTBED_PREBUILT"):
        # A fresh machine: the README's main command installs what it needs itself.
        from testbed.toolchain import progress as progressmod
        from testbed.toolchain import system
        if system.missing() or any(not system.tool_path(t.binary) for t in system.CARGO_TOOLS):
            system.ensure_all(progressmod.Progress())
    found, missing = libsmod.resolve(lib_names, build=not args.no_build)
    for e in exp.libraries:
        if e.name in missing:
            runner.warn(f"library {e.label} ({e.name}) is MISSING and will not run: {missing[e.name]}")
    if not found:
        return fail("no library of this experiment is available; nothing to run (see warnings above)")
    perf = perfmod.detect(exp.perf_events, exp.perf_hardware)
    if not perf.available:
        runner.warn(f"perf unavailable: {perf.reason}; cells run without counters")
    elif perf.unsupported:
        runner.warn(f"perf events not countable on this host (skipped): {', '.join(perf.unsupported)}")
    estimate = runner.wall_estimate([c for c in cells if c.library_name in found], exp,
                                    runner.load_history(out_root))
    if manifest is None:
        run_id = runner.new_run_id(shard)
        run_dir = out_root / exp.name / run_id
        run_dir.mkdir(parents=True)
        shutil.copyfile(exp.path, run_dir / runner.TOML_COPY)
        manifest = runner.initial_manifest(exp, run_id, shard, seed, cells, found, missing, perf,
                                           estimate, sys.argv)
    else:
        for lib in manifest["libraries"]:
            now_id = found[lib["name"]].info.get("build_id") if lib["name"] in found else None
            if lib.get("available") and now_id and lib.get("build_id") != now_id:
                return fail(f"{lib['label']} is now build {now_id}, but this run started with build "
                            f"{lib.get('build_id')}; results of two builds never mix in one run "
                            "(start a new run)")
        # Libraries may have become available (e.g. zlink built) or gone since.
        manifest["libraries"] = runner.library_table(exp, found, missing)
        manifest["missing_libraries"] = [{"label": e.label, "name": e.name, "reason": missing[e.name]}
                                         for e in exp.libraries if e.name in missing]
        manifest["perf"] = perf.as_manifest()
    print(f"testbed run: {exp.name} ({exp.profile}): {len(cells)} cells x {exp.repetitions} repetitions, "
          f"estimated {fmt_duration(estimate)}; results in {run_dir}", file=sys.stderr)
    ctx = runner.RunContext(exp, run_dir, manifest, cells, found, missing,
                            runner.resume_command(exp, run_dir))
    code = runner.run(ctx, seed, perf)
    if shard and code != 130:
        print(f"testbed run: shard {shard[0]}/{shard[1]} done; when every shard is, join them with "
              f"./testbed merge <run dirs> and report the merged run", file=sys.stderr)
    elif code != 130 and not args.no_report:
        render_report(run_dir)
    return code


def render_report(run_dir: Path) -> None:
    try:
        from testbed.results.report import render_run
    except ImportError:
        print(f"testbed run: no report renderer yet; raw results are in {run_dir}", file=sys.stderr)
        return
    try:
        out = render_run(run_dir)
        print(f"testbed run: report written to {out}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - the run's data is safe even if rendering breaks
        print(f"testbed run: report rendering failed ({type(exc).__name__}: {exc}); "
              f"raw results are in {run_dir}", file=sys.stderr)


def fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    m, s = divmod(seconds, 60)
    return f"{m // 60}h{m % 60:02d}m" if m >= 60 else f"{m}m{s:02d}s"


def dry_run(exp: config.Experiment, cells, shard, seed: int, history: dict) -> int:
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
    print(f"  {'pattern':<19}{'transport':<10}{'size':>8}{'count':>9}{'lat':>6} io  "
          "config        library   est")
    for c in cells:
        est = planmod.estimate_cell_seconds(c, exp, exp.hyperfine_runs, history)
        print(f"  {c.pattern:<19}{c.transport:<10}{c.msg_size:>8}{c.count:>9}{c.lat_count:>6} "
              f"{c.io_threads:>2}  {c.config[:12]:<13} {c.library:<9} {est:5.2f}s")
    total = runner.wall_estimate(cells, exp, history)
    measured = sum(1 for c in cells if planmod.cell_history_key(c) in history)
    print(f"cells: {len(cells)}; repetitions: {exp.repetitions}; runs: {len(cells) * exp.repetitions}; "
          f"shuffle seed: {seed}; pin: {exp.pin or 'none'}; per-cell timeout: {exp.timeout_s:g}s")
    print(f"estimated duration: {fmt_duration(total)} (all listed libraries; {measured} of {len(cells)} "
          f"cells timed from earlier runs, the rest from a rough model)")
    return 0
