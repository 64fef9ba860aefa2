"""`./testbed test`: build what the tests need (setup's build logic; apt only if
something is missing), run zlink's ctest, libzmq 4.3.5's own test suite against
each library (libzmq_suite.py) and the analysis pytest suite (optionally zlink
under ASan/UBSan and its libFuzzer targets), and close with one line
`N passed, N failed` over all suites. Exit status is non-zero on any failure."""
from __future__ import annotations

import argparse
import os
import re
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from testbed.suites import event_loops, gcc14, libzmq_suite, pyzmq_suite, zlink_kernel
from testbed.suites.runners import (
    SuiteResult,
    exact_regex,
    finish_pytest_beside,
    run_api_diff,
    run_clang_format,
    run_ctest,
    run_fuzzer,
    run_pytest,
    start_pytest_beside,
    stop_pytest_beside,
    tests_of,
)
from testbed.toolchain import libraries, system, zlink_build
from testbed.toolchain.build_all import build_everything
from testbed.toolchain.progress import CommandFailed, Progress

SUITES = ("zlink", "libzmq-suite", "pyzmq-suite", "api-diff", "event-loops", "zlink-kernel", "sanitize",
          "tsan", "fuzz", "gcc14", "pytest", "clang-format")
DEFAULT_SUITES = ("zlink", "libzmq-suite", "pyzmq-suite", "api-diff", "event-loops", "zlink-kernel", "pytest",
                  "clang-format")
DEFAULT_FUZZ_SECONDS = 30
# The suites --build-only can prepare: each compiles a zlink tree of its own.
BUILD_ONLY_SUITES = ("zlink", "sanitize", "tsan", "fuzz")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", action="append", choices=SUITES,
                        help="run only this suite (repeatable). zlink = zlink's ctest; libzmq-suite = "
                             "libzmq 4.3.5's own tests and perf tools against each library; sanitize = "
                             "zlink's ctest under ASan/UBSan; tsan = zlink's ctest under ThreadSanitizer; "
                             "fuzz = its libFuzzer targets; api-diff = the differential API test against "
                             "libzmq 4.3.5 (zlink/tests/api_diff, docs/api-differences.md); "
                             "event-loops = ZMQ_FD/ZMQ_EVENTS under epoll and zmq.asyncio on each library, "
                             "libzmq 4.3.5 the oracle (baselines/event-loops); zlink-kernel = the "
                             "notebook tests with Jupyter kernels on pyzmq built on zlink; "
                             "gcc14 = libzmq, zlink and bench built and zlink's ctest run with Debian "
                             "trixie's GCC 14 and Python 3.13 (nix/offline/gcc14.sh; root; not in the "
                             "default run); pytest = analysis/tests; clang-format = every tracked "
                             "C/C++ file against .clang-format with the pinned clang-format")
    parser.add_argument("--tsan-scope", choices=("all", "threads"), default="all",
                        help="tsan suite: all = every zlink test; threads = only the test programs "
                             f"that drive zlink's threads hardest ({', '.join(TSAN_THREAD_TARGETS[:-1])}): "
                             "builds a fraction of the tree, which CI's time budget needs")
    parser.add_argument("-k", dest="expr", metavar="EXPR",
                        help="pytest -k expression (analysis/tests; and pyzmq's tests in pyzmq-suite)")
    parser.add_argument("-R", "--ctest-regex", metavar="REGEX",
                        help="only tests matching REGEX: ctest -R for zlink's tests, and the libzmq suite's "
                             "test names (e.g. test_pair|dropin)")
    parser.add_argument("--suite-library", action="append", metavar="NAME",
                        help="libzmq suite: run against this registered library (repeatable; default: "
                             "those in baselines/libzmq-suite/expectations.toml)")
    parser.add_argument("--suite-repeat", type=int, default=1, metavar="N",
                        help="libzmq suite: run every test N times; a test that passes in some runs "
                             "only is reported (and put under flaky by --update-expectations)")
    parser.add_argument("--update-expectations", action="store_true",
                        help="libzmq suite: rewrite baselines/libzmq-suite/expectations.toml (and its README "
                             "table) from this run, keeping every reason")
    parser.add_argument("--sanitize", action="store_true",
                        help="also build zlink with -fsanitize=address,undefined and run its ctest")
    parser.add_argument("--build-only", action="store_true",
                        help="only compile the trees of the selected zlink suites "
                             f"({', '.join(BUILD_ONLY_SUITES)}) and run no test: CI compiles the sanitizer, "
                             "fuzz and TSan trees under SCHED_IDLE while the test step runs, and their "
                             "steps then find them built")
    parser.add_argument("--fuzz-seconds", type=int, default=0, metavar="N",
                        help="build zlink's fuzz targets (clang, libFuzzer) and run each for N seconds "
                             f"(with --only fuzz and no N: {DEFAULT_FUZZ_SECONDS})")


