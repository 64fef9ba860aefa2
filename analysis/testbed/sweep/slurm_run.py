"""`./testbed run EXPERIMENT --slurm`: run a sweep as a Slurm array, one shard per
task, then merge the shards into one run.

The Slurm directory (results/<experiment>/<run-id>-slurm/) keeps everything the job
used and left: the sbatch script, slurm.json (job id, tasks, options), each task's log
and exit status (logs/), and the shards' run directories (shards/). The merged run is
a sibling directory (<run-id>-merged) like any `./testbed merge`. Each shard is whole
blocks (plan.shard): a comparison never spans two hosts. The submitter builds the
libraries first and the tasks run with --no-build, so the build directory and the
checkout must be on a filesystem every node sees (the usual shared home or project
directory of a cluster).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from testbed.records import manifest as manifestmod
from testbed.records import run_writer
from testbed.sweep import merge, runner
from testbed.sweep import slurm_client as client
from testbed.sweep import slurm_script as script

ANALYSIS_DIR = Path(__file__).resolve().parents[2]
# Seconds between two looks at the queue; tests shorten it.
POLL_S = float(os.environ.get("TESTBED_SLURM_POLL_S", "5"))
HEARTBEAT_S = 60      # a progress line at least this often, even when nothing changed
# How long a just-submitted job may be absent from squeue (the tests' fake scheduler,
# which never lists a job, shortens it where a task is lost on purpose).
FIRST_SIGHT_S = float(os.environ.get("TESTBED_SLURM_FIRST_SIGHT_S", "30"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--slurm", action="store_true",
                        help="run the shards as a Slurm array (sbatch), one shard per task, then merge")
    parser.add_argument("--slurm-tasks", type=int, default=None, metavar="N",
                        help="array tasks = shards (default: one per block of the sweep)")
    parser.add_argument("--slurm-partition", default=None, metavar="P", help="sbatch --partition")
    parser.add_argument("--slurm-option", action="append", default=[], metavar="OPT",
                        help="one more sbatch option, e.g. --slurm-option=--time=02:00:00 (repeatable)")
    parser.add_argument("--no-wait", action="store_true",
                        help="with --slurm: submit and return; merge later with ./testbed merge SLURM_DIR")


def is_slurm_dir(path: Path) -> bool:
    return run_writer.slurm_record(path).is_file()


def block_count(cells) -> int:
    return len({c.block_id for c in cells})


def task_count(requested: int | None, cells) -> int:
    blocks = block_count(cells)
    n = blocks if requested is None else requested
    if not 1 <= n <= blocks:
        raise ValueError(f"--slurm-tasks {n}: the sweep has {blocks} block(s) and a task runs whole blocks; "
                         f"choose 1 to {blocks}")
    return n


def job_spec(exp, profile: str, tasks: int, seed: int, libs: list[str], slurm_dir: Path,
             args: argparse.Namespace) -> script.JobSpec:
    command = [sys.executable, "-m", "testbed.cli", "run", str(Path(exp.path).resolve()),
               "--profile", profile, "--shard", f"{script.TASK}/{tasks}", "--seed", str(seed),
               "--out", str(slurm_dir / script.SHARDS_DIR), "--no-build", "--no-report"]
    if libs:
        command += ["--libs", ",".join(libs)]
    return script.JobSpec(exp.name, tasks, slurm_dir, ANALYSIS_DIR, command, args.slurm_partition,
                          list(args.slurm_option))


def submit(exp, cells, seed: int, libs: list[str], out_root: Path, args: argparse.Namespace) -> Path:
    """Write the Slurm directory and submit its script; the directory. SlurmError if
    sbatch refuses (the script stays, for the user to read or submit by hand)."""
    tasks = task_count(args.slurm_tasks, cells)
    slurm_dir = (out_root / exp.name / (runner.new_run_id(None) + "-slurm")).resolve()
    (slurm_dir / script.LOG_DIR).mkdir(parents=True)
    spec = job_spec(exp, exp.profile, tasks, seed, libs, slurm_dir, args)
    script_path = slurm_dir / script.SCRIPT_NAME
    script_path.write_text(script.text(spec))
    record = {"schema": "testbed.slurm/1", "experiment": exp.name, "profile": exp.profile, "tasks": tasks,
              "seed": seed, "partition": args.slurm_partition, "options": list(args.slurm_option),
              "script": str(script_path), "job_id": None, "submitted_at": None}
    _save(slurm_dir, record)
    try:
        record["job_id"] = client.submit(str(script_path))
    except client.SlurmError as exc:
        raise client.SlurmError(f"{exc} (the script is kept: {script_path})") from None
    record["submitted_at"] = runner.now()
    _save(slurm_dir, record)
    print(f"testbed run: slurm job {record['job_id']}: {tasks} array task(s) of {exp.name} ({exp.profile}), "
          f"{len(cells)} cells; script and logs in {slurm_dir}", file=sys.stderr, flush=True)
    return slurm_dir


def _save(slurm_dir: Path, record: dict) -> None:
    run_writer.slurm_record(slurm_dir).write_text(json.dumps(record, indent=2) + "\n")


def load_record(slurm_dir: Path) -> dict:
    try:
        return json.loads(run_writer.slurm_record(slurm_dir).read_text())
    except (OSError, ValueError) as exc:
        raise client.SlurmError(f"{run_writer.slurm_record(slurm_dir)}: unreadable ({exc})") from None


def _progress_line(queue: dict[int, client.TaskState], tasks: int) -> str:
    parts = [f"task {i} {queue[i].text()}" for i in sorted(queue)]
    left = tasks - len(queue)
    return ", ".join(parts + ([f"{left} of {tasks} left the queue"] if left else [])) or "none queued"


def wait(slurm_dir: Path, poll_s: float = POLL_S) -> dict[int, client.TaskState]:
    """Watch the job until every task has left the queue, printing a line whenever a
    task's state changes; the last state seen of each task."""
    record = load_record(slurm_dir)
    job_id, tasks = record["job_id"], record["tasks"]
    seen: dict[int, client.TaskState] = {}
    shown, shown_at, start = None, 0.0, time.monotonic()
    while True:
        queue = client.queued(job_id)
        seen.update(queue)
        elapsed = time.monotonic() - start
        line = _progress_line(queue, tasks)
        if line != shown or time.monotonic() - shown_at >= HEARTBEAT_S:
            print(f"testbed run: slurm job {job_id} [{int(elapsed)}s]: {line}", file=sys.stderr, flush=True)
            shown, shown_at = line, time.monotonic()
        if not queue and (seen or elapsed >= FIRST_SIGHT_S or _all_statuses(slurm_dir, tasks)):
            return seen
        time.sleep(poll_s)


