"""pyzmq's test outcomes per library (from pytest's JUnit XML) and their judgement
against the oracle (libzmq 4.3.5 on the same sdist, same run):

  oracle     library      listed in [differences]   counts as
  pass       pass         no                        passed
  pass       pass         yes                       passed, reported: tighten the file
  pass       not pass     no                        FAILED (a difference nobody explained)
  pass       not pass     yes                       neither (listed with its reason)
  skipped    skipped      -                         neither (counted as skipped on both)
  skipped    pass         -                         passed, reported (skips differ)
  skipped    fail/error   no                        FAILED
  not pass   (any)        -                         judged on the oracle's line instead
  absent     (any)        -                         FAILED (the run lost it: crash, kill)
  (any test in suite.toml's [flaky], on any library)  neither; its outcome is reported

The oracle's own line: a test it does not pass fails the suite unless
[oracle_not_passing] gives the reason (the oracle must be trustworthy to judge).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

PASS, FAIL, ERROR, SKIPPED, ABSENT = "pass", "fail", "error", "skipped", "absent"


def node_id(classname: str, name: str) -> str:
    """pytest's node id from a JUnit testcase: classname 'tests.test_socket.TestSocket'
    (or without the 'tests.' under --import-mode=importlib) and name 'test_x[param]'."""
    parts = classname.split(".")
    if parts and parts[0] == "tests":
        parts = parts[1:]
    module = next((i for i, p in enumerate(parts) if p.startswith("test_")), 0)
    path = "tests/" + "/".join(parts[:module + 1]) + ".py"
    return "::".join([path, *parts[module + 1:], name])


def read_junit(text: str) -> dict[str, tuple[str, str]]:
    """node id -> (outcome, first line of the message)."""
    outcomes: dict[str, tuple[str, str]] = {}
    for case in ET.fromstring(text).iter("testcase"):
        test = node_id(case.get("classname", ""), case.get("name", ""))
        status, message = PASS, ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = {"failure": FAIL, "error": ERROR, "skipped": SKIPPED}[child.tag]
                message = (child.get("message") or child.text or "").strip().splitlines()[:1]
                message = message[0][:200] if message else ""
                break
        # a test that failed in its call and errored in teardown appears twice: keep the worse
        if test not in outcomes or outcomes[test][0] in (PASS, SKIPPED):
            outcomes[test] = (status, message)
    return outcomes


def read_junit_file(path: Path) -> dict[str, tuple[str, str]]:
    return read_junit(path.read_text(errors="replace")) if path.is_file() else {}


@dataclass
class Judgement:
    library: str
    passed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)      # test, what happened
    listed: list[tuple[str, str]] = field(default_factory=list)      # test, reason
    now_passing: list[str] = field(default_factory=list)             # listed, but passed
    skipped_both: list[str] = field(default_factory=list)
    skip_differs: list[str] = field(default_factory=list)            # oracle skipped, this passed
    flaky: list[tuple[str, str]] = field(default_factory=list)       # test, its outcome this run


def judge_oracle(name: str, oracle: dict[str, tuple[str, str]], not_passing: dict[str, str],
                 flaky: frozenset[str] = frozenset()) -> Judgement:
    result = Judgement(name)
    for test, (status, message) in sorted(oracle.items()):
        if test in flaky:
            result.flaky.append((test, status))
        elif status == PASS:
            (result.now_passing if test in not_passing else result.passed).append(test)
        elif status == SKIPPED:
            result.skipped_both.append(test)
        elif test in not_passing:
            result.listed.append((test, not_passing[test]))
        else:
            result.failed.append((test, f"{status}: {message}"))
    return result


def judge(name: str, oracle: dict[str, tuple[str, str]], outcomes: dict[str, tuple[str, str]],
          differences: dict[str, str], flaky: frozenset[str] = frozenset()) -> Judgement:
    result = Judgement(name)
    for test in sorted(set(oracle) | set(outcomes)):
        expected = oracle.get(test, (ABSENT, ""))[0]
        status, message = outcomes.get(test, (ABSENT, "not in this run's results"))
        if test in flaky:
            result.flaky.append((test, status))
            continue
        if expected not in (PASS, SKIPPED, ABSENT):
            continue  # the oracle does not pass it: its own line says so
        if status == PASS:
            if test in differences:
                result.now_passing.append(test)
            else:
                (result.skip_differs if expected == SKIPPED else result.passed).append(test)
        elif status == SKIPPED and expected == SKIPPED:
            result.skipped_both.append(test)
        elif test in differences:
            result.listed.append((test, differences[test]))
        else:
            result.failed.append((test, f"{status} (libzmq: {expected}): {message}"))
    return result
