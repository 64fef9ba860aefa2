"""`./testbed test --only libzmq-suite`: libzmq 4.3.5's own test programs, and its
perf tools as a binary drop-in check, against each registered library, judged by
baselines/libzmq-suite/expectations.toml.

  suite.toml + pinned tree -> tests to build  (libzmq_suite_config)
  library prefix -> compiled tests (cached)    (libzmq_suite_build)
  run 2 at a time, outcome per test            (libzmq_suite_run)
  perf tools on the library's libzmq.so.5      (libzmq_suite_dropin)
  pyzmq from source on it                      (libzmq_suite_pyzmq)
  outcomes vs expectations -> N passed/failed  (libzmq_suite_expect)
  --update-expectations -> file + README table (libzmq_suite_table)

Two runs on one host would fight over the fixed ports some tests use
(tcp://127.0.0.1:5555-5561, from testutil.hpp's ENDPOINT_n and PORT_6), so a
host-wide lock serialises the running (not the building) of a selection that
contains such a test.
"""
from __future__ import annotations

import fcntl
import json
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from testbed.suites import libzmq_suite_config as config_mod
from testbed.suites import libzmq_suite_dropin as dropin
from testbed.suites import libzmq_suite_expect as expect
from testbed.suites import libzmq_suite_pyzmq as pyzmq
from testbed.suites import libzmq_suite_table as table_mod
from testbed.suites.libzmq_suite_build import build_tests
from testbed.suites.libzmq_suite_run import COMPILE_ERROR, SIGNAL, TestOutcome, combine, run_all
from testbed.suites.runners import SuiteResult
from testbed.toolchain import baselines, keys, libraries, sources
from testbed.toolchain.progress import CommandFailed, Progress

DEFAULT_LIBRARIES = ("libzmq-4.3.5", "zlink")  # when the expectation file names none
BASELINE = "libzmq-4.3.5"                      # the perf tools are linked against it
README = config_mod.SUITE_DIR / "README.md"
HOST_LOCK = Path(tempfile.gettempdir()) / "testbed-libzmq-suite.lock"
# A test source naming one of testutil.hpp's fixed endpoints or ports.
FIXED_ADDRESS = re.compile(r"ENDPOINT_[0-9]|PORT_6|:555[5-9]\b|:556[01]\b")


@dataclass(frozen=True)
class Options:
    libraries: tuple[str, ...] = ()   # empty: those in expectations.toml
    regex: str | None = None          # only tests whose name matches (re.search)
    update: bool = False              # rewrite expectations.toml and the README table
    repeat: int = 1                   # runs per test; mixed results show flaky tests


@dataclass(frozen=True)
class Plan:
    config: config_mod.SuiteConfig
    tests: list[str]                  # every test that is built (the build does not depend on -R)
    selected: list[str]               # the ones to run
    dropins: list[dropin.Check]
    pyzmq: bool                       # run the pyzmq check (where it applies)
    repeat: int
    exclusive: bool                   # a selected test uses a fixed port: take the host lock
    expectations: expect.Expectations
    libraries: list[str]


def _plan(options: Options, progress: Progress) -> Plan:
    config = config_mod.load()
    src = sources.libzmq_source(baselines.pinned(), progress)
    tree = config_mod.tree_tests(src)
    config_mod.check_against_tree(config, tree)
    tests = config.built_tests(tree)
    try:
        expectations = expect.load()
    except expect.ExpectationError:
        if not (options.update and not expect.EXPECTATIONS_FILE.exists()):
            raise
        expectations = expect.Expectations({})
    expect.check_names(expectations, set(tests) | dropin.CHECK_NAMES | {pyzmq.CHECK_NAME})
    pick = re.compile(options.regex).search if options.regex else (lambda name: True)
    names = list(options.libraries) or list(expectations.libraries) or list(DEFAULT_LIBRARIES)
    unknown = [n for n in names if n not in libraries.registered_names()]
    if unknown:
        raise libraries.LibraryUnavailable(f"unknown library {', '.join(unknown)}; registered: "
                                           f"{', '.join(libraries.registered_names())}")
    selected = [t for t in tests if pick(t)]
    exclusive = any(FIXED_ADDRESS.search((src / "tests" / f"{t}.cpp").read_text(errors="replace"))
                    for t in selected)
    return Plan(config, tests, selected, [c for c in dropin.CHECKS if pick(c.name)],
                bool(pick(pyzmq.CHECK_NAME)), options.repeat, exclusive, expectations, names)


