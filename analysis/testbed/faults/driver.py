"""The fault driver (faults/): built once per library from the one source, with the
same flags for every library (as bench/), cached by a key over its source, the
library's build and the compiler; and one running driver process."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from testbed import paths
from testbed.toolchain import buildcache, cmake, compiler_cache, keys, libraries
from testbed.toolchain.progress import Progress

from .proxy import die_with_parent

SOURCE_DIR = paths.REPO_ROOT / "faults"
BUILD_ROOT = paths.BUILD_DIR / "faults"
FLAGS = ["-DCMAKE_BUILD_TYPE=Release"]
MARKER = ".testbed-faults.json"
BINARY = "fault_driver"


def driver_key(info: dict) -> str:
    return keys.build_key(
        kind="fault-driver",
        source=keys.tree_hash(SOURCE_DIR),
        library=info["name"],
        library_build_id=info["build_id"],
        flags=FLAGS,
        tools=keys.toolchain_id(),
    )


def ensure(lib: libraries.LibraryBuild, progress: Progress) -> Path:
    """The driver built against `lib` (built now if needed); returns its folder."""
    info = lib.info

    def build(work: Path) -> None:
        progress.step(f"building faults/ against {info['name']} ({info['build_id']})")
        log = work / "testbed-build.log"
        cmake.configure(
            SOURCE_DIR,
            work,
            [
                *FLAGS,
                *compiler_cache.launcher_flags(),
                f"-DFAULTS_LIB_PREFIX={lib.prefix}",
                f"-DFAULTS_LIB_LINK_NAME={info['link_name']}",
                f"-DFAULTS_LIB_NAME={info['name']}",
            ],
            progress,
            title=f"faults[{info['name']}]",
            log=log,
        )
        cmake.build(work, progress, title=f"faults[{info['name']}]", log=log)
        if not (work / BINARY).is_file():
            raise RuntimeError(f"faults/ build against {info['name']} produced no {BINARY} in {work}")
        (work / MARKER).write_text(
            json.dumps(
                {
                    "library": info["name"],
                    "library_build_id": info["build_id"],
                    "key": driver_key(info),
                    "flags": FLAGS,
                },
                indent=1,
            )
            + "\n"
        )

    return buildcache.cached(BUILD_ROOT / info["name"], driver_key(info), MARKER, build)


@dataclass
class Driver:
    """One fault_driver process: its stdout read line by line without blocking."""

    role: str
    epoch: int
    proc: subprocess.Popen
    log: Path
    events: Path
    stderr: Path
    lines: list[str] = field(default_factory=list)
    killed_by_us: bool = False
    hung: bool = False
    rand_seed: int | None = None  # what it gave srand() (--seed-rand), if anything
    _buffer: str = ""

    @classmethod
    def start(cls, binary: Path, args: list[str], role: str, epoch: int, work: Path) -> Driver:
        stem = f"{role}-{epoch}"
        log, events, stderr = work / f"{stem}.rec", work / f"{stem}.events", work / f"{stem}.stderr"
        with open(stderr, "wb") as err:
            # Its own process group (not its own session: a session per process is a
            # scheduling group per process under autogroups, experiments/README.md), so a
            # Ctrl-C reaches the runner only, which then stops every driver itself.
            proc = subprocess.Popen(
                [
                    str(binary),
                    *args,
                    "--role",
                    role,
                    "--epoch",
                    str(epoch),
                    "--log",
                    str(log),
                    "--events",
                    str(events),
                ],
                stdout=subprocess.PIPE,
                stderr=err,
                stdin=subprocess.DEVNULL,
                process_group=0,
                preexec_fn=die_with_parent,
            )
        os.set_blocking(proc.stdout.fileno(), False)
        return cls(role, epoch, proc, log, events, stderr)

    def _pump(self, timeout: float) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if sel.select(timeout):
                chunk = self.proc.stdout.read()
                if chunk:
                    self._buffer += chunk.decode(errors="replace")
                    *done, self._buffer = self._buffer.split("\n")
                    self.lines.extend(done)
        finally:
            sel.close()

    def wait_line(self, prefix: str, timeout: float) -> str | None:
        """The first stdout line starting with `prefix`, or None (exited / timed out)."""
        deadline = time.monotonic() + timeout
        while True:
            for line in self.lines:
                if line.startswith(prefix):
                    return line
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if self.proc.poll() is not None:
                self._pump(0)
                return next((line for line in self.lines if line.startswith(prefix)), None)
            self._pump(min(left, 0.1))

    def signal(self, sig: int) -> None:
        """SIGSTOP / SIGCONT (a freeze fault) to the whole process group."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        """SIGKILL (the fault, or the watchdog): the whole process group."""
        if self.proc.poll() is None:
            self.killed_by_us = True
            try:
                os.killpg(self.proc.pid, signal.SIGCONT)  # a frozen process dies only once resumed
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def finish(self, deadline: float) -> None:
        """Wait until `deadline` (time.monotonic) for the process to exit; after it,
        it is a hang: killed, and marked."""
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(min(0.2, max(0.0, deadline - time.monotonic())))
        if self.proc.poll() is None:
            self.hung = True
            self.kill()
        self._pump(0)
        if self._buffer:
            self.lines.append(self._buffer)
            self._buffer = ""

    def done_summary(self) -> dict | None:
        line = next((x for x in self.lines if x.startswith("DONE ")), None)
        try:
            return json.loads(line[5:]) if line else None
        except ValueError:
            return None

    def outcome(self) -> dict:
        """How the process ended: exit code, signal (an abort unless we sent it), hang."""
        code = self.proc.returncode
        out = {
            "role": self.role,
            "epoch": self.epoch,
            "exit": code,
            "hung": self.hung,
            "killed_by_runner": self.killed_by_us and not self.hung,
        }
        if self.rand_seed is not None:
            out["rand_seed"] = self.rand_seed
        if code is not None and code < 0 and not self.killed_by_us:
            out["signal"] = signal.Signals(-code).name
        if code and code > 0 or out.get("signal"):
            out["stderr"] = self.stderr.read_text(errors="replace")[-500:]
        summary = self.done_summary()
        if summary:
            out["summary"] = summary
        return out
