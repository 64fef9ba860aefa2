"""baselines/libzmq-suite/expectations.toml: per library, the libzmq tests expected
to pass, and for every other test its last outcome and why it does not pass. The
judge compares a run with it:

  expected pass, passed          held                  counts as passed
  expected pass, did not pass    regression            counts as failed (CI red)
  not expected, passed           now passes            counts as passed, reported loudly:
                                                       tighten the file
  not expected, did not pass     still not passing     neither (listed with its reason)
  not expected, passed in some   passes sometimes      neither, reported: mark it flaky
  of repeated runs (--suite-repeat)
  flaky (any outcome)            flaky                 neither (its outcome is reported)
  in no list                     unlisted              counts as failed: the file is incomplete
A flaky entry is for a test whose outcome changes from run to run (a race in the
library, usually a hang): it would otherwise turn CI red or shout "now passes" at
random. Only a person moves a test out of `flaky`; updates leave it there, and
put a test there (with a TODO reason) when repeated runs gave mixed results.

`--update-expectations` rewrites the file from a run (`updated` + `dump`): tests
that passed move to `pass`, tests that did not keep their reason (or get a TODO
one), and every outcome and first failure (`seen`) is refreshed. When a test now
fails differently from what the file saw (another outcome, or another failing case:
`signature`), its reason is probably stale, so it is kept behind "TODO recheck:".
Only the tests that ran are touched.
"""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from testbed.suites.libzmq_suite_config import SUITE_DIR
from testbed.suites.libzmq_suite_run import OUTCOMES, PASS, TestOutcome

EXPECTATIONS_FILE = SUITE_DIR / "expectations.toml"
SCHEMA = 1
TODO_PREFIX = "TODO explain:"
RECHECK_PREFIX = "TODO recheck:"
SEEN_CHARS = 160


class ExpectationError(Exception):
    """The message names the file, the library and the bad entry."""


@dataclass(frozen=True)
class NotPassing:
    outcome: str    # the last observed outcome (one of OUTCOMES other than pass)
    reason: str     # why: a missing feature, a platform need, an owner
    seen: str = ""  # the last first-failure line (what the reason explains)

    @property
    def todo(self) -> bool:
        return self.reason.startswith((TODO_PREFIX, RECHECK_PREFIX))


@dataclass(frozen=True)
class LibraryExpectation:
    passes: frozenset[str] = frozenset()
    not_passing: dict[str, NotPassing] = field(default_factory=dict)
    flaky: dict[str, str] = field(default_factory=dict)   # test -> what varies and why

    def listed(self) -> set[str]:
        return set(self.passes) | set(self.not_passing) | set(self.flaky)


@dataclass(frozen=True)
class Expectations:
    libraries: dict[str, LibraryExpectation]


_FIELDS = ("outcome", "reason", "seen")


def _entry(value: object, where: str) -> NotPassing:
    if not isinstance(value, dict) or not {"outcome", "reason"} <= set(value) <= {*_FIELDS}:
        raise ExpectationError(f"{where}: expected {{ outcome = \"...\", reason = \"...\", "
                               f"seen = \"...\" }}, got {value!r}")
    outcome, reason, seen = value["outcome"], value["reason"], value.get("seen", "")
    if outcome not in OUTCOMES or outcome == PASS:
        raise ExpectationError(f"{where}: outcome {outcome!r} is not one of {', '.join(OUTCOMES[1:])}")
    if not isinstance(reason, str) or not reason.strip():
        raise ExpectationError(f"{where}: needs a non-empty reason")
    if not isinstance(seen, str):
        raise ExpectationError(f"{where}: seen must be a string")
    return NotPassing(outcome, reason, seen)


