"""Running one test suite (ctest, pytest, a libFuzzer target) and reading its counts
from the runner's own summary line, so `./testbed test` can add them up."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from testbed import paths


@dataclass
class SuiteResult:
    name: str
    passed: int = 0
    failed: int = 0
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        extra = f" ({'; '.join(self.notes)})" if self.notes else ""
        return f"{self.name}: {self.passed} passed, {self.failed} failed{extra}"


def _stream(cmd: list[str], cwd: Path, env: dict | None = None,
            timeout: float | None = None) -> tuple[int, list[str]]:
    """Run with output shown live (it is test output people want to read) and kept."""
    lines: list[str] = []
    proc = subprocess.Popen(cmd, cwd=cwd, env=dict(os.environ, **(env or {})), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, errors="replace")
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            sys.stdout.write(line)
            lines.append(line.rstrip("\n"))
        code = proc.wait(timeout=timeout)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    sys.stdout.flush()
    return code, lines


_CTEST = re.compile(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)")


def parse_ctest(lines: list[str]) -> tuple[int, int] | None:
    for line in reversed(lines):
        if match := _CTEST.search(line):
            failed, total = int(match.group(2)), int(match.group(3))
            return total - failed, failed
    return None


_CTEST_FAILED = re.compile(r"^\s*\d+ - (\S+) \((.+)\)\s*$")
_CTEST_NOT_RUN = re.compile(r"^\s*\d+ - (\S+) \((Skipped|Disabled|Not Run)\)\s*$")


def _ctest_listed(lines: list[str], heading: str, entry: re.Pattern) -> list[str]:
    """'name (reason)' for each test ctest lists under `heading` (its last such list)."""
    names: list[str] = []
    in_list = False
    for line in lines:
        if line.startswith(heading):
            in_list, names = True, []
        elif in_list:
            if match := entry.match(line):
                names.append(f"{match.group(1)} ({match.group(2)})")
            else:
                in_list = False
    return names


def ctest_failures(lines: list[str]) -> list[str]:
    """The names ctest lists under 'The following tests FAILED:', each with its reason
    (Failed, Timeout, SEGFAULT...), so a summary names what broke, not just how many."""
    return _ctest_listed(lines, "The following tests FAILED:", _CTEST_FAILED)


def ctest_not_run(lines: list[str]) -> list[str]:
    """The tests ctest lists under 'The following tests did not run:' (a GTEST_SKIP is
    one): ctest counts them among its 'tests passed', which they are not."""
    return _ctest_listed(lines, "The following tests did not run:", _CTEST_NOT_RUN)


_CLUE = re.compile(r": Failure$|terminate called|AddressSanitizer|ThreadSanitizer|runtime error:"
                   r"|Assertion .* failed")


def _clue(lines: list[str], failure: str) -> str:
    """The first lines of the failed test's own output that say why (a GoogleTest
    failure and its expected/actual line, 'terminate called ...', a sanitizer's
    report), from ctest's --output-on-failure block, so a summary that is all a
    CI log keeps still tells an abort from a failed check. Empty when none."""
    name = failure.rsplit(" (", 1)[0]
    start = next((i for i, line in enumerate(lines) if ": " + name + " " in line and "Test #" in line), None)
    if start is None:
        return ""
    found: list[str] = []
    for i in range(start + 1, len(lines)):
        line = lines[i].strip()
        if line.startswith(("Start ", "The following tests FAILED")) or "Test #" in line:
            break
        if _CLUE.search(line):
            found.append(line if not line.endswith(": Failure") else line.rsplit("/", 1)[-1])
            if line.endswith(": Failure") and i + 2 < len(lines):
                found.extend(lines[j].strip() for j in (i + 1, i + 2) if lines[j].strip())
        if len(found) >= 3:
            break
    return (": " + " | ".join(found)[:300]) if found else ""


def run_ctest(name: str, build_dir: Path, regex: str | None, env: dict | None = None) -> SuiteResult:
    result = SuiteResult(name)
    cmd = ["ctest", "--test-dir", str(build_dir), "--output-on-failure",
           "-j", os.environ.get("TESTBED_JOBS", "2"),
           "--timeout", os.environ.get("TESTBED_CTEST_TIMEOUT", "120")]
    if regex:
        cmd += ["-R", regex]
    code, lines = _stream(cmd, build_dir, env)
    counts = parse_ctest(lines)
    if counts is None:
        # "No tests were found" or a crash of ctest itself: never a pass.
        result.failed = 1
        result.notes.append(f"ctest ran no test (exit {code})")
        return result
    result.passed, result.failed = counts
    result.notes.extend(f"FAILED {failure}{_clue(lines, failure)}" for failure in ctest_failures(lines))
    if skipped := ctest_not_run(lines):
        result.passed -= len(skipped)
        result.notes.append(f"{len(skipped)} skipped, not counted as passed: {', '.join(skipped)}")
    if code != 0 and result.failed == 0:
        result.failed = 1
        result.notes.append(f"ctest exited {code}")
    return result


def tests_of(build_dir: Path, executables: tuple[str, ...]) -> list[str]:
    """The ctest names whose command runs one of `executables` (by file name), from
    ctest's own JSON listing: how a suite runs the tests of the targets it built only."""
    out = subprocess.run(["ctest", "--test-dir", str(build_dir), "--show-only=json-v1"], check=True,
                         capture_output=True, text=True).stdout
    names = []
    for test in json.loads(out).get("tests", []):
        command = test.get("command") or []
        if command and Path(command[0]).name in executables:
            names.append(test["name"])
    return names