def _all_statuses(slurm_dir: Path, tasks: int) -> bool:
    return all(script.status_path(slurm_dir, i).is_file() for i in range(1, tasks + 1))


@dataclass
class TaskOutcome:
    index: int
    tasks: int
    exit: int | None            # the shard's exit status (None: the task never wrote one)
    state: str                  # Slurm's last word on the task (sacct, else squeue, else "?")
    run_dir: Path | None        # the shard's run directory, if the task got that far
    host: str | None

    @property
    def ok(self) -> bool:
        return self.exit == 0

    def text(self) -> str:
        where = f" on {self.host}" if self.host else ""
        if self.exit is None:
            what = f"no exit status (Slurm state {self.state}: killed, cancelled or never started)"
        elif self.exit == 1:
            what = "exit 1 (some cells failed or timed out; listed in the merged summary)"
        else:
            what = f"exit {self.exit}"
        return f"task {self.index} (shard {self.index}/{self.tasks}){where}: {'ok' if self.ok else what}"

    def as_record(self) -> dict:
        return {"task": self.index, "exit": self.exit, "state": self.state, "host": self.host,
                "run_dir": str(self.run_dir) if self.run_dir else None}


def _shard_runs(slurm_dir: Path) -> dict[int, Path]:
    """Shard index -> its run directory (the newest, if Slurm ran a task twice)."""
    out: dict[int, Path] = {}
    for run in run_writer.manifests_under(slurm_dir / script.SHARDS_DIR, depth=2):
        shard = manifestmod.load(run).shard or {}
        if shard.get("index"):
            if shard["index"] in out:
                runner.warn(f"shard {shard['index']} ran twice; merging the later run {run}")
            out[shard["index"]] = run
    return out