def _library(name: str, table: object, path: Path) -> LibraryExpectation:
    where = f"{path}: [libraries.\"{name}\"]"
    if not isinstance(table, dict) or set(table) - {"pass", "not_passing", "flaky"}:
        raise ExpectationError(f"{where} may hold only `pass = [...]`, `[...not_passing]` and `[...flaky]`")
    passes = table.get("pass", [])
    if not isinstance(passes, list) or not all(isinstance(t, str) for t in passes):
        raise ExpectationError(f"{where}: pass must be a list of test names")
    if len(set(passes)) != len(passes):
        twice = sorted({t for t in passes if passes.count(t) > 1})
        raise ExpectationError(f"{where}: pass lists {', '.join(twice)} twice")
    raw = table.get("not_passing", {})
    if not isinstance(raw, dict):
        raise ExpectationError(f"{where}: not_passing must be a table")
    not_passing = {test: _entry(value, f"{where} not_passing.{test}") for test, value in raw.items()}
    flaky = table.get("flaky", {})
    if not isinstance(flaky, dict) or not all(isinstance(r, str) and r.strip() for r in flaky.values()):
        raise ExpectationError(f"{where}: flaky must be a table of test = \"what varies, and why\"")
    lists = {"pass": set(passes), "not_passing": set(not_passing), "flaky": set(flaky)}
    for first, second in (("pass", "not_passing"), ("pass", "flaky"), ("not_passing", "flaky")):
        both = sorted(lists[first] & lists[second])
        if both:
            raise ExpectationError(f"{where}: {', '.join(both)} listed in both {first} and {second}")
    return LibraryExpectation(frozenset(passes), not_passing, dict(flaky))


def parse(text: str, path: Path = EXPECTATIONS_FILE) -> Expectations:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationError(f"{path}: not valid TOML: {exc}") from None
    if data.get("schema") != SCHEMA:
        raise ExpectationError(f"{path}: schema = {data.get('schema')!r}; this testbed reads schema {SCHEMA}")
    libraries = data.get("libraries", {})
    if not isinstance(libraries, dict) or set(data) - {"schema", "libraries"}:
        raise ExpectationError(f"{path}: expected only `schema` and [libraries.\"<name>\"] tables")
    return Expectations({name: _library(name, table, path) for name, table in libraries.items()})


def load(path: Path = EXPECTATIONS_FILE) -> Expectations:
    try:
        return parse(path.read_text(), path)
    except FileNotFoundError:
        raise ExpectationError(f"{path} does not exist (create it with --update-expectations)") from None


def check_names(expectations: Expectations, known: set[str], path: Path = EXPECTATIONS_FILE) -> None:
    """Every name in the file must be a test the suite can run (typos fail loudly)."""
    for name, library in expectations.libraries.items():
        stray = sorted(library.listed() - known)
        if stray:
            raise ExpectationError(f"{path}: [libraries.\"{name}\"] names {', '.join(stray)}, which the "
                                   "suite does not run (not in the pinned tree, or never_built in "
                                   "suite.toml)")


@dataclass
class Judgement:
    library: str
    held: list[str] = field(default_factory=list)
    regressions: list[TestOutcome] = field(default_factory=list)
    now_passing: list[str] = field(default_factory=list)
    still_not_passing: list[tuple[TestOutcome, str]] = field(default_factory=list)  # with the reason
    flaky: list[TestOutcome] = field(default_factory=list)
    sometimes: list[TestOutcome] = field(default_factory=list)  # not expected; passed in some runs
    unlisted: list[TestOutcome] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return len(self.held) + len(self.now_passing)

    @property
    def failed(self) -> int:
        return len(self.regressions) + len(self.unlisted)


def judge(library: str, expected: LibraryExpectation, outcomes: dict[str, TestOutcome]) -> Judgement:
    result = Judgement(library)
    for test in sorted(outcomes):
        outcome = outcomes[test]
        if test in expected.passes:
            (result.held.append(test) if outcome.status == PASS else result.regressions.append(outcome))
        elif test in expected.flaky:
            result.flaky.append(outcome)
        elif test in expected.not_passing:
            if outcome.status == PASS:
                result.now_passing.append(test)
            elif outcome.mixed:
                result.sometimes.append(outcome)
            else:
                result.still_not_passing.append((outcome, expected.not_passing[test].reason))
        else:
            result.unlisted.append(outcome)
    return result


