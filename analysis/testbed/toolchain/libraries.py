"""The library table: every library the testbed can benchmark, how it is built, and
where its prefix is. Adding a library is one entry in LIBRARIES.

API (the contract other layers code against):
  registered_names() -> list[str]
  find_built(name)   -> LibraryBuild   no building; raises LibraryUnavailable
  ensure_built(name) -> LibraryBuild   builds what is missing (cached by build key)
  check_name(name)                    raises LibraryUnavailable for a name no build can satisfy
A name may also be a zlink flavour at a git revision, `zlink@REV` (zlink_revision.py):
built with the flavour's own recipe from that revision's zlink/, its LibraryBuild
named as asked and its info carrying the revision and commit.
With TESTBED_PREBUILT=<libs.json> both use the prefixes and bench dirs named there
and build nothing (the Nix path; tests with fake benches).
`bench=False` asks for the library prefix alone (e.g. for interop tests), without
the bench binaries.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from testbed import paths
from testbed.toolchain import bench_build, buildcache, zlink_revision
from testbed.toolchain.baselines import LibzmqFlavour
from testbed.toolchain.progress import Progress
from testbed.toolchain.zlink_build import ZlinkLibrary

INFO_FILE = "testbed-lib.json"


class Recipe(Protocol):
    name: str
    link_name: str

    def unavailable(self) -> str | None: ...  # why it cannot be built now, or None
    def key(self) -> str: ...                 # sha256 hex over everything that shapes the build
    def describe(self) -> dict: ...           # testbed-lib.json fields known before building
    def build(self, work: Path, progress: Progress) -> dict: ...  # -> testbed-lib.json minus build_id


# name -> how to build it. The prefix is build/libs/<name>/<build id>/prefix.
LIBRARIES: dict[str, Recipe] = {
    "libzmq-4.3.5": LibzmqFlavour("libzmq-4.3.5"),
    "libzmq-4.3.5-nocurve": LibzmqFlavour("libzmq-4.3.5-nocurve"),
    "zlink": ZlinkLibrary(curve=True),
    "zlink-nocurve": ZlinkLibrary(curve=False),
}


class LibraryUnavailable(Exception):
    """The message says which library and why."""


@dataclass(frozen=True)
class LibraryBuild:
    name: str
    prefix: Path
    bench_dir: Path
    info: dict = field(hash=False)

    def bench_binary(self, pattern: str) -> Path:
        return self.bench_dir / f"bench_{pattern.lower()}"


def registered_names() -> list[str]:
    return list(LIBRARIES)


def _recipe(name: str) -> tuple[Recipe, dict]:
    """(how to build `name`, what its info records beyond the build: a revision's origin)."""
    if name in LIBRARIES:
        recipe, origin = LIBRARIES[name], {}
    else:
        recipe, origin = _revision_recipe(name)
    reason = recipe.unavailable()
    if reason:
        raise LibraryUnavailable(f"{name}: {reason}")
    return recipe, origin


def _revision_recipe(name: str) -> tuple[Recipe, dict]:
    parts = zlink_revision.split(name)
    flavour = LIBRARIES.get(parts[0]) if parts else None
    if not isinstance(flavour, ZlinkLibrary):
        raise LibraryUnavailable(f"unknown library {name!r}; registered: {', '.join(LIBRARIES)}; or a zlink "
                                 f"flavour at a git revision ({', '.join(_zlink_flavours())} + "
                                 f"{zlink_revision.SEPARATOR}REV, e.g. zlink@HEAD~1)")
    try:
        rev = zlink_revision.resolve(name)
        tree = zlink_revision.export(rev)
    except zlink_revision.RevisionError as exc:
        raise LibraryUnavailable(str(exc)) from None
    return ZlinkLibrary(curve=flavour.curve, source=tree), rev.origin()


def _zlink_flavours() -> list[str]:
    return [n for n, r in LIBRARIES.items() if isinstance(r, ZlinkLibrary)]


def check_name(name: str) -> None:
    """Raise LibraryUnavailable unless `name` is registered or a resolvable zlink@REV
    (exports the revision's tree; builds nothing)."""
    _recipe(name)


def describe(name: str) -> dict:
    """testbed-lib.json fields known before building, plus a revision's origin."""
    recipe, origin = _recipe(name)
    return {**recipe.describe(), **origin}


def work_dir(name: str) -> Path:
    recipe = _recipe(name)[0]
    return buildcache.keyed_dir(paths.LIBS_DIR / recipe.name, recipe.key())


def _read_info(prefix: Path, name: str) -> dict:
    try:
        return json.loads((prefix / INFO_FILE).read_text())
    except FileNotFoundError:
        raise LibraryUnavailable(f"{name}: {prefix / INFO_FILE} does not exist") from None
    except json.JSONDecodeError as exc:
        raise LibraryUnavailable(f"{name}: {prefix / INFO_FILE} is not valid JSON: {exc}") from None


def _prebuilt(name: str) -> LibraryBuild | None:
    listing = os.environ.get("TESTBED_PREBUILT")
    if not listing:
        return None
    try:
        entries = json.loads(Path(listing).read_text())["libraries"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise LibraryUnavailable(f"TESTBED_PREBUILT={listing}: unreadable ({exc}); expected "
                                 '{"libraries": {"<name>": {"prefix": ..., "bench_dir": ...}}}') from None
    if name not in entries:
        raise LibraryUnavailable(
            f"{name}: not listed in TESTBED_PREBUILT={listing} (has: {', '.join(entries)})"
        )
    prefix = Path(entries[name]["prefix"])
    info = _read_info(prefix, name)
    if zlink_revision.split(name):  # the listing says which build is zlink@REV; git says which commit
        try:
            info = {**info, **zlink_revision.resolve(name).origin()}
        except zlink_revision.RevisionError as exc:
            raise LibraryUnavailable(str(exc)) from None
    return LibraryBuild(name, prefix, Path(entries[name].get("bench_dir", prefix / "bench")), info)


def _with_bench(name: str, prefix: Path, info: dict, bench: bool, progress: Progress | None) -> LibraryBuild:
    if not bench:
        return LibraryBuild(name, prefix, bench_build.bench_dir(info) if not bench_build.missing_reason()
                            else paths.BENCH_BUILD_DIR / name, info)
    reason = bench_build.missing_reason()
    if reason:
        raise LibraryUnavailable(f"{name}: {reason}")
    if progress is None:
        if not bench_build.is_built(info):
            raise LibraryUnavailable(f"{name}: bench binaries for build {info['build_id']} not built "
                                     "(run ./testbed setup)")
        return LibraryBuild(name, prefix, bench_build.bench_dir(info), info)
    try:
        return LibraryBuild(name, prefix, bench_build.ensure(prefix, info, progress), info)
    except Exception as exc:
        raise LibraryUnavailable(f"{name}: building bench/ against it failed: {exc}") from exc


def find_built(name: str, bench: bool = True) -> LibraryBuild:
    pre = _prebuilt(name)
    if pre is not None:
        return pre
    recipe, origin = _recipe(name)
    prefix = buildcache.keyed_dir(paths.LIBS_DIR / recipe.name, recipe.key()) / "prefix"
    if not (prefix / INFO_FILE).is_file():
        hint = f"./testbed bench ... --lib {name}" if origin else "./testbed setup"
        raise LibraryUnavailable(f"{name}: not built for the current sources/flags/compiler "
                                 f"(expected {prefix}; run {hint})")
    return _with_bench(name, prefix, {**_read_info(prefix, name), **origin}, bench, None)


def ensure_built(name: str, bench: bool = True, progress: Progress | None = None) -> LibraryBuild:
    pre = _prebuilt(name)
    if pre is not None:
        return pre
    recipe, origin = _recipe(name)
    progress = progress or Progress()
    key = recipe.key()

    def build(work: Path) -> None:
        info = {**recipe.build(work, progress), "build_id": key[:16]}
        tmp = work / "prefix" / (INFO_FILE + ".tmp")
        tmp.write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
        tmp.rename(work / "prefix" / INFO_FILE)  # written last: its presence means "built"

    try:
        work = buildcache.cached(paths.LIBS_DIR / recipe.name, key, f"prefix/{INFO_FILE}", build)
    except LibraryUnavailable:
        raise
    except Exception as exc:
        raise LibraryUnavailable(f"{name}: build failed: {exc}") from exc
    prefix = work / "prefix"
    # The origin stays out of testbed-lib.json: every commit with this zlink tree shares the build.
    return _with_bench(name, prefix, {**_read_info(prefix, name), **origin}, bench, progress)