def exact_regex(names: list[str]) -> str:
    """A ctest -R pattern that matches exactly these names."""
    return "^(" + "|".join(re.escape(name) for name in names) + ")$"


_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")


def parse_pytest(lines: list[str]) -> dict[str, int]:
    """Counts from pytest's closing line, e.g. '== 3 failed, 40 passed, 1 skipped in 2.1s =='."""
    for line in reversed(lines):
        if " in " in line and (counts := _PYTEST_COUNT.findall(line)):
            out: dict[str, int] = {}
            for number, word in counts:
                key = "error" if word.startswith("error") else word
                out[key] = out.get(key, 0) + int(number)
            return out
    return {}


def run_pytest(expr: str | None, extra: list[str] | None = None, *, name: str = "pytest",
               target: str = "tests", env: dict | None = None) -> SuiteResult:
    """analysis/<target> under pytest (-k expr), counted from pytest's closing line."""
    result = SuiteResult(name)
    cmd = [sys.executable, "-m", "pytest", target, "-q", *(extra or [])]
    if expr:
        cmd += ["-k", expr]
    code, lines = _stream(cmd, paths.REPO_ROOT / "analysis", env)
    _add_pytest_counts(result, lines)
    if code == 5:
        # pytest's "no tests collected": a test command that tested nothing failed.
        result.failed += 1
        result.notes.append("pytest collected no test" + (f" for -k {expr!r}" if expr else ""))
    elif code != 0 and result.failed == 0:
        result.failed = 1
        result.notes.append(f"pytest exited {code}")
    return result


def _add_pytest_counts(result: SuiteResult, lines: list[str], where: str = "") -> dict[str, int]:
    """Adds a pytest run's closing counts and FAILED/ERROR lines to `result`; returns the counts."""
    counts = parse_pytest(lines)
    result.notes.extend(line for line in lines if line.startswith(("FAILED ", "ERROR ")))
    result.passed += counts.get("passed", 0) + counts.get("xfailed", 0)
    result.failed += counts.get("failed", 0) + counts.get("error", 0) + counts.get("xpassed", 0)
    if counts.get("skipped"):
        result.notes.append(f"{counts['skipped']} skipped{where}")
    return counts


BESIDE = "beside"  # the marker (tests/conftest.py) of the tests a second pytest runs
# The file the beside run is told of (in this variable) and finish_pytest_beside creates
# once the rest has ended: a beside test that times something waits for it
# (tests/after_the_rest.py), so its measurement never shares the host with the rest.
REST_DONE_ENV = "TESTBED_BESIDE_REST_DONE"


@dataclass
class Beside:
    """The second pytest (the tests marked `beside`), started ahead of the rest."""
    proc: subprocess.Popen
    log: Path
    started: float
    rest_done: Path | None = None  # created once the rest has ended (REST_DONE_ENV)


