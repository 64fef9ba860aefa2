"""Progress of a sweep: a rich bar with ETA on a terminal, plain lines otherwise
(pipes, CI=true), so logs stay readable."""
from __future__ import annotations

import os
import sys
import time


def _plain() -> bool:
    return os.environ.get("CI", "").lower() == "true" or not sys.stderr.isatty()


class Progress:
    def __init__(self, total: int, done: int = 0, estimate_s: float | None = None):
        self.total, self.done = total, done
        self.t0 = time.monotonic()
        self.started_done = done
        self.failures = 0
        self._rich = None
        if not _plain():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress
            self._rich = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                      transient=False)
            self._task = self._rich.add_task("sweep", total=total, completed=done)

    def __enter__(self):
        if self._rich:
            self._rich.start()
        return self

    def __exit__(self, *exc):
        if self._rich:
            self._rich.stop()

    def _eta(self) -> str:
        n = self.done - self.started_done
        if n <= 0:
            return "?"
        left = (time.monotonic() - self.t0) / n * (self.total - self.done)
        return f"{int(left // 60)}m{int(left % 60):02d}s"

    def step(self, label: str, status: str) -> None:
        self.done += 1
        if status != "ok":
            self.failures += 1
        if self._rich:
            desc = f"{label} [{status}]" + (f" ({self.failures} failed)" if self.failures else "")
            self._rich.update(self._task, completed=self.done, description=desc[:40])
        else:
            print(f"[{self.done}/{self.total}] {status:7s} {label}  ETA {self._eta()}", file=sys.stderr,
                  flush=True)

    def note(self, text: str) -> None:
        if self._rich:
            self._rich.console.print(text)
        else:
            print(text, file=sys.stderr, flush=True)
