"""`./testbed run faults` / `./testbed run faults-soak`: an experiment of kind "faults"
or "faults-soak" (commands/run_cmd.py hands it here by its kind). Takes the sweep's
command line; the options a faults run has no use for are refused, not ignored.

A complete run of the default or full profile is published: its report, manifest and
records are copied to reports/<experiment>/<run-id>/ (the quick profile's are not).
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
from dataclasses import replace
from pathlib import Path

from testbed import paths
from testbed.records import fault_run_dir
from testbed.records.fault_run_dir import FaultRunDir
from testbed.sweep import config as sweep_config
from testbed.sweep.toml_reader import ExperimentError
from testbed.toolchain import libraries

from . import config, report, runner, soak

UNSUPPORTED = (("shard", "--shard"), ("libs", "--libs"), ("slurm", "--slurm"))


def main(args: argparse.Namespace) -> int:
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        return _main(args)
    except (ExperimentError, fault_run_dir.FaultRunError) as exc:
        print(f"testbed run: {exc}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminated(signum, frame) -> None:
    """SIGTERM stops a run as Ctrl-C does: every driver and the proxy stopped, the run
    marked interrupted (and resumable)."""
    raise KeyboardInterrupt


def _main(args: argparse.Namespace) -> int:
    for attr, flag in UNSUPPORTED:
        if getattr(args, attr, None):
            raise ExperimentError(
                flag,
                flag,
                "a faults experiment runs whole on this host",
                "--profile, --out, --resume, --seed, --dry-run, --no-build, --no-report",
            )
    path = sweep_config.experiment_path(args.experiment)
    exp = config.load(path, args.profile or "default", libraries.registered_names())
    out_root = args.out or paths.RESULTS_DIR
    if args.dry_run:
        return dry_run(exp, args.seed)
    if args.resume:
        run_dir = _resume_dir(out_root / exp.name, args.resume)
        run = FaultRunDir.open(run_dir)
        seed = run.manifest()["seed"]
        exp = config.load(run.toml_copy(), run.manifest()["profile"], libraries.registered_names())
    else:
        run_dir = out_root / exp.name / runner.new_run_id()
        seed = args.seed if args.seed is not None else default_seed(exp)
    if exp.kind == "faults-soak":
        code = soak.run(exp, run_dir, seed, build=not args.no_build)
    else:
        code = runner.run(exp, run_dir, seed, build=not args.no_build, resume=bool(args.resume))
    if code == 130 or args.no_report:
        return code
    out = (soak.render if exp.kind == "faults-soak" else report.render)(run_dir)
    print(f"testbed run: report written to {out}", file=sys.stderr)
    m = FaultRunDir.at(run_dir).manifest()
    if m.get("proxy_failure"):  # its report says why; a soak that did not run as planned answers nothing
        print(f"testbed run: not published: the fault proxy failed ({m['proxy_failure']})", file=sys.stderr)
        return code or 1
    if m["status"] == "complete" and exp.profile != "quick":
        print(f"testbed run: published to {publish(run_dir, exp.name)}", file=sys.stderr)
    return code


def default_seed(exp: config.FaultsExperiment) -> int:
    """A run's seed without --seed: a soak's is its [soak].seed (the same faults at the
    same times on every run, as its README says), a matrix's a fresh draw. Either way
    it is the manifest's "seed", and every seeded draw of the run derives from it."""
    return exp.soak.seed if exp.soak else random.randrange(2**31)


def _resume_dir(root: Path, resume: str) -> Path:
    if resume != "latest":
        return Path(resume)
    runs = fault_run_dir.runs_under(root)
    unfinished = [run.path for run in runs if run.manifest()["status"] != "complete"]
    if not unfinished:
        raise ExperimentError(root, "--resume", "no unfinished run to resume", "an explicit RUN_DIR")
    return unfinished[-1]


def publish(run_dir: Path, name: str) -> Path:
    """reports/<name>/<run-id>/: the report, the manifest, the toml and the records
    (gzipped); never the raw logs (they stay in results/)."""
    return FaultRunDir.at(run_dir).publish(paths.REPORTS_DIR / name / run_dir.name).path


def dry_run(exp: config.FaultsExperiment, seed: int | None = None) -> int:
    if exp.soak and seed is not None:  # the schedule --seed would give
        exp = replace(exp, soak=replace(exp.soak, seed=seed))
    cells = exp.cells()
    s = exp.schedule
    per_run = s.startup_s + s.warmup_s + s.fault_s + s.recover_s + s.drain_s + 1.0
    print(f"experiment {exp.name} ({exp.kind}, profile {exp.profile})\n  question: {exp.question}")
    if exp.soak:
        plan = soak.schedule(exp, len(soak.pairs(exp)))
        print(
            f"  soak: {exp.soak.duration_s:g} s, {len(plan)} faults (seed {exp.soak.seed}), "
            f"{len(soak.pairs(exp))} pairs per library:"
        )
        for c in soak.pairs(exp):
            print(f"  {c.key().rsplit('/', 1)[0]}")
        return 0
    for c in cells:
        print(f"  {c.key()}")
    runs = len(cells) * exp.repetitions * len(exp.libraries)
    print(
        f"cells: {len(cells)}; repetitions: {exp.repetitions}; runs: {runs}, "
        f"{exp.concurrency} pairs at a time; about {runs * per_run / exp.concurrency / 60:.0f} min"
    )
    return 0