def _builds(progress: Progress, selected: set[str]) -> SuiteResult:
    """The zlink suite alone needs only the interop baseline; pytest may use anything."""
    result = SuiteResult("build")
    if "pytest" in selected:
        outcomes = build_everything(progress)
    elif selected & {"api-diff", "pyzmq-suite", "event-loops", "zlink-kernel"}:
        outcomes = build_everything(progress, ["libzmq-4.3.5", "zlink"], bench=False)
    else:
        outcomes = build_everything(progress, ["libzmq-4.3.5"], bench=False)
    for outcome in outcomes:
        if outcome.detail.startswith("skipped:"):
            result.notes.append(f"{outcome.name} {outcome.detail}")
        elif outcome.ok:
            result.passed += 1
        else:
            result.failed += 1
            result.notes.append(f"{outcome.name} failed")
    return result


def _api_diff() -> SuiteResult:
    try:
        zlink = libraries.find_built("zlink", bench=False).prefix
        libzmq = libraries.find_built("libzmq-4.3.5", bench=False).prefix
    except libraries.LibraryUnavailable as exc:
        return SuiteResult("api-diff", failed=1, notes=[str(exc)])
    return run_api_diff(zlink / "lib", libzmq)


def _interop_prefix() -> Path | None:
    try:
        return libraries.find_built("libzmq-4.3.5", bench=False).prefix
    except libraries.LibraryUnavailable:
        return None


def _zlink_ctest(kind: str, label: str, flags: list[str], regex: str | None, progress: Progress,
                 env: dict | None = None, targets: tuple[str, ...] = (),
                 build_only: bool = False) -> SuiteResult:
    """Build zlink's tests (only `targets` when given, and then run only their tests);
    build_only: stop after the build (one pass for a tree that compiled)."""
    pick = (lambda available: [t for t in targets if t in available]) if targets else None
    try:
        build_dir = zlink_build.configure_and_build(kind, flags, progress, pick=pick)
    except CommandFailed as exc:
        progress.say(str(exc))
        return SuiteResult(label, failed=1, notes=[f"zlink {kind} build failed"])
    if build_only:
        return SuiteResult(f"{label} build", passed=1, notes=[f"built {build_dir}, no test run"])
    progress.step(f"{label}")
    if targets:
        names = [n for n in tests_of(build_dir, targets) if regex is None or re.search(regex, n)]
        if not names:
            return SuiteResult(label, failed=1, notes=[f"no test of {', '.join(targets)} matched"])
        regex = exact_regex(names)
    return run_ctest(label, build_dir, regex, env)


# ThreadSanitizer build of zlink's ctest (the "tsan" suite). -O1 -g1 as for ASan
# (zlink_build.SANITIZE says why -g1).
# --tsan-scope threads: the programs whose tests cross threads most (mailboxes, pipes,
# IO threads, engines, kill/restart, every socket type's spec); the last entry is a
# helper process the fault tests start, not a test program.
TSAN_THREAD_TARGETS = ("zlink_core_tests", "zlink_engine_tests", "zlink_socket_spec_tests",
                       "zlink_fault_tests", "zlink_fault_peer")
TSAN = f"-O1 {zlink_build.SANITIZER_DEBUG_INFO} -fsanitize=thread -fno-omit-frame-pointer"


def tsan_flags(libzmq_prefix: Path | None) -> list[str]:
    flags = [f for f in zlink_build.test_flags(libzmq_prefix) if not f.startswith("-DCMAKE_BUILD_TYPE=")]
    return [*zlink_build.sanitizer_debug_build(), *flags, f"-DCMAKE_C_FLAGS={TSAN}",
            f"-DCMAKE_CXX_FLAGS={TSAN}", f"-DCMAKE_EXE_LINKER_FLAGS={TSAN}",
            f"-DCMAKE_SHARED_LINKER_FLAGS={TSAN}"]


# halt_on_error: a race fails the test that hit it. allocator_may_return_null: the
# hostile 2^62-byte frame must see a failed allocation, as under glibc. The interop
# cases run the uninstrumented libzmq in their peer process; TSan cannot see its
# atomics, so zlink/tests/tsan.supp exempts reports from inside libzmq.so only
# (zlink's side of those cases is still checked).
TSAN_SUPPRESSIONS = zlink_build.source_dir() / "tests" / "tsan.supp"
TSAN_ENV = {"TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:"
                            f"suppressions={TSAN_SUPPRESSIONS}"}


_FUZZ_NAME = re.compile(r"(?:[A-Za-z0-9]+_)?fuzz_[A-Za-z0-9_]+")