def start_pytest_beside(extra: list[str] | None = None) -> Beside:
    """Starts the tests marked `beside` (a few long ones that only compute or build,
    minutes each) in a pytest of their own under SCHED_IDLE, so they take the CPU the
    rest leaves idle and never compete with a timed test. `./testbed test` starts it
    before its first suite: the suites before pytest leave CPU idle too."""
    log = paths.REPO_ROOT / "build" / "pytest-beside.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    rest_done = log.with_name("pytest-beside.rest-done")
    rest_done.unlink(missing_ok=True)  # an earlier run's must not release this one's waiters
    cmd = [sys.executable, "-m", "pytest", "tests", "-q", "-m", BESIDE, *(extra or [])]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=paths.REPO_ROOT / "analysis", stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=_idle,
                                env={**os.environ, REST_DONE_ENV: str(rest_done)})
    return Beside(proc, log, time.monotonic(), rest_done)


def stop_pytest_beside(side: Beside) -> None:
    """For a step that ends early (an exception): the second pytest must not outlive it."""
    if side.proc.poll() is None:
        side.proc.kill()
        side.proc.wait()


def finish_pytest_beside(side: Beside, extra: list[str] | None = None) -> SuiteResult:
    """The rest of analysis/tests, shown live, then the `beside` run's end: once the rest
    is done no timed test is left to disturb, so the `beside` run and its children take
    this process's own scheduling class (under a plain `./testbed test`, no longer
    SCHED_IDLE: it would otherwise share a core with CI's SCHED_IDLE prebuild, and its
    end is the step's). The beside run's log is shown when it ends. One result, both
    counted."""
    try:
        result = run_pytest(None, ["-m", f"not {BESIDE}", *(extra or [])])
        raised = _unidle(side.proc.pid) if side.proc.poll() is None else 0
        if side.rest_done is not None:  # after the unidle: a waiter measures at this class
            side.rest_done.touch()
        code = side.proc.wait()
    except BaseException:
        stop_pytest_beside(side)
        raise
    lines = side.log.read_text(errors="replace").splitlines()
    how = f"its {raised} threads then at this process's priority" if raised else "to its end"
    print(f"==> pytest, the tests marked {BESIDE} (ran {time.monotonic() - side.started:.0f} s, under "
          f"SCHED_IDLE beside the rest until it ended, {how}; {side.log})")
    print("\n".join(lines[-40:]), flush=True)
    counts = _add_pytest_counts(result, lines, " beside")
    if code == 5 or not counts:
        # No test marked `beside` collected, or no closing line: never a pass.
        result.failed += 1
        result.notes.append(f"the pytest beside ran no test (exit {code}; {side.log})")
    elif code != 0 and not (counts.get("failed") or counts.get("error")):
        result.failed += 1
        result.notes.append(f"the pytest beside exited {code} ({side.log})")
    return result


def run_pytest_beside(extra: list[str] | None = None) -> SuiteResult:
    """analysis/tests as two pytest processes at once (start_ and finish_pytest_beside)."""
    return finish_pytest_beside(start_pytest_beside(extra), extra)


def _idle() -> None:
    """In the child before exec: SCHED_IDLE (where the kernel offers it)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        pass


def _unidle(pid: int, policy: int | None = None) -> int:
    """Every thread of `pid` and of its descendants that is SCHED_IDLE gets `policy`, by
    default this process's scheduling class (children forked later inherit it from their
    parent). Returns how many threads changed; 0 where the kernel or the limits
    (RLIMIT_NICE) refuse."""
    try:
        policy = os.sched_getscheduler(0) if policy is None else policy
    except (AttributeError, OSError):
        return 0
    if policy == os.SCHED_IDLE:
        return 0
    changed = 0
    for tid in (t for p in [pid, *_descendants(pid)] for t in _threads(p)):
        try:
            if os.sched_getscheduler(tid) == os.SCHED_IDLE:
                os.sched_setscheduler(tid, policy, os.sched_param(0))
                changed += 1
        except OSError:  # gone meanwhile, or not allowed
            pass
    return changed


def _descendants(pid: int) -> list[int]:
    """The processes under `pid`, from /proc (empty where there is none)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if entry.name.isdigit():
            try:  # the field after the parenthesised command name: state, then ppid
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


