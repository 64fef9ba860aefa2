"""A real single-node Slurm for tests: munged, slurmctld and slurmd from the distribution's
packages, started as root with private state, spool, socket and key in a temporary
directory and ports nobody listens on, so it neither needs nor touches a system Slurm.

The daemons run in the foreground as children of the test process with a parent-death
signal, so they die with it even if pytest is killed; `stop()` cancels every job,
waits for the queue to drain, ends the daemons by pid and then any job process still
carrying this cluster's SLURM_CONF (slurmstepd starts its own session, so it would
outlive slurmd otherwise).
"""
from __future__ import annotations

import ctypes
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo")
PR_SET_PDEATHSIG = 1


def unavailable() -> str | None:
    """Why a cluster cannot start here (None: it can)."""
    absent = [t for t in DAEMONS + CLIENTS if shutil.which(t) is None]
    if absent:
        return (f"Slurm is not installed ({', '.join(absent)} missing; Debian packages slurmctld slurmd "
                "munge slurm-client, which ./testbed setup installs as root)")
    if os.geteuid() != 0:
        return f"a private slurmd must run as root (running as uid {os.geteuid()})"
    return None


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _free_port_pair() -> tuple[int, int]:
    """Two consecutive ports below the ephemeral range that nothing listens on now."""
    for _ in range(200):
        port = random.randrange(20000, 32000, 2)
        if all(_bindable(p) for p in (port, port + 1)):
            return port, port + 1
    raise RuntimeError("no two free ports found in 20000-32000")


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


class Cluster:
    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="tb-slurm-"))
        self.conf = self.dir / "slurm.conf"
        self.procs: dict[str, subprocess.Popen] = {}
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    # munged refuses a socket directory others cannot enter and a key others can read.
    def _layout(self) -> None:
        for name, mode in (("run", 0o755), ("etc", 0o700), ("log", 0o700), ("state", 0o700),
                           ("spool", 0o755)):
            (self.dir / name).mkdir(mode=mode)
        self.dir.chmod(0o755)
        key = self.dir / "etc" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)

    def _node_line(self) -> str:
        # `slurmd -C` prints this host's NodeName, CPUs, sockets, cores and memory.
        out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30, check=True).stdout
        node = next(line for line in out.splitlines() if line.startswith("NodeName="))
        self.node = node.split()[0].split("=", 1)[1]
        return f"{node} NodeAddr=127.0.0.1"

    def _write_conf(self) -> None:
        ctld_port, slurmd_port = _free_port_pair()
        d = self.dir
        node = self._node_line()
        self.conf.write_text("\n".join([
            "ClusterName=testbedtest", f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={ctld_port}", f"SlurmdPort={slurmd_port}",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={d / 'run' / 'munge.sock'}",
            "SlurmUser=root", "SlurmdUser=root",
            f"StateSaveLocation={d / 'state'}", f"SlurmdSpoolDir={d / 'spool'}",
            f"SlurmctldPidFile={d / 'run' / 'slurmctld.pid'}", f"SlurmdPidFile={d / 'run' / 'slurmd.pid'}",
            f"SlurmctldLogFile={d / 'log' / 'slurmctld.log'}", f"SlurmdLogFile={d / 'log' / 'slurmd.log'}",
            # no cgroups in a container: track job processes through /proc
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "MpiDefault=none", "ReturnToService=2", "MinJobAge=600",
            node, f"PartitionName=testbed Nodes={self.node} Default=YES MaxTime=INFINITE State=UP", ""]))

    def _start(self, name: str, argv: list[str]) -> None:
        log = open(self.dir / "log" / f"{name}.out", "w")  # noqa: SIM115 - closed with the process
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                            preexec_fn=_die_with_parent)
        log.close()

    def start(self, timeout_s: float = 60) -> Cluster:
        self._layout()
        self._write_conf()
        d = self.dir
        self._start("munged", ["munged", "--foreground", f"--socket={d / 'run' / 'munge.sock'}",
                               f"--key-file={d / 'etc' / 'munge.key'}",
                               f"--pid-file={d / 'run' / 'munged.pid'}",
                               f"--log-file={d / 'log' / 'munged.log'}", f"--seed-file={d / 'etc' / 'seed'}"])
        self._wait_for(lambda: (d / "run" / "munge.sock").exists(), "munged's socket", timeout_s)
        self._start("slurmctld", ["slurmctld", "-D", "-f", str(self.conf)])
        self._start("slurmd", ["slurmd", "-D", "-f", str(self.conf)])
        self._wait_for(self._idle, f"node {self.node} idle in sinfo", timeout_s)
        return self

    def _idle(self) -> bool:
        proc = subprocess.run(["sinfo", "--noheader", "--format", "%T"], capture_output=True, text=True,
                              env=self.env, timeout=30)
        return proc.returncode == 0 and proc.stdout.strip() == "idle"

    def _wait_for(self, ready, what: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{', '.join(dead)} exited while waiting for {what}:\n{self.logs()}")
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"no {what} after {timeout_s:g} s:\n{self.logs()}")

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                         for p in sorted((self.dir / "log").glob("*")) if p.is_file())

    def stop(self) -> list[int]:
        """Stop everything this cluster started; the pids of job processes that had to be
        killed (they outlived the cancel)."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            subprocess.run(["scancel", "--user", str(os.geteuid())], env=self.env, capture_output=True,
                           timeout=30)
            self._wait_quietly(lambda: not subprocess.run(["squeue", "--noheader"], env=self.env,
                                                          capture_output=True, text=True,
                                                          timeout=30).stdout.strip(), 30)
            # a cancelled task's processes get SIGTERM, then SIGKILL after Slurm's KillWait
            self._wait_quietly(lambda: not self._job_pids(), 40)
        for name in reversed(DAEMONS):
            proc = self.procs.get(name)
            if proc and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        killed = self._kill_leftover_jobs()
        shutil.rmtree(self.dir, ignore_errors=True)
        return killed

    def _wait_quietly(self, done, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not done():
            time.sleep(0.3)

    def _job_pids(self) -> list[int]:
        """Processes that carry this cluster's SLURM_CONF, other than its daemons and
        their direct children (slurmctld's slurmscriptd lives as long as slurmctld: counted
        as a job, it made every stop wait the full 40 s): the jobs' (and slurmstepd's,
        which detaches from slurmd) processes."""
        mark = f"SLURM_CONF={self.conf}".encode()
        daemons = {p.pid for p in self.procs.values() if p.poll() is None} | {os.getpid()}
        out = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) in daemons:
                continue
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if parent not in daemons and mark in (entry / "environ").read_bytes().split(b"\0"):
                    out.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
        return out

    def _kill_leftover_jobs(self) -> list[int]:
        killed: list[int] = []
        for _ in range(3):  # again: a process may have been forking during the last look
            pids = self._job_pids()
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
            if not pids:
                break
            time.sleep(0.2)
        return killed
