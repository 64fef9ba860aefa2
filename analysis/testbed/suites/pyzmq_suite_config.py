"""baselines/pyzmq-suite: the pinned pyzmq sdist (version, sha256, test requirements),
how its tests run (suite.toml) and what each library is expected to do differently
from the oracle (expectations.toml). Every malformed entry is refused with the file,
the key and what is allowed."""
from __future__ import annotations

import hashlib
import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from testbed import paths

SUITE_DIR = paths.REPO_ROOT / "baselines" / "pyzmq-suite"
SUITE_FILE = SUITE_DIR / "suite.toml"
EXPECTATIONS_FILE = SUITE_DIR / "expectations.toml"
SCHEMA = 1


class PyzmqSuiteError(Exception):
    """The message names the file and the key."""


@dataclass(frozen=True)
class SuiteConfig:
    version: str
    sha256: str
    test_requirements: tuple[str, ...]
    test_timeout: int
    run_timeout: int
    libraries: tuple[str, ...]
    oracle: str
    deselect: dict[str, str]          # pytest node id -> why it is not run
    isolated: dict[str, str]          # test file run in its own pytest process -> why
    flaky: dict[str, str]             # node id -> what varies and why (run, reported, not counted)

    @property
    def sdist_name(self) -> str:
        return f"pyzmq-{self.version}.tar.gz"


@dataclass(frozen=True)
class Expectations:
    oracle_not_passing: dict[str, str]        # node id -> why the oracle does not pass it
    differences: dict[str, dict[str, str]]    # library -> node id -> why it differs from the oracle


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise PyzmqSuiteError(f"{path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise PyzmqSuiteError(f"{path}: not valid TOML: {exc}") from None


def _get(table: dict, key: str, kind: type, where: str):
    value = table.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise PyzmqSuiteError(f"{where}: `{key}` must be a {kind.__name__}, got {value!r}")
    return value


def _reasons(table: object, where: str) -> dict[str, str]:
    if not isinstance(table, dict) or not all(isinstance(r, str) and r.strip() for r in table.values()):
        raise PyzmqSuiteError(f"{where} must be a table of \"<test node id>\" = \"<reason>\" "
                              "(every reason non-empty)")
    bad = [name for name in table if "::" not in name]
    if bad:
        raise PyzmqSuiteError(f"{where}: {', '.join(bad)} is not a pytest node id "
                              "(tests/test_x.py::Class::test)")
    return dict(table)


def load_config(path: Path = SUITE_FILE) -> SuiteConfig:
    data = _read(path)
    if data.get("schema") != SCHEMA:
        raise PyzmqSuiteError(f"{path}: schema = {data.get('schema')!r}; this testbed reads schema {SCHEMA}")
    pin, run = data.get("pyzmq", {}), data.get("run", {})
    requirements = _get(pin, "test_requirements", list, f"{path} [pyzmq]")
    if not all(isinstance(r, str) and "==" in r for r in requirements):
        raise PyzmqSuiteError(f"{path} [pyzmq]: test_requirements must be pinned \"name==version\" strings")
    sha = _get(pin, "sha256", str, f"{path} [pyzmq]")
    if len(sha) != 64 or set(sha) - set("0123456789abcdef"):
        raise PyzmqSuiteError(f"{path} [pyzmq]: sha256 must be 64 lowercase hex digits")
    libraries = tuple(_get(run, "libraries", list, f"{path} [run]"))
    oracle = _get(run, "oracle", str, f"{path} [run]")
    if oracle not in libraries:
        raise PyzmqSuiteError(f"{path} [run]: oracle {oracle!r} is not one of libraries {list(libraries)}")
    return SuiteConfig(_get(pin, "version", str, f"{path} [pyzmq]"), sha, tuple(requirements),
                       _get(run, "test_timeout_seconds", int, f"{path} [run]"),
                       _get(run, "run_timeout_seconds", int, f"{path} [run]"), libraries, oracle,
                       _reasons(data.get("deselect", {}), f"{path} [deselect]"), _isolated(data, path),
                       _reasons(data.get("flaky", {}), f"{path} [flaky]"))


def _isolated(data: dict, path: Path) -> dict[str, str]:
    table = data.get("isolated", {})
    if not isinstance(table, dict) or not all(isinstance(r, str) and r.strip() for r in table.values()) \
            or not all(name.startswith("tests/") and name.endswith(".py") for name in table):
        raise PyzmqSuiteError(f"{path} [isolated] must be a table of \"tests/<file>.py\" = \"<reason>\"")
    return dict(table)


def load_expectations(config: SuiteConfig, path: Path = EXPECTATIONS_FILE) -> Expectations:
    data = _read(path)
    if data.get("schema") != SCHEMA or set(data) - {"schema", "oracle_not_passing", "differences"}:
        raise PyzmqSuiteError(f"{path}: expected `schema = {SCHEMA}`, [oracle_not_passing] and "
                              "[differences.\"<library>\"] only")
    differences = data.get("differences", {})
    stray = sorted(set(differences) - set(config.libraries) - {config.oracle})
    if stray or config.oracle in differences:
        raise PyzmqSuiteError(f"{path}: [differences] may name only {', '.join(config.libraries[1:])} "
                              f"(the oracle {config.oracle} has [oracle_not_passing]); "
                              f"got {stray or [config.oracle]}")
    return Expectations(_reasons(data.get("oracle_not_passing", {}), f"{path} [oracle_not_passing]"),
                        {name: _reasons(table, f"{path} [differences.\"{name}\"]")
                         for name, table in differences.items()})


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_sdist(config: SuiteConfig, path: Path) -> None:
    actual = sha256_of(path)
    if actual != config.sha256:
        raise PyzmqSuiteError(f"{path}: sha256 {actual}, but baselines/pyzmq-suite/suite.toml pins "
                              f"{config.sha256}; refusing to build from it")


def unpack_tests(config: SuiteConfig, sdist: Path, into: Path) -> Path:
    """The sdist's tests/ and pytest.ini only: run from a folder without the source
    zmq/ package, so the tests import the compiled pyzmq of the venv."""
    root = f"pyzmq-{config.version}/"
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers()
                   if m.name.startswith(root + "tests/") or m.name == root + "pytest.ini"]
        if not any(m.name == root + "pytest.ini" for m in members):
            raise PyzmqSuiteError(f"{sdist}: has no {root}pytest.ini; not the pinned pyzmq sdist layout")
        archive.extractall(into, members=members, filter="data")
    return into / root.rstrip("/")


def check_sdist_path(config: SuiteConfig) -> Path:
    """The fetched sdist (libzmq_suite_pyzmq.fetch_sdist put it there), checked again."""
    sdist = paths.SOURCES_DIR / "pyzmq" / config.sha256[:16] / config.sdist_name
    if not sdist.is_file():
        raise PyzmqSuiteError(f"{sdist} is missing (the pyzmq build fetches it)")
    check_sdist(config, sdist)
    return sdist
