"""baselines/libzmq-suite/suite.toml: which of libzmq 4.3.5's test programs the
libzmq suite builds (all tests/test_*.cpp of the pinned tree except `never_built`)
and how long each may run. Read and checked here, so a typo in the file is an
error naming the file and the entry, never a silently skipped test."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from testbed import paths

SUITE_DIR = paths.BASELINES_DIR / "libzmq-suite"
CONFIG_FILE = SUITE_DIR / "suite.toml"
SCHEMA = 1


class SuiteConfigError(Exception):
    """The message names the file and the bad entry."""


@dataclass(frozen=True)
class SuiteConfig:
    never_built: dict[str, str]   # test -> why it is not compiled
    timeouts: dict[str, float]    # test -> seconds; "default" for the rest

    def timeout(self, test: str) -> float:
        return self.timeouts.get(test, self.timeouts["default"])

    def built_tests(self, tree_tests: list[str]) -> list[str]:
        return [t for t in tree_tests if t not in self.never_built]


def tree_tests(libzmq_src: Path) -> list[str]:
    """Every test program of the pinned tree: tests/test_<name>.cpp -> test_<name>."""
    return sorted(p.stem for p in (libzmq_src / "tests").glob("test_*.cpp"))


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SuiteConfigError(f"{path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise SuiteConfigError(f"{path}: not valid TOML: {exc}") from None


def _reasons(table: object, path: Path) -> dict[str, str]:
    if not isinstance(table, dict):
        raise SuiteConfigError(f"{path}: [never_built] must be a table of test = \"reason\"")
    for test, reason in table.items():
        if not isinstance(reason, str) or not reason.strip():
            raise SuiteConfigError(f"{path}: never_built.{test} needs a non-empty reason string")
    return dict(table)


def _timeouts(table: object, path: Path) -> dict[str, float]:
    if not isinstance(table, dict) or "default" not in table:
        raise SuiteConfigError(f"{path}: [timeouts] must be a table with at least `default = <seconds>`")
    for test, seconds in table.items():
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
            raise SuiteConfigError(f"{path}: timeouts.{test} = {seconds!r}; "
                                   "expected a positive number of seconds")
    return {test: float(seconds) for test, seconds in table.items()}


def load(path: Path = CONFIG_FILE) -> SuiteConfig:
    data = _read(path)
    if data.get("schema") != SCHEMA:
        raise SuiteConfigError(f"{path}: schema = {data.get('schema')!r}; this testbed reads schema {SCHEMA}")
    unknown = set(data) - {"schema", "never_built", "timeouts"}
    if unknown:
        raise SuiteConfigError(f"{path}: unknown key(s) {sorted(unknown)}")
    return SuiteConfig(_reasons(data.get("never_built", {}), path), _timeouts(data.get("timeouts"), path))


def check_against_tree(config: SuiteConfig, tree: list[str], path: Path = CONFIG_FILE) -> None:
    """Names in the file that are no test program of the pinned tree are typos."""
    known = set(tree)
    named = set(config.never_built) | (set(config.timeouts) - {"default"})
    stray = sorted(named - known)
    if stray:
        raise SuiteConfigError(f"{path}: {', '.join(stray)} not among the pinned tree's tests/test_*.cpp")
