"""The sbatch script of a Slurm sweep: one array task per shard, each shard a whole
set of blocks (plan.shard), run on one node with the node to itself.

Why these directives:
- --array=1-N: the task index is the shard index (1-based, as --shard I/N).
- --nodes=1 --ntasks=1: a shard is one `./testbed run`, so every paired comparison in
  it (library against library, configuration against configuration) ran on one host.
- --exclusive: no other job shares the node while the shard measures.
- --export=ALL: the task sees the submitter's environment (TESTBED_* paths, PATH),
  whatever the cluster's default.
The task writes its exit status to a file beside its log: a cluster without
accounting (sacct) still tells a finished task from one Slurm killed.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

SCRIPT_NAME = "sweep.sbatch"
TASK = "@TASK@"  # in JobSpec.command: the array task's index (= the shard index)
LOG_DIR = "logs"
SHARDS_DIR = "shards"


def log_path(slurm_dir: Path, index: int | str) -> Path:
    return slurm_dir / LOG_DIR / f"task-{index}.out"


def status_path(slurm_dir: Path, index: int | str) -> Path:
    return slurm_dir / LOG_DIR / f"task-{index}.rc"


@dataclass
class JobSpec:
    experiment: str             # name of the job (what squeue shows)
    tasks: int
    slurm_dir: Path             # absolute: tasks may start in another directory
    workdir: Path               # where the task's command runs (the analysis package)
    command: list[str]          # the shard's ./testbed run, TASK where the shard index goes
    partition: str | None = None
    options: list[str] = field(default_factory=list)  # extra sbatch options, verbatim


def check_option(option: str) -> str:
    """An extra sbatch option must look like one (it becomes an #SBATCH line)."""
    if not option.startswith("-") or "\n" in option:
        raise ValueError(f"--slurm-option {option!r}: expected one sbatch option such as --time=02:00:00 "
                         "or --constraint=quiet (given as --slurm-option=--time=02:00:00)")
    return option


def text(job: JobSpec) -> str:
    directives = [f"--job-name=testbed-{job.experiment}", f"--array=1-{job.tasks}", "--nodes=1",
                  "--ntasks=1", "--exclusive", "--export=ALL",
                  f"--output={job.slurm_dir / LOG_DIR / 'task-%a.out'}"]
    if job.partition:
        directives.append(f"--partition={job.partition}")
    directives += [check_option(o) for o in job.options]  # last: an explicit option wins
    command = shlex.join(job.command).replace(TASK, "${SLURM_ARRAY_TASK_ID}")
    rc_file = shlex.quote(str(job.slurm_dir / LOG_DIR)) + '/task-"$SLURM_ARRAY_TASK_ID".rc'
    lines = ["#!/bin/bash",
             f"# ./testbed run {job.experiment} --slurm: shard $SLURM_ARRAY_TASK_ID of {job.tasks} "
             "per array task.",
             *(f"#SBATCH {d}" for d in directives),
             "",
             'echo "testbed: shard $SLURM_ARRAY_TASK_ID/' + str(job.tasks)
             + ' on $(hostname), job $SLURM_JOB_ID"',
             f"cd {shlex.quote(str(job.workdir))} || exit 2",
             command,
             "rc=$?",
             f"echo $rc > {rc_file}",
             "exit $rc",
             ""]
    return "\n".join(lines)