def signature(outcome: str, detail: str) -> str:
    """What identifies a failure across runs: the outcome and the first failure line
    with every number blanked (line numbers, counts and times vary; the failing
    case's name, the missing symbol or the signal do not)."""
    return f"{outcome}: {re.sub(r'[0-9]+', '#', detail[:SEEN_CHARS])}"


def _kept_reason(old: NotPassing, outcome: TestOutcome) -> str:
    """The old reason; behind RECHECK_PREFIX if the failure it explained has changed
    (an entry without `seen`, written by hand, has nothing to compare with)."""
    unchanged = signature(old.outcome, old.seen) == signature(outcome.status, outcome.detail)
    if old.todo or not old.seen or unchanged:
        return old.reason
    return f"{RECHECK_PREFIX} {old.reason}"


def updated(expectations: Expectations, library: str, outcomes: dict[str, TestOutcome]) -> Expectations:
    """The file's content after taking this run's outcomes for `library`."""
    old = expectations.libraries.get(library, LibraryExpectation())
    passes, not_passing = set(old.passes), dict(old.not_passing)
    flaky = dict(old.flaky)
    for test, outcome in outcomes.items():
        if test in old.flaky:
            continue
        if outcome.mixed:
            passes.discard(test)
            not_passing.pop(test, None)
            flaky[test] = f"{TODO_PREFIX} {outcome.detail[:SEEN_CHARS]}"
            continue
        if outcome.status == PASS:
            passes.add(test)
            not_passing.pop(test, None)
            continue
        passes.discard(test)
        if test in old.not_passing:
            reason = _kept_reason(old.not_passing[test], outcome)
        else:
            reason = f"{TODO_PREFIX} {outcome.detail[:SEEN_CHARS]}"
        not_passing[test] = NotPassing(outcome.status, reason, outcome.detail[:SEEN_CHARS])
    new = LibraryExpectation(frozenset(passes), not_passing, flaky)
    return Expectations({**expectations.libraries, library: new})


_HEADER = """\
# libzmq 4.3.5's own tests (tests/test_*.cpp of the pinned tree) per library: which
# are expected to pass, and for each other test its last outcome and why. Read by
# `./testbed test --only libzmq-suite` (analysis/testbed/suites/libzmq_suite*.py):
# an expected pass that does not pass fails the run; a listed test that now passes
# is reported ("tighten the file"). `--update-expectations` rewrites this file from
# a run, keeping every reason; replace each "TODO explain:" it writes with the why,
# and check each "TODO recheck:" (the test now fails differently from `seen`).
# [..flaky]: tests whose outcome varies from run to run; never failures, never moved
# by an update. Which tests are built at all, and their time limits: suite.toml.
"""


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def dump(expectations: Expectations) -> str:
    out = [_HEADER, f"schema = {SCHEMA}"]
    for name in expectations.libraries:
        library = expectations.libraries[name]
        out.append(f"\n[libraries.{_quote(name)}]")
        out.append("pass = [\n" + "".join(f"  {_quote(t)},\n" for t in sorted(library.passes)) + "]")
        out.append(f"\n[libraries.{_quote(name)}.not_passing]")
        for test in sorted(library.not_passing):
            entry = library.not_passing[test]
            out.append(f"{test} = {{ outcome = {_quote(entry.outcome)}, reason = {_quote(entry.reason)}, "
                       f"seen = {_quote(entry.seen)} }}")
        if library.flaky:
            out.append(f"\n[libraries.{_quote(name)}.flaky]")
            out += [f"{test} = {_quote(library.flaky[test])}" for test in sorted(library.flaky)]
    return "\n".join(out) + "\n"
