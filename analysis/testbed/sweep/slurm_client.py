"""The Slurm commands a sweep uses: sbatch to submit, squeue to watch, sacct when the
cluster keeps accounting, scancel to stop. Every call goes through the command-line
clients (no REST API, no library), so any cluster a user can submit to from a shell
works, and a missing or refusing client becomes one clear SlurmError."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

CLIENTS = ("sbatch", "squeue")
TIMEOUT_S = 60


class SlurmError(RuntimeError):
    """Slurm is absent or refused; the message names the command and its answer."""


@dataclass(frozen=True)
class TaskState:
    state: str      # PENDING, RUNNING, COMPLETING, ... (squeue) or COMPLETED, FAILED, ... (sacct)
    node: str       # where it runs or ran ("" while pending)
    reason: str = ""  # why it is pending (squeue), or its exit code (sacct)

    def text(self) -> str:
        where = f" on {self.node}" if self.node else ""
        why = f" ({self.reason})" if self.reason and self.reason != "None" else ""
        return f"{self.state}{where}{why}"


def missing_clients() -> str | None:
    """Why this machine cannot submit (None: it can)."""
    absent = [c for c in CLIENTS if shutil.which(c) is None]
    if absent:
        return (f"{' and '.join(absent)} not found on PATH: --slurm needs the Slurm client commands "
                "(Debian/Ubuntu package slurm-client) on a machine that can submit to the cluster")
    return None


def _call(argv: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    except FileNotFoundError:
        raise SlurmError(f"{argv[0]} not found on PATH") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{' '.join(argv)} did not answer within {TIMEOUT_S} s") from None


def _answer(proc: subprocess.CompletedProcess) -> str:
    return (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}").splitlines()[-1]


def submit(script: str) -> str:
    """sbatch the script; the job id (an array's id)."""
    proc = _call(["sbatch", "--parsable", script])
    if proc.returncode != 0:
        raise SlurmError(f"sbatch refused {script}: {_answer(proc)}")
    job_id = proc.stdout.strip().split(";")[0]  # --parsable: "id" or "id;cluster"
    if not job_id.isdigit():
        raise SlurmError(f"sbatch {script} printed no job id: {proc.stdout.strip()!r}")
    return job_id


def queued(job_id: str) -> dict[int, TaskState]:
    """Array task index -> state, for the tasks still in the queue (pending, running,
    completing). Empty once every task has left it."""
    proc = _call(["squeue", "--noheader", "--array", "--jobs", job_id, "--format", "%K|%T|%N|%r"])
    if proc.returncode != 0:
        # squeue forgets a job some minutes after it ends and then says so.
        if "Invalid job id" in proc.stderr:
            return {}
        raise SlurmError(f"squeue --jobs {job_id}: {_answer(proc)}")
    return parse_queue(proc.stdout)


def parse_queue(text: str) -> dict[int, TaskState]:
    out = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 4:
            continue
        index, state, node, reason = parts
        # A pending array not yet split into tasks shows one line "1-2" (or "1-2%1").
        for i in _indices(index):
            out[i] = TaskState(state, node, reason)
    return out


def _indices(text: str) -> list[int]:
    text = text.strip("[]").split("%")[0]
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit():
            out += range(int(lo), int(hi) + 1) if hi.isdigit() else [int(lo)]
    return out


def accounted(job_id: str) -> dict[int, TaskState]:
    """Array task index -> final state from sacct; empty where the cluster keeps no
    accounting (then the task's own exit-status file is the only witness)."""
    if shutil.which("sacct") is None:
        return {}
    proc = _call(["sacct", "--noheader", "--parsable2", "--allocations", "--jobs", job_id,
                  "--format", "JobID,State,NodeList,ExitCode"])
    if proc.returncode != 0:
        return {}
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.split("|")
        if len(parts) == 4 and "_" in parts[0]:
            index = parts[0].split("_", 1)[1]
            if index.isdigit():
                out[int(index)] = TaskState(parts[1].split()[0], parts[2], f"exit {parts[3]}")
    return out


def cancel(job_id: str) -> None:
    _call(["scancel", job_id])