def _fuzz_targets(build_dir: Path) -> list[Path]:
    """Executables named fuzz_<x> or <project>_fuzz_<x> anywhere in the fuzz build."""
    found = []
    for path in sorted(build_dir.rglob("*fuzz_*")):
        if _FUZZ_NAME.fullmatch(path.name) and path.is_file() and path.stat().st_mode & stat.S_IXUSR:
            found.append(path)
    return found


def _seeds(fuzz_src: Path, target: Path) -> Path:
    """zlink/fuzz/corpus/<x> for target (zlink_)fuzz_<x>, else corpus/<target name>."""
    short = fuzz_src / "corpus" / target.name.split("fuzz_", 1)[1]
    return short if short.is_dir() else fuzz_src / "corpus" / target.name


def _fuzz(seconds: int, progress: Progress, build_only: bool = False) -> SuiteResult:
    result = SuiteResult("zlink fuzz")
    fuzz_src = zlink_build.source_dir() / "fuzz"
    if not (fuzz_src / "CMakeLists.txt").is_file():
        progress.say(f"    no fuzzing: {fuzz_src}/CMakeLists.txt does not exist")
        result.notes.append("zlink/fuzz has no CMakeLists.txt, not run")
        return result
    try:
        # Only the fuzz targets (and what they link): the fuzz run should not hinge on
        # every other file of zlink compiling under clang.
        build_dir = zlink_build.configure_and_build(
            "fuzz", zlink_build.fuzz_flags(), progress, compilers=zlink_build.FUZZ_COMPILERS,
            pick=lambda names: [n for n in names if _FUZZ_NAME.fullmatch(n)])
    except CommandFailed as exc:
        progress.say(str(exc))
        result.failed = 1
        result.notes.append("zlink fuzz build failed")
        return result
    targets = _fuzz_targets(build_dir)
    if not targets:
        result.failed = 1
        result.notes.append(f"no (*_)fuzz_* executables in {build_dir}")
        return result
    if build_only:
        return SuiteResult("zlink fuzz build", passed=1, notes=[f"built {len(targets)} targets, none run"])
    # Each libFuzzer target is one single-threaded process: run TESTBED_JOBS (default 2)
    # of them at a time, each still for `seconds`, so CI's two cores fuzz side by side.
    jobs = max(1, int(os.environ.get("TESTBED_JOBS", "2")))
    progress.step(f"fuzzing {len(targets)} targets for {seconds} s each, {jobs} at a time")

    def fuzz_one(target: Path) -> tuple[bool, str]:
        return run_fuzzer(target, seconds, zlink_build.ZLINK_TREES / "fuzz-corpus" / target.name,
                          _seeds(fuzz_src, target))

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for ok, note in pool.map(fuzz_one, targets):
            progress.say(f"    {note}")
            result.notes.append(note)
            if ok:
                result.passed += 1
            else:
                result.failed += 1
    return result


def _zlink_suites(args: argparse.Namespace, selected: set[str], progress: Progress) -> list[SuiteResult]:
    reason = zlink_build.missing_reason()
    if reason:
        progress.say(f"zlink: {reason}; zlink tests NOT run (continuing with the rest)")
        return [SuiteResult("zlink", notes=[f"not run: {reason}"])]
    prefix = _interop_prefix()
    results = []
    build_only = bool(getattr(args, "build_only", False))
    if "zlink" in selected:
        results.append(_zlink_ctest("test", "zlink ctest", zlink_build.test_flags(prefix), args.ctest_regex,
                                    progress, build_only=build_only))
    if "sanitize" in selected:
        # allocator_may_return_null: a hostile peer may declare a 2^62-byte frame; the
        # library must survive a failed allocation, which ASan would otherwise abort on.
        env = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:allocator_may_return_null=1",
               "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
        results.append(_zlink_ctest("sanitize", "zlink ctest (asan+ubsan)",
                                    zlink_build.sanitize_flags(prefix),
                                    args.ctest_regex, progress, env, build_only=build_only))
    if "tsan" in selected:
        scope = TSAN_THREAD_TARGETS if args.tsan_scope == "threads" else ()
        results.append(_zlink_ctest("tsan", f"zlink ctest (tsan, {args.tsan_scope})", tsan_flags(prefix),
                                    args.ctest_regex, progress, TSAN_ENV, targets=scope,
                                    build_only=build_only))
    if "fuzz" in selected:
        results.append(_fuzz(args.fuzz_seconds or DEFAULT_FUZZ_SECONDS, progress, build_only))
    return results


def _selected(args: argparse.Namespace) -> set[str]:
    """--only picks suites (default zlink, libzmq-suite, pytest); --sanitize/--fuzz-seconds
    add theirs."""
    selected = set(args.only or DEFAULT_SUITES)
    if args.sanitize:
        selected.add("sanitize")
    if args.fuzz_seconds > 0:
        selected.add("fuzz")
    return selected