@contextmanager
def _host_lock(progress: Progress, wanted: bool) -> Iterator[None]:
    if not wanted:
        yield
        return
    with open(HOST_LOCK, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress.say(f"    another libzmq-suite run holds {HOST_LOCK}; waiting (fixed test ports)")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _say_outcome(progress: Progress, library: str, outcome: TestOutcome) -> None:
    detail = "" if outcome.status == "pass" else f"  {outcome.detail}"
    progress.say(f"    [{library}] {outcome.status:13} {outcome.seconds:5.1f} s  {outcome.test}{detail}")


def _dropin_outcomes(library, plan: Plan, work: Path, progress: Progress) -> dict[str, TestOutcome]:
    if not plan.dropins or not dropin.provides_soname(library.prefix):
        return {}
    tools = dropin.build_tools(libraries.ensure_built(BASELINE, bench=False, progress=progress), progress)
    outcomes = {}
    for check in plan.dropins:
        outcomes[check.name] = dropin.run_check(check, tools, library.prefix, work)
        _say_outcome(progress, library.name, outcomes[check.name])
    return outcomes


def _prebuild_checks(library, plan: Plan, progress: Progress) -> None:
    """Build the perf tools and pyzmq before taking the host lock (both are cached;
    a failed build is reported by the check itself when it runs)."""
    try:
        if plan.dropins and dropin.provides_soname(library.prefix):
            dropin.build_tools(libraries.ensure_built(BASELINE, bench=False, progress=progress), progress)
        if plan.pyzmq and pyzmq.wanted(library):
            pyzmq.build(library, progress)
    except (CommandFailed, FileNotFoundError, libraries.LibraryUnavailable) as exc:
        progress.say(f"    building a check failed (the check will say so): {str(exc).splitlines()[0]}")


def _one_round(library, binaries: dict[str, Path], plan: Plan, work: Path, number: int,
               progress: Progress) -> dict[str, TestOutcome]:
    """Every selected test program, drop-in check and the pyzmq check, once."""
    round_ = f" (run {number} of {plan.repeat})" if plan.repeat > 1 else ""
    progress.step(f"libzmq suite: running {len(binaries)} tests against {library.name} "
                  f"({keys.JOBS} at a time){round_}")
    found = run_all(binaries, plan.config.timeout, work, int(keys.JOBS),
                    on_done=lambda o: _say_outcome(progress, library.name, o))
    found |= _dropin_outcomes(library, plan, work, progress)
    if plan.pyzmq and pyzmq.wanted(library):
        found[pyzmq.CHECK_NAME] = pyzmq.run_check(library, progress)
        _say_outcome(progress, library.name, found[pyzmq.CHECK_NAME])
    return found


def library_outcomes(name: str, plan: Plan, progress: Progress) -> dict[str, TestOutcome]:
    """Build (cached) and run the selected tests and drop-in checks against one library."""
    library = libraries.ensure_built(name, bench=False, progress=progress)
    built = build_tests(library, plan.tests, progress)
    outcomes = {t: TestOutcome(t, COMPILE_ERROR, 0.0, built.compile_errors[t])
                for t in plan.selected if t in built.compile_errors}
    for outcome in outcomes.values():
        _say_outcome(progress, name, outcome)
    run_dir = built.root / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    binaries = {t: built.binary(t) for t in plan.selected if t not in built.compile_errors}
    _prebuild_checks(library, plan, progress)
    runs: dict[str, list[TestOutcome]] = {}
    with _host_lock(progress, plan.exclusive):
        for number in range(1, plan.repeat + 1):
            found = _one_round(library, binaries, plan, run_dir / str(number), number, progress)
            for test, outcome in found.items():
                runs.setdefault(test, []).append(outcome)
    outcomes |= {test: combine(results) for test, results in runs.items()}
    (run_dir / "outcomes.json").write_text(json.dumps({t: o.to_json() for t, o in sorted(outcomes.items())},
                                                      indent=1) + "\n")
    return outcomes


def _names(tests: list[str], most: int = 12) -> str:
    shown = ", ".join(tests[:most])
    return shown + (f" and {len(tests) - most} more" if len(tests) > most else "")


def summarise(judgement: expect.Judgement, listed: bool) -> SuiteResult:
    """One `N passed, N failed` line per library, with what a reader must act on."""
    result = SuiteResult(f"libzmq-suite {judgement.library}", judgement.passed, judgement.failed)
    if not listed:
        result.notes.append("no entry in expectations.toml: run with --update-expectations to record one")
    kinds = Counter(o.status for o, _ in judgement.still_not_passing)
    if kinds:
        result.notes.append(f"{sum(kinds.values())} not expected to pass: "
                            + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    if judgement.flaky:
        flaky = ", ".join(f"{o.test} {o.status}" for o in judgement.flaky)
        result.notes.append(f"flaky (not counted): {flaky}")
    signalled = [o.test for o, _ in judgement.still_not_passing if o.status == SIGNAL]
    signalled += [o.test for o in judgement.regressions if o.status == SIGNAL]
    if signalled:
        result.notes.append(f"ENDED BY A SIGNAL: {_names(signalled)}")
    if judgement.regressions:
        result.notes.append("REGRESSED: " + "; ".join(f"{o.test} ({o.status}: {o.detail[:120]})"
                                                       for o in judgement.regressions[:12]))
    if judgement.unlisted:
        result.notes.append(f"NOT IN expectations.toml: {_names([o.test for o in judgement.unlisted])}")
    if judgement.sometimes:
        result.notes.append("PASSES SOMETIMES (mark flaky): " + ", ".join(
            f"{o.test} {o.passes} of {o.runs}" for o in judgement.sometimes[:12]))
    if judgement.now_passing:
        result.notes.append(f"NOW PASSES: {_names(judgement.now_passing)}; tighten "
                            "baselines/libzmq-suite/expectations.toml (confirm with --suite-repeat 5 "
                            "--update-expectations)")
    return result


def _judged(name: str, outcomes: dict[str, TestOutcome], old: expect.Expectations, new: expect.Expectations,
            update: bool) -> SuiteResult:
    """Judged by the checked-in file; with --update-expectations by the rewritten one,
    saying what the rewrite moved."""
    before = expect.judge(name, old.libraries.get(name, expect.LibraryExpectation()), outcomes)
    if not update:
        return summarise(before, name in old.libraries)
    result = summarise(expect.judge(name, new.libraries[name], outcomes), True)
    moved_in = before.now_passing + [o.test for o in before.unlisted if o.status == "pass"]
    moved_out = [o.test for o in before.regressions] + [o.test for o in before.unlisted if o.status != "pass"]
    if moved_in or moved_out:
        result.notes.append(f"UPDATED: now expected to pass: {_names(moved_in) or 'none'}; "
                            f"no longer: {_names(moved_out) or 'none'}")
    return result


def _write_updates(expectations: expect.Expectations, plan: Plan, progress: Progress) -> None:
    expect.EXPECTATIONS_FILE.write_text(expect.dump(expectations))
    generated = table_mod.table(expectations, plan.config.never_built)
    README.write_text(table_mod.replace_section(README.read_text(), generated))
    todo = sum(e.todo for lib in expectations.libraries.values() for e in lib.not_passing.values())
    progress.say(f"    rewrote {expect.EXPECTATIONS_FILE} and the table in {README}"
                 + (f"; {todo} reason(s) say 'TODO explain:' or 'TODO recheck:'" if todo else ""))


def run(options: Options, progress: Progress) -> list[SuiteResult]:
    try:
        plan = _plan(options, progress)
    except (config_mod.SuiteConfigError, expect.ExpectationError, libraries.LibraryUnavailable,
            re.error, CommandFailed, OSError) as exc:
        return [SuiteResult("libzmq-suite", failed=1, notes=[str(exc)])]
    if not plan.selected and not plan.dropins and not plan.pyzmq:
        return [SuiteResult("libzmq-suite", failed=1, notes=[f"no libzmq test or drop-in check matches -R "
                                                              f"{options.regex!r}"])]
    results, expectations = [], plan.expectations
    for name in plan.libraries:
        try:
            outcomes = library_outcomes(name, plan, progress)
        except (libraries.LibraryUnavailable, CommandFailed, OSError) as exc:
            results.append(SuiteResult(f"libzmq-suite {name}", failed=1, notes=[f"not run: {exc}"]))
            continue
        expectations = expect.updated(expectations, name, outcomes)
        results.append(_judged(name, outcomes, plan.expectations, expectations, options.update))
    if options.update:
        _write_updates(expectations, plan, progress)
    return results
