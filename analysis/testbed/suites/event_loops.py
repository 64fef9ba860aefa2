"""`./testbed test --only event-loops`: the ZMQ_FD / ZMQ_EVENTS contract that event
loops build on, on libzmq 4.3.5 (the oracle) and on zlink, the same sources run on
each (baselines/event-loops/):

  zmq_fd_epoll.cpp  compiled against each library's zmq.h and libzmq.so.5: epoll on ZMQ_FD
  asyncio_cases.py  run by the python of pyzmq built on each library (the pyzmq-suite's
                    cached builds, libzmq_suite_pyzmq.build): zmq.asyncio awaits and Poller

One library at a time (the wake-up counts are compared, so the two runs should not
compete for the two cores), judged by event_loops_judge against the oracle's run."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from testbed import paths
from testbed.suites import event_loops_judge as judge_mod
from testbed.suites import libzmq_suite_pyzmq as pyzmq_build
from testbed.suites.libzmq_suite_dropin import SONAME
from testbed.suites.runners import SuiteResult
from testbed.toolchain import libraries
from testbed.toolchain.progress import CommandFailed, Progress

NAME = "event-loops"
ORACLE = "libzmq-4.3.5"
LIBRARIES = (ORACLE, "zlink")
SOURCES = paths.BASELINES_DIR / "event-loops"
RUN_DIR = paths.BUILD_DIR / "event-loops"
LIMIT_SECONDS = 300


def _compile(prefix: Path, work: Path, progress: Progress) -> Path:
    exe = work / "zmq_fd_epoll"
    progress.run(["c++", "-std=c++17", "-O1", "-Wall", "-pthread", f"-I{prefix / 'include'}", "-o", str(exe),
                  str(SOURCES / "zmq_fd_epoll.cpp"), str(prefix / "lib" / SONAME)],
                 cwd=work, log=work / "build.log", title="event-loops: zmq_fd_epoll.cpp")
    return exe


def _run(cmd: list[str], prefix: Path, log: Path) -> str:
    """The program's stdout (also kept in `log`); a crash or a hang leaves what it printed."""
    env = dict(os.environ, LD_LIBRARY_PATH=str(prefix / "lib"), PYTHONDONTWRITEBYTECODE="1")
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=LIMIT_SECONDS,
                              stdin=subprocess.DEVNULL, errors="replace")
        out, err, end = proc.stdout, proc.stderr, f"exit {proc.returncode}"
    except subprocess.TimeoutExpired as exc:
        def text(data):
            return data.decode(errors="replace") if isinstance(data, bytes) else data or ""
        out, err, end = text(exc.stdout), text(exc.stderr), f"killed after {LIMIT_SECONDS} s"
    log.write_text(f"$ {' '.join(cmd)}\n{out}\n--- stderr ---\n{err}\n--- {end}\n")
    return out


def _outputs(kind: str, progress: Progress) -> dict[str, tuple[judge_mod.Output, str]]:
    """Per library: the parsed output of `kind` (epoll or asyncio) and its expected mapping."""
    results = {}
    for name in LIBRARIES:
        library = libraries.find_built(name, bench=False)
        work = RUN_DIR / name
        work.mkdir(parents=True, exist_ok=True)
        if kind == "epoll":
            cmd = [str(_compile(library.prefix, work, progress))]
        else:
            cmd = [str(pyzmq_build.build(library, progress)), "-u", str(SOURCES / "asyncio_cases.py")]
        progress.say(f"    {kind} on {name}")
        out = _run(cmd, library.prefix, work / f"{kind}.log")
        results[name] = (judge_mod.parse(out), os.path.realpath(library.prefix / "lib" / SONAME))
    return results


def _lines(kind: str, outputs: dict[str, tuple[judge_mod.Output, str]]) -> list[SuiteResult]:
    oracle = outputs[ORACLE][0]
    lines = []
    for name, (out, mapped) in outputs.items():
        is_oracle = name == ORACLE
        verdict = judge_mod.judge_oracle(out, mapped) if is_oracle else judge_mod.judge(oracle, out, mapped)
        result = SuiteResult(f"{NAME} {kind} {name}{' (oracle)' if is_oracle else ''}", len(verdict.passed),
                             len(verdict.failed))
        if not is_oracle:
            result.notes.append(judge_mod.spurious_note(oracle, out))
        if verdict.failed:
            result.notes.append("FAILED: " + "; ".join(verdict.failed[:8]))
        result.notes.append(f"log {RUN_DIR / name / (kind + '.log')}")
        lines.append(result)
    return lines


def run(progress: Progress) -> list[SuiteResult]:
    results = []
    for kind in ("epoll", "asyncio"):
        try:
            outputs = _outputs(kind, progress)
        except (CommandFailed, FileNotFoundError, libraries.LibraryUnavailable) as exc:
            first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            results.append(SuiteResult(f"{NAME} {kind}", failed=1, notes=[first]))
            continue
        results += _lines(kind, outputs)
    return results
