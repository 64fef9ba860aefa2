"""`./testbed test --only pyzmq-suite`: pyzmq's own test suite (`pytest tests` of the
pinned sdist) with pyzmq compiled against each library (libzmq 4.3.5 and zlink),
judged against the oracle (libzmq 4.3.5's outcome of the same test in the same run)
and baselines/pyzmq-suite/expectations.toml.

  suite.toml -> sdist (pip, sha256) -> pyzmq per library (libzmq_suite_pyzmq.build, cached)
  both libraries' pytest at once (own process, own folder, JUnit XML)
  outcomes vs oracle and expectations -> one `N passed, N failed` line per library
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from testbed import paths
from testbed.suites import libzmq_suite_pyzmq as pyzmq_build
from testbed.suites import pyzmq_suite_config as config_mod
from testbed.suites import pyzmq_suite_judge as judge_mod
from testbed.suites.runners import SuiteResult
from testbed.toolchain import libraries
from testbed.toolchain.progress import CommandFailed, Progress

NAME = "pyzmq-suite"
RUN_DIR = paths.BUILD_DIR / "pyzmq-suite"


def _names(items: list[str], most: int = 8) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def _prepare(name: str, config: config_mod.SuiteConfig, progress: Progress) -> tuple[Path, Path]:
    """(python with pyzmq built on `name`, the verified sdist); raises with what failed."""
    library = libraries.find_built(name, bench=False)
    python = pyzmq_build.build(library, progress)
    sdist = config_mod.check_sdist_path(config)
    return python, sdist


def _pytest(python: Path, files: list[str], ignore: list[str], config: config_mod.SuiteConfig,
            regex: str | None, junit: Path) -> list[str]:
    cmd = [str(python), "-m", "pytest", *files, "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
           f"--junitxml={junit}", f"--timeout={config.test_timeout}", "--timeout-method=signal",
           *(f"--ignore={path}" for path in ignore), *(f"--deselect={test}" for test in config.deselect)]
    return cmd + (["-k", regex] if regex else [])


# Which libzmq.so.5 the venv's pyzmq maps: without this check a wrong loader path would
# run libzmq under zlink's name and every comparison would pass.
_MAPPED = ("import os, zmq; print(','.join(sorted({p for p in open('/proc/self/maps').read().split() "
           "if os.path.basename(p).startswith('libzmq.so.5')})))")


def _mapped_library(python: Path, env: dict) -> str:
    proc = subprocess.run([str(python), "-c", _MAPPED], env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    return proc.stdout.strip() if proc.returncode == 0 else f"import failed: {proc.stderr.strip()[-200:]}"


@dataclass
class LibraryRun:
    name: str
    log: Path
    junits: list[Path]
    codes: list[int] = field(default_factory=list)
    stopped: str | None = None


def _run_library(name: str, python: Path, sdist: Path, config: config_mod.SuiteConfig, regex: str | None,
                 deadline: float) -> LibraryRun:
    """`pytest tests` without the isolated files, then each isolated file alone."""
    work = RUN_DIR / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    root = config_mod.unpack_tests(config, sdist, work)
    prefix = libraries.find_built(name, bench=False).prefix
    # test_cython compiles an extension against the library's zmq.h and links it.
    env = {**os.environ, "LD_LIBRARY_PATH": str(prefix / "lib"), "C_INCLUDE_PATH": str(prefix / "include"),
           "LIBRARY_PATH": str(prefix / "lib"), "PYTHONDONTWRITEBYTECODE": "1"}
    isolated = list(config.isolated)
    runs = [(["tests"], isolated)] + [([path], []) for path in isolated]
    result = LibraryRun(name, work / "pytest.log", [work / f"junit-{i}.xml" for i in range(len(runs))])
    mapped, wanted = _mapped_library(python, env), os.path.realpath(prefix / "lib" / pyzmq_build.SONAME)
    if mapped != wanted:
        result.stopped = f"not run: pyzmq maps {mapped or 'no libzmq.so.5'}, not {wanted}"
        return result
    with open(result.log, "w") as sink:
        for (files, ignore), junit in zip(runs, result.junits):
            cmd = _pytest(python, files, ignore, config, regex, junit)
            sink.write(f"$ {' '.join(cmd)}\n")
            sink.flush()
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                result.codes.append(proc.wait(timeout=max(1.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                result.stopped = "killed: the run passed run_timeout_seconds"
                break
    return result


def _last_lines(log: Path, count: int = 3) -> str:
    text = log.read_text(errors="replace") if log.is_file() else ""
    lines = [line for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-count:])[:300]


def _summary(judgement: judge_mod.Judgement, oracle: bool, run: LibraryRun) -> SuiteResult:
    passed = len(judgement.passed) + len(judgement.now_passing) + len(judgement.skip_differs)
    result = SuiteResult(f"{NAME} {judgement.library}{' (oracle)' if oracle else ''}", passed,
                         len(judgement.failed))
    notes = result.notes
    notes.append(f"{len(judgement.skipped_both)} skipped" + ("" if oracle else " on both"))
    if judgement.listed:
        notes.append(f"{len(judgement.listed)} listed in expectations.toml: "
                     + _names([test.split("::", 1)[1] for test, _ in judgement.listed]))
    if judgement.failed:
        notes.append("FAILED: " + "; ".join(f"{test} ({what[:100]})" for test, what in judgement.failed[:10])
                     + (f"; and {len(judgement.failed) - 10} more" if len(judgement.failed) > 10 else ""))
    if judgement.now_passing:
        notes.append(f"NOW PASSES (tighten expectations.toml): {_names(judgement.now_passing)}")
    if judgement.flaky:
        notes.append("flaky (not counted): " + ", ".join(f"{test.split('::', 1)[1]} {status}"
                                                          for test, status in judgement.flaky))
    if judgement.skip_differs:
        notes.append(f"passes where the oracle skipped: {_names(judgement.skip_differs)}")
    odd = [code for code in run.codes if code not in (0, 1, 5)]  # 1: tests failed (judged above); 5: none ran
    if run.stopped:
        result.failed += 1
        notes.append(f"{run.stopped}; last output: {_last_lines(run.log)}")
    elif odd:  # pytest itself failed (usage, internal error, interrupted)
        result.failed += 1
        notes.append(f"pytest exited {odd[0]} (see {run.log}): {_last_lines(run.log)}")
    return result


def run(regex: str | None, progress: Progress) -> list[SuiteResult]:
    try:
        config = config_mod.load_config()
        expectations = config_mod.load_expectations(config)
    except config_mod.PyzmqSuiteError as exc:
        return [SuiteResult(NAME, failed=1, notes=[str(exc)])]
    prepared: dict[str, tuple[Path, Path]] = {}
    for name in config.libraries:  # one after the other: the builds share the sdist download
        try:
            prepared[name] = _prepare(name, config, progress)
        except (CommandFailed, FileNotFoundError, libraries.LibraryUnavailable,
                config_mod.PyzmqSuiteError) as exc:
            first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            progress.say(f"    [{name}] pyzmq build FAILED: {exc}")
            note = f"pyzmq {config.version} build against {name} failed: {first}"
            return [SuiteResult(f"{NAME} {name}", failed=1, notes=[note])]
    started = time.monotonic()
    deadline = started + config.run_timeout
    progress.say(f"    pytest on {', '.join(config.libraries)} in parallel ({config.test_timeout} s per "
                 f"test); logs in {RUN_DIR}/<library>/pytest.log")
    with ThreadPoolExecutor(len(config.libraries)) as pool:
        futures = {name: pool.submit(_run_library, name, *prepared[name], config, regex, deadline)
                   for name in config.libraries}
        runs = {name: future.result() for name, future in futures.items()}
    progress.say(f"    pytest on {len(runs)} libraries in parallel: {time.monotonic() - started:.0f} s")
    outcomes = {name: {k: v for junit in run.junits for k, v in judge_mod.read_junit_file(junit).items()}
                for name, run in runs.items()}
    oracle = outcomes[config.oracle]
    flaky = frozenset(config.flaky)
    results = []
    for name, run in runs.items():
        if name == config.oracle:
            judgement = judge_mod.judge_oracle(name, oracle, expectations.oracle_not_passing, flaky)
        else:
            judgement = judge_mod.judge(name, oracle, outcomes[name], expectations.differences.get(name, {}),
                                        flaky)
        if not outcomes[name]:
            judgement.failed.append(("(whole run)", f"no JUnit results; {_last_lines(run.log)}"))
        results.append(_summary(judgement, name == config.oracle, run))
    return results
