"""Running compiled libzmq test programs: two at a time, each in its own process
group and scratch folder, under a wall-clock limit, and classifying how each ended.

Outcomes (one per test and library):
  pass           exit 0 and Unity reports no failure and not every case ignored
  fail           exit status other than 0 and 77, or Unity reports a failure
  skipped        exit 77 (libzmq's SKIP_RETURN_CODE), or every Unity case ignored
  timeout        still running at its limit: the whole group is killed
  signal         ended by a signal (abort, segfault, ...)
  compile-error  never ran: the program did not compile or link
A test that exits cleanly but leaves children behind has them killed with its
group; that is not by itself a failure (libzmq's ctest would not notice either).
Repeated runs of one test combine into one outcome (`combine`): a pass only if
every run passed, else the first other outcome, with how many runs passed.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

PASS, FAIL, SKIPPED, TIMEOUT = "pass", "fail", "skipped", "timeout"
SIGNAL, COMPILE_ERROR = "signal", "compile-error"
OUTCOMES = (PASS, FAIL, SKIPPED, TIMEOUT, SIGNAL, COMPILE_ERROR)
SKIP_RETURN_CODE = 77
# Variables that would let the caller's environment swap the library under test.
_LOADER_VARIABLES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT")


@dataclass(frozen=True)
class TestOutcome:
    __test__ = False  # a result record, not a pytest test class
    test: str
    status: str      # one of OUTCOMES
    seconds: float
    detail: str      # what a reader needs: first failed assertion, signal name, compiler error
    runs: int = 1
    passes: int = -1  # how many of `runs` passed; -1: from status (one run)

    def __post_init__(self) -> None:
        if self.passes < 0:
            object.__setattr__(self, "passes", self.runs if self.status == PASS else 0)

    @property
    def mixed(self) -> bool:
        """Passed in some runs and not in others."""
        return 0 < self.passes < self.runs

    def to_json(self) -> dict:
        return asdict(self)


def combine(runs: list[TestOutcome]) -> TestOutcome:
    """One outcome for repeated runs of a test (see the module comment)."""
    passes = sum(o.passes for o in runs)
    seconds = max(o.seconds for o in runs)
    failing = [o for o in runs if o.status != PASS]
    if not failing:
        return replace(runs[0], seconds=seconds, runs=len(runs), passes=passes)
    first = failing[0]
    detail = first.detail if passes == 0 else f"passed {passes} of {len(runs)} runs; otherwise {first.detail}"
    return TestOutcome(first.test, first.status, seconds, detail, len(runs), passes)


_UNITY_SUMMARY = re.compile(r"^(\d+) Tests (\d+) Failures (\d+) Ignored")
_UNITY_FAIL = re.compile(r":FAIL(?::|$)")
# Unity prints __FILE__, an absolute path into the staging folder: keep the file name.
_SOURCE_DIR = re.compile(r"(?:/[^\s/:]+)+/(?=[^\s/:]+\.[ch]pp:)")


def unity_counts(lines: list[str]) -> tuple[int, int, int] | None:
    """(tests, failures, ignored) from Unity's closing line, if it printed one."""
    for line in reversed(lines):
        if match := _UNITY_SUMMARY.match(line.strip()):
            return int(match.group(1)), int(match.group(2)), int(match.group(3))
    return None


def _first_failure(lines: list[str]) -> str:
    """The first failed assertion, else the last line printed (for a hang: where it was)."""
    failed = next((line for line in lines if _UNITY_FAIL.search(line)), None)
    if failed is None:
        tail = [line for line in lines if line.strip()]
        failed = tail[-1] if tail else "no output"
    return _SOURCE_DIR.sub("", failed).strip()[:300]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def classify(test: str, returncode: int | None, lines: list[str], seconds: float,
             limit: float) -> TestOutcome:
    """How a finished (returncode) or killed-at-its-limit (None) test ended."""
    if returncode is None:
        return TestOutcome(test, TIMEOUT, seconds, f"still running after {limit:g} s; last output: "
                                                    f"{_first_failure(lines)}")
    if returncode < 0:
        return TestOutcome(test, SIGNAL, seconds, f"{_signal_name(-returncode)}; {_first_failure(lines)}")
    if returncode == SKIP_RETURN_CODE:
        return TestOutcome(test, SKIPPED, seconds, f"exit {SKIP_RETURN_CODE} (skipped by the test itself)")
    counts = unity_counts(lines)
    if returncode != 0 or (counts and counts[1] > 0):
        return TestOutcome(test, FAIL, seconds, f"exit {returncode}: {_first_failure(lines)}")
    if counts and counts[0] > 0 and counts[2] == counts[0]:
        return TestOutcome(test, SKIPPED, seconds, f"all {counts[0]} Unity cases ignored")
    if not counts:
        return TestOutcome(test, PASS, seconds, "no Unity summary")
    ignored = f", {counts[2]} ignored" if counts[2] else ""
    return TestOutcome(test, PASS, seconds, f"{counts[0]} cases{ignored}")


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _LOADER_VARIABLES}


def _line_buffered(binary: Path) -> list[str]:
    """Unity writes through stdio, fully buffered into a file: a test killed at its
    limit would leave no output at all. stdbuf (coreutils) makes stdout line-buffered."""
    stdbuf = shutil.which("stdbuf")
    return [stdbuf, "-oL", "-eL", str(binary)] if stdbuf else [str(binary)]


def run_one(test: str, binary: Path, limit: float, log_dir: Path) -> TestOutcome:
    """Run one program in a fresh session (so its group can be killed) and a scratch cwd."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{test}.out"
    scratch = Path(tempfile.mkdtemp(prefix=f"{test}.", dir=log_dir))
    started = time.monotonic()
    with open(log, "wb") as sink:
        proc = subprocess.Popen(_line_buffered(binary), cwd=scratch, stdout=sink, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=_clean_env(), start_new_session=True)
        try:
            returncode: int | None = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:
            _kill_group(proc.pid)  # leftovers (forked children) and, on timeout, the test itself
            proc.wait()
    seconds = time.monotonic() - started
    shutil.rmtree(scratch, ignore_errors=True)
    lines = log.read_text(errors="replace").splitlines()
    return classify(test, returncode, lines, seconds, limit)


def run_all(binaries: dict[str, Path], limit_for: Callable[[str], float], log_dir: Path, jobs: int = 2,
            on_done: Callable[[TestOutcome], None] | None = None) -> dict[str, TestOutcome]:
    """Run every test, `jobs` at a time; longest limits first so a slow one starts early."""
    log_dir.mkdir(parents=True, exist_ok=True)
    order = sorted(binaries, key=lambda t: (-limit_for(t), t))

    def one(test: str) -> TestOutcome:
        outcome = run_one(test, binaries[test], limit_for(test), log_dir)
        if on_done:
            on_done(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return {o.test: o for o in pool.map(one, order)}