def main(args: argparse.Namespace) -> int:
    if args.fuzz_seconds < 0:
        print("testbed test: --fuzz-seconds must be >= 0")
        return 2
    if args.suite_repeat < 1:
        print(f"testbed test: --suite-repeat must be >= 1 (got {args.suite_repeat})")
        return 2
    started = time.monotonic()
    progress = Progress()
    selected = _selected(args)
    build_only = bool(getattr(args, "build_only", False))
    if build_only and not selected <= set(BUILD_ONLY_SUITES):
        print(f"testbed test: --build-only goes with --only {' / '.join(BUILD_ONLY_SUITES)} "
              f"(got {', '.join(sorted(selected - set(BUILD_ONLY_SUITES)))})")
        return 2
    # Seconds per part, printed under the summary: where a CI step's time went.
    timings: list[tuple[str, float]] = []

    def timed(part: str, run):
        begin = time.monotonic()
        try:
            return run()
        finally:
            timings.append((part, time.monotonic() - begin))

    # --build-only never installs (it runs beside other steps, which may hold apt's lock):
    # a missing tool fails its build, and the suite's own run installs it.
    if system.missing() and not build_only:
        progress.step("host tools (something is missing)")
        timed("host tools", lambda: system.ensure(progress))
    results = []
    # The format check alone needs no build; --build-only compiles zlink's trees only
    # (the libraries and interop baseline are setup's).
    if selected - {"clang-format"} and not build_only:
        progress.step("builds")
        results.append(timed("builds", lambda: _builds(progress, selected)))
    beside = None
    try:
        if selected & {"zlink", "sanitize", "tsan", "fuzz"}:
            results += timed("zlink suites", lambda: _zlink_suites(args, selected, progress))
        # Without -k, the few long tests marked `beside` run in a second pytest under
        # SCHED_IDLE (runners.start_pytest_beside), started here, after the builds they
        # use: the suites before pytest leave CPU idle too. Not before zlink's tree is
        # compiled: no CPU is idle then, and its compiles, CI's prebuild and the bisect
        # test's builds at once would need memory a small CI machine may not have.
        if "pytest" in selected and not args.expr:
            beside = start_pytest_beside(["--durations=25"])
        if "libzmq-suite" in selected:
            progress.step("libzmq 4.3.5's own test suite (baselines/libzmq-suite)")
            options = libzmq_suite.Options(tuple(args.suite_library or ()), args.ctest_regex,
                                           args.update_expectations, args.suite_repeat)
            results += timed("libzmq-suite", lambda: libzmq_suite.run(options, progress))
        if "pyzmq-suite" in selected:
            progress.step("pyzmq's own test suite on each library (baselines/pyzmq-suite)")
            results += timed("pyzmq-suite", lambda: pyzmq_suite.run(args.expr, progress))
        if "api-diff" in selected:
            progress.step("differential API test against libzmq 4.3.5 (zlink/tests/api_diff)")
            results.append(timed("api-diff", _api_diff))
        if "event-loops" in selected:
            progress.step("ZMQ_FD/ZMQ_EVENTS under epoll and asyncio on each library (baselines/event-loops)")
            results += timed("event-loops", lambda: event_loops.run(progress))
        if "zlink-kernel" in selected:
            progress.step("the notebook tests through Jupyter kernels on pyzmq built on zlink")
            results.append(timed("zlink-kernel", lambda: zlink_kernel.run(args.expr, progress)))
        if "gcc14" in selected:
            results.append(timed("gcc14", lambda: gcc14.run(args.ctest_regex, progress)))
        if "pytest" in selected:
            progress.step("pytest (analysis/tests)")
            # The slowest tests listed in every log: CI's 50-minute aim is kept test by test.
            if beside is None:
                results.append(timed("pytest", lambda: run_pytest(args.expr, ["--durations=25"])))
            else:
                results.append(timed("pytest", lambda: finish_pytest_beside(beside, ["--durations=25"])))
        if "clang-format" in selected:
            progress.step("clang-format (every tracked C/C++ file, .clang-format)")
            results.append(timed("clang-format", run_clang_format))
        print(f"\n--- testbed test summary ({time.monotonic() - started:.0f} s) ---")
        for result in results:
            print(result.line())
        print("time: " + ", ".join(f"{part} {seconds:.0f} s" for part, seconds in timings))
        passed = sum(r.passed for r in results)
        failed = sum(r.failed for r in results)
        print(f"{passed} passed, {failed} failed", flush=True)
        return 1 if failed else 0
    finally:
        if beside is not None:  # an exception before pytest: it must not outlive the step
            stop_pytest_beside(beside)
