"""Progress output for every command: build steps and sweep counters.

A build command's full output goes to a log file next to its build; the screen shows
one line per step (a rich spinner on a terminal, plain lines when not a TTY or in CI),
and on failure the tail of the log, so a failed build is readable without a scroll
of compiler noise on success. A sweep counts its runs with `counting()`/`advance()`:
a rich bar with ETA on a terminal, one plain line per run otherwise, so CI logs stay
readable.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TAIL_LINES = 40


class CommandFailed(Exception):
    """A build command exited non-zero; the message carries the log tail."""


def plain_wanted() -> bool:
    """The one CI detection: plain lines in CI (CI=1/true/yes) or when stderr is no terminal."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or not sys.stderr.isatty()


class Progress:
    """What a long command tells its user: steps, build commands, and run counters."""

    def __init__(self, plain: bool | None = None, quiet: bool = False):
        self.plain = plain_wanted() if plain is None else plain
        self.quiet = quiet
        self._console = None
        self._bar = None
        self.total = self.done = self.failures = 0
        self._count_t0, self._count_start = 0.0, 0
        if not self.plain:
            from rich.console import Console

            self._console = Console(stderr=True, highlight=False, soft_wrap=True)

    def say(self, message: str) -> None:
        if self.quiet:
            return
        if self._console is not None:
            self._console.print(message, markup=False)
        else:
            print(message, file=sys.stderr, flush=True)

    def step(self, message: str) -> None:
        self.say(f"==> {message}")

    def run(self, cmd: list[str], *, cwd: Path, log: Path, env: dict | None = None,
            title: str | None = None) -> None:
        """Run `cmd`, appending its output to `log`; raise CommandFailed with the tail."""
        title = title or Path(cmd[0]).name
        log.parent.mkdir(parents=True, exist_ok=True)
        full_env = dict(os.environ, **(env or {}))
        tail: deque[str] = deque(maxlen=TAIL_LINES)
        started = time.monotonic()
        with open(log, "a", encoding="utf-8", errors="replace") as sink:
            sink.write(f"$ (cd {shlex.quote(str(cwd))} && {shlex.join(cmd)})\n")
            sink.flush()
            proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    text=True, errors="replace")
            status = None
            if self._console is not None and not self.quiet:
                status = self._console.status(f"{title} ...")
                status.start()
            try:
                assert proc.stdout is not None
                for line in proc.stdout:
                    sink.write(line)
                    tail.append(line.rstrip("\n"))
                    if status is not None:
                        status.update(f"{title}: {line.strip()[:100]}")
                code = proc.wait()
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            finally:
                if status is not None:
                    status.stop()
        seconds = time.monotonic() - started
        if code != 0:
            raise CommandFailed(
                f"{title} failed (exit {code}, {seconds:.1f} s); full log: {log}\n" + "\n".join(tail)
            )
        self.say(f"    {title} ok ({seconds:.1f} s)")

    # ---------------------------------------------------------------- run counters

    @contextmanager
    def counting(self, total: int, done: int = 0) -> Iterator[Progress]:
        """Count runs towards `total` (`done` already finished, e.g. on resume)."""
        self.total, self.done, self.failures = total, done, 0
        self._count_t0, self._count_start = time.monotonic(), done
        if self._console is not None and not self.quiet:
            from rich import progress as rp
            columns = (rp.TextColumn("{task.description}"), rp.BarColumn(), rp.MofNCompleteColumn(),
                       rp.TimeElapsedColumn(), rp.TextColumn("ETA"), rp.TimeRemainingColumn())
            self._bar = rp.Progress(*columns, console=self._console, transient=False)
            self._task = self._bar.add_task("sweep", total=total, completed=done)
            self._bar.start()
        try:
            yield self
        finally:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None

    def grow(self, extra: int) -> None:
        """More runs were planned (adaptive repetitions add them as they go)."""
        self.total += extra
        if self._bar is not None:
            self._bar.update(self._task, total=self.total)

    def advance(self, label: str, status: str) -> None:
        """One run finished with `status` ("ok" or why not)."""
        self.done += 1
        self.failures += status != "ok"
        if self._bar is not None:
            failed = f" ({self.failures} failed)" if self.failures else ""
            self._bar.update(self._task, completed=self.done, description=f"{label} [{status}]{failed}"[:40])
        else:
            self.say(f"[{self.done}/{self.total}] {status:7s} {label}  ETA {self._eta()}")

    def _eta(self) -> str:
        n = self.done - self._count_start
        if n <= 0:
            return "?"
        left = (time.monotonic() - self._count_t0) / n * max(self.total - self.done, 0)
        return f"{int(left // 60)}m{int(left % 60):02d}s"
