"""Progress output and running build commands.

A command's full output goes to a log file next to its build; the screen shows one
line per step (a rich spinner on a terminal, plain lines when not a TTY or CI=true),
and on failure the tail of the log, so a failed build is readable without a scroll
of compiler noise on success.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

TAIL_LINES = 40


class CommandFailed(Exception):
    """A build command exited non-zero; the message carries the log tail."""


def _plain_wanted() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or not sys.stderr.isatty()


class Progress:
    def __init__(self, plain: bool | None = None, quiet: bool = False):
        self.plain = _plain_wanted() if plain is None else plain
        self.quiet = quiet
        self._console = None
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