def outcomes(slurm_dir: Path, seen: dict[int, client.TaskState] | None = None) -> list[TaskOutcome]:
    record = load_record(slurm_dir)
    tasks = record["tasks"]
    final = {**(seen or {}), **(client.accounted(record["job_id"]) if record.get("job_id") else {})}
    runs = _shard_runs(slurm_dir)
    out = []
    for i in range(1, tasks + 1):
        status = script.status_path(slurm_dir, i)
        text = status.read_text().strip() if status.is_file() else ""
        host = (manifestmod.load(runs[i]).host or {}).get("hostname") if i in runs else None
        state = final[i].state if i in final else "?"
        out.append(TaskOutcome(i, tasks, int(text) if text.lstrip("-").isdigit() else None, state,
                               runs.get(i), host or (final[i].node if i in final else None)))
    return out


def _still_queued(record: dict) -> None:
    if record.get("job_id") and client.missing_clients() is None:
        queue = client.queued(record["job_id"])
        if queue:
            state = _progress_line(queue, record["tasks"])
            raise client.SlurmError(f"slurm job {record['job_id']} is not over ({state}); "
                                    "merge when every task has left the queue")


def finish(slurm_dir: Path, out_root: Path, seen: dict | None = None) -> tuple[int, Path | None]:
    """Merge what the tasks left; (exit status, merged run or None). 0: every task
    finished cleanly; 1: a task failed (named; the finished shards are merged)."""
    record = load_record(slurm_dir)
    if seen is None:
        _still_queued(record)
    results = outcomes(slurm_dir, seen)
    for o in results:
        print(f"testbed run: slurm {o.text()}; log {script.log_path(slurm_dir, o.index)}",
              file=sys.stderr, flush=True)
    runs = [o.run_dir for o in results if o.run_dir is not None]
    if not runs:
        print(f"testbed run: no task of slurm job {record.get('job_id')} left a run; nothing to merge "
              f"(logs in {slurm_dir / script.LOG_DIR})", file=sys.stderr)
        return 1, None
    extra = {"slurm": {"job_id": record.get("job_id"), "tasks": record["tasks"],
                       "partition": record.get("partition"), "options": record.get("options", []),
                       "dir": str(slurm_dir), "outcomes": [o.as_record() for o in results]}}
    try:
        out_dir = merge.merge(runs, out_root, extra)
    except (manifestmod.ManifestError, merge.MergeError) as exc:
        raise client.SlurmError(f"merging the shards of {slurm_dir}: {exc}") from None
    failed = [o for o in results if not o.ok]
    if failed:
        print(f"testbed run: {len(failed)} of {len(results)} slurm task(s) did not finish cleanly: "
              + "; ".join(o.text() for o in failed), file=sys.stderr)
    return (1 if failed else 0), out_dir


def run(exp, cells, seed: int, libs: list[str], out_root: Path, args: argparse.Namespace,
        on_finished=None) -> int:
    """Submit, watch, merge, and hand the merged run to `on_finished` (the report)."""
    slurm_dir = submit(exp, cells, seed, libs, out_root, args)
    if args.no_wait:
        print(f"testbed run: not waiting; when the job is over: ./testbed merge {slurm_dir}", file=sys.stderr)
        return 0
    try:
        seen = wait(slurm_dir)
    except KeyboardInterrupt:
        job_id = load_record(slurm_dir)["job_id"]
        print(f"testbed run: stopped watching; slurm job {job_id} keeps running (scancel {job_id} stops it; "
              f"./testbed merge {slurm_dir} once it is over)", file=sys.stderr)
        return 130
    code, merged_dir = finish(slurm_dir, out_root, seen)
    if merged_dir is not None and not args.no_report and on_finished is not None:
        on_finished(merged_dir)
    return code