_FUZZ_DONE = re.compile(r"Done (\d+) runs in (\d+) second")


def run_fuzzer(binary: Path, seconds: int, corpus: Path, seeds: Path | None) -> tuple[bool, str]:
    """One libFuzzer target for `seconds`; returns (ok, note with the execution count)."""
    corpus.mkdir(parents=True, exist_ok=True)
    cmd = [str(binary), f"-max_total_time={seconds}", "-print_final_stats=1", str(corpus)]
    if seeds is not None and seeds.is_dir():
        cmd.append(str(seeds))  # read-only extra corpus dir: new inputs go to the first one
    proc = subprocess.run(cmd, cwd=corpus.parent, capture_output=True, text=True, errors="replace",
                          timeout=seconds + 300, stdin=subprocess.DEVNULL)
    output = proc.stdout + proc.stderr
    runs = _FUZZ_DONE.search(output)
    executions = runs.group(1) if runs else "unknown"
    if proc.returncode != 0:
        tail = "\n".join(output.splitlines()[-30:])
        print(tail, flush=True)
        return False, f"{binary.name}: exit {proc.returncode} after {executions} executions"
    if not runs:
        return False, f"{binary.name}: no 'Done N runs' line from libFuzzer"
    return True, f"{binary.name}: {executions} executions in {runs.group(2)} s"


def run_api_diff(zlink_lib: Path, libzmq_prefix: Path) -> SuiteResult:
    """The differential API test (zlink/tests/api_diff/api_diff.py): one pass when
    every difference from libzmq 4.3.5 is explained and docs/api-differences.md is
    what this run generates; its last line carries the counts."""
    result = SuiteResult("api-diff")
    script = paths.REPO_ROOT / "zlink" / "tests" / "api_diff" / "api_diff.py"
    code, lines = _stream([sys.executable, str(script), str(zlink_lib), str(libzmq_prefix)], paths.REPO_ROOT,
                          timeout=600)
    summary = next((line for line in reversed(lines) if line.startswith("api-diff:")), None)
    result.notes.append(summary or f"no summary line (exit {code})")
    if code == 0 and summary:
        result.passed = 1
    else:
        result.failed = 1
    return result


# The C/C++ files the format check covers: every tracked one, whatever the folder.
CPP_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".ipp")


def run_clang_format() -> SuiteResult:
    """Every tracked C/C++ file against the root .clang-format, with the clang-format
    pinned in analysis/pyproject.toml (dev extra: a distro's clang-format formats
    differently from release to release). One check: passes when no file would change,
    otherwise fails naming the files (`clang-format -i FILE` fixes one)."""
    result = SuiteResult("clang-format")
    # The wheel's console script sits beside the venv's python (not resolved: the
    # venv's bin/python is a symlink to the base interpreter).
    exe = Path(sys.executable).parent / "clang-format"
    if not exe.exists():
        return SuiteResult("clang-format", failed=1,
                           notes=[f"{exe} missing: ./testbed installs analysis[dev]"])
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=paths.REPO_ROOT, capture_output=True, text=True)
    if listing.returncode != 0:  # e.g. a source tree without .git (Nix): nothing to list
        result.notes.append("not run: not a git checkout")
        return result
    files = [f for f in listing.stdout.split("\0") if f.endswith(CPP_SUFFIXES)]
    proc = subprocess.run([str(exe), "--dry-run", "--Werror", *files], cwd=paths.REPO_ROOT,
                          capture_output=True, text=True)
    bad = sorted({line.split(":", 1)[0] for line in proc.stderr.splitlines()
                  if ": error: code should be" in line})
    if proc.returncode == 0:
        result.passed = 1
        result.notes.append(f"{len(files)} files formatted")
        return result
    result.failed = 1
    if not bad:  # not a formatting verdict (a bad .clang-format, a crash): show why
        result.notes.append(proc.stderr.strip()[-300:])
        return result
    print("clang-format: not formatted (fix with .venv/bin/clang-format -i FILE):", flush=True)
    for name in bad:
        print(f"  {name}", flush=True)
    shown = ", ".join(bad[:10]) + (f" and {len(bad) - 10} more (listed above)" if len(bad) > 10 else "")
    result.notes.append(f"not formatted ({len(bad)} of {len(files)} files): {shown}")
    return result
