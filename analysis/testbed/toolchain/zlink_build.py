"""zlink as registered libraries (Release, tests off) in two flavours like the
baseline: `zlink` with CURVE on the pinned libsodium, `zlink-nocurve` without; plus
the test, sanitizer and fuzz builds that `./testbed test` uses (all with CURVE). zlink's
own CMake decides how it builds; the toolchain only passes these cache variables
(zlink/CMakeLists.txt and zlink/cmake/ZlinkCurve.cmake declare them):

  ZLINK_BUILD_TESTS=ON|OFF             zlink's GoogleTest suites (ctest)
  ZLINK_INTEROP_LIBZMQ_PREFIX=<dir>    the libzmq-4.3.5 prefix for interop tests
  ZLINK_BUILD_FUZZERS=ON               build fuzz/ targets (clang, -fsanitize=fuzzer)
  ZLINK_LIBZMQ_COMPAT=ON               also install lib/libzmq.so.5 and libzmq.pc (the
                                       binary drop-in the libzmq suite checks)
  ZLINK_WITH_CURVE=ON|OFF              CURVE on libsodium (ON fails if it is not found)
  sodium_ROOT=<dir>                    the pinned libsodium prefix (build/deps/libsodium/<id>/prefix)
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from testbed import paths
from testbed.toolchain import baselines, cmake, compiler_cache, keys, pins
from testbed.toolchain.capabilities import CapabilityError, check_curve
from testbed.toolchain.progress import Progress

# The registered flavours' flags live in baselines/pins.toml's [zlink] table, which
# zlink/package.nix reads too (builtins.fromTOML): one source for both paths.
_ZLINK_PINS = pins.load()["zlink"]
RELEASE_FLAGS: list[str] = list(_ZLINK_PINS["cmake_flags"])
CURVE_ON: str = _ZLINK_PINS["curve_on"]
CURVE_OFF: str = _ZLINK_PINS["curve_off"]
# -O1 as the ASan docs advise: usable stacks, and a much cheaper compile than -O2.
# -g1, not -g: line tables and functions (inlined ones too) are all a sanitizer's
# report symbolizes, and the same report comes out; the locals' debug info -g adds
# changes no generated code and cost a fifth of the compile (the sanitizer trees are
# most of CI's compiling). A debugger session that needs locals rebuilds with -g.
# Without UBSan's vptr check: it probes memory through a pipe, so in the tests that run
# the process out of file descriptors on purpose it reports valid objects as having an
# "invalid vptr" (seen on std::system_error under EMFILE). Every other UBSan check stays.
SANITIZER_DEBUG_INFO = "-g1"
SANITIZE = (f"-O1 {SANITIZER_DEBUG_INFO} -fsanitize=address,undefined -fno-sanitize=vptr "
            "-fno-omit-frame-pointer -fno-sanitize-recover=undefined")
ZLINK_TREES = paths.BUILD_DIR / "zlink"


def source_dir() -> Path:
    return paths.ZLINK_SRC_DIR


def missing_reason(tree: Path | None = None) -> str | None:
    tree = tree or source_dir()
    if not (tree / "CMakeLists.txt").is_file():
        return f"{tree}/CMakeLists.txt does not exist yet"
    return None


def curve_flags(progress: Progress | None = None) -> list[str]:
    """CURVE on the pinned libsodium (built once into build/deps, like the baseline's)."""
    sodium = baselines.ensure_libsodium(baselines.pinned(), progress or Progress())
    return [CURVE_ON, f"-Dsodium_ROOT={sodium}"]


class ZlinkLibrary:
    """One flavour of zlink: with CURVE (libsodium linked in statically) or without."""

    link_name = "zlink"

    def __init__(self, curve: bool = True, source: Path | None = None):
        self.curve = curve
        self.name = "zlink" if curve else "zlink-nocurve"
        # Another zlink tree (a revision's export, zlink_revision.py) builds with the
        # very same flags and key parts: only the source differs.
        self.source = source

    def source_dir(self) -> Path:
        return self.source or source_dir()

    def flags(self) -> list[str]:
        """What testbed-lib.json records (the sodium_ROOT path is machine-specific and
        left out; the libsodium build key and version stand for it)."""
        return [*RELEASE_FLAGS, CURVE_ON if self.curve else CURVE_OFF]

    def unavailable(self) -> str | None:
        return missing_reason(self.source_dir())

    def key(self) -> str:
        pin = baselines.pinned()
        return keys.build_key(kind="zlink", name=self.name, source=keys.tree_hash(self.source_dir()),
                              flags=self.flags(), tools=keys.toolchain_id(),
                              sodium=baselines.libsodium_key(pin) if self.curve else None)

    def describe(self, version: str = "unknown") -> dict:
        info = {"name": self.name, "version": version, "source_hash": keys.tree_hash(self.source_dir()),
                "flags": self.flags(), "compiler": keys.compiler_id(), "curve": self.curve,
                "link_name": self.link_name}
        if self.curve:
            sodium = baselines.pinned()["libsodium"]
            info["libsodium"] = {"version": sodium["version"], "sha256": sodium["sha256"]}
        return info

    def _build_source(self, work: Path) -> Path:
        """What CMake compiles: a copy of the source inside the build directory, so
        that its files sit at the same path relative to the compiles (../zlink/...) in
        every zlink build, the working tree's and each revision's, and the compiler
        cache (compiler_cache.py) finds the unchanged ones. The key is the source's."""
        copy, skip = work / "zlink", keys.tree_filter(self.source_dir())
        shutil.copytree(self.source_dir(), copy, symlinks=True,
                        ignore=lambda folder, names: {n for n in names if skip(Path(folder) / n)})
        return copy

    def build(self, work: Path, progress: Progress) -> dict:
        build_dir, prefix, log = work / "build", work / "prefix", work / "build.log"
        extra = curve_flags(progress) if self.curve else [CURVE_OFF]
        progress.step(f"building {self.name} (Release)")
        cmake.configure(self._build_source(work), build_dir,
                        [*RELEASE_FLAGS, *extra, f"-DCMAKE_INSTALL_PREFIX={prefix}",
                         *compiler_cache.launcher_flags()],
                        progress, title=self.name, log=log)
        cmake.build(build_dir, progress, title=self.name, install=True, log=log)
        library = prefix / "lib" / "libzlink.so"
        for needed in (prefix / "include" / "zmq.h", library):
            if not needed.exists():
                missing = needed.relative_to(prefix)
                raise CapabilityError(f"{self.name}: its install did not produce {missing} in {prefix}")
        # As for libzmq: the flavour is checked on the result, not trusted from the flags.
        check_curve(library, self.curve, self.name)
        if self.curve:
            used = cmake.cache_value(build_dir, "ZLINK_SODIUM_LIBRARY") or ""
            pinned_prefix = extra[1].split("=", 1)[1]
            if not used.startswith(pinned_prefix):
                raise CapabilityError(f"{self.name}: linked libsodium {used!r}, "
                                      f"not the pinned one in {pinned_prefix}")
        version = cmake.cache_value(build_dir, "CMAKE_PROJECT_VERSION") or "unknown"
        return self.describe(version or "unknown")


def configure_and_build(kind: str, flags: list[str], progress: Progress, env: dict | None = None,
                        compilers: tuple[str, str] | None = None,
                        pick: Callable[[list[str]], list[str]] | None = None) -> Path:
    """An incremental (not keyed) zlink build in build/zlink/<kind>/, for tests: the
    build tool itself decides what is stale, so re-running is cheap."""
    build_dir = ZLINK_TREES / kind
    _forget_other_source(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    log = ZLINK_TREES / f"{kind}.log"
    log.unlink(missing_ok=True)
    cmake.configure(source_dir(), build_dir, flags, progress, title=f"zlink ({kind})", env=env, log=log,
                    compilers=compilers)
    # pick(all target names) -> the targets to build; None builds everything.
    targets = pick(cmake.ninja_targets(build_dir)) if pick else None
    cmake.build(build_dir, progress, title=f"zlink ({kind})", log=log, targets=targets or None)
    return build_dir


def _forget_other_source(build_dir: Path) -> None:
    """These trees are not keyed: two checkouts sharing one TESTBED_BUILD_DIR (git
    worktrees) would each find the other's CMake cache, which CMake refuses. A tree
    configured for another source is removed and rebuilt, never reused."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            configured = Path(line.split("=", 1)[1])
            if configured.resolve() != source_dir().resolve():
                shutil.rmtree(build_dir)
            return


# The test tree's RelWithDebInfo with line tables only (-g1 for CMake's -g): the same
# -O2 code, with file:line in every backtrace, and compiled in about 40% less time than
# with full debug info (command_test.cpp: 13.7 s -> 8.4 s here), which was most of the
# test step's 264 s build in CI. A debugger session that needs local variables builds
# its own tree with -g.
TEST_OPTIMISE = "-O2 -g1 -DNDEBUG"


def test_flags(libzmq_prefix: Path | None) -> list[str]:
    flags = ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", f"-DCMAKE_C_FLAGS_RELWITHDEBINFO={TEST_OPTIMISE}",
             f"-DCMAKE_CXX_FLAGS_RELWITHDEBINFO={TEST_OPTIMISE}", "-DZLINK_BUILD_TESTS=ON",
             "-DZLINK_BUILD_FUZZERS=OFF", *curve_flags()]
    if libzmq_prefix is not None:
        flags.append(f"-DZLINK_INTEROP_LIBZMQ_PREFIX={libzmq_prefix}")
    return flags


def sanitizer_debug_build() -> list[str]:
    """CMake's Debug type (asserts on: no NDEBUG) without its own -g, which comes after
    CMAKE_<LANG>_FLAGS on the command line and would win over SANITIZER_DEBUG_INFO."""
    return ["-DCMAKE_BUILD_TYPE=Debug", f"-DCMAKE_C_FLAGS_DEBUG={SANITIZER_DEBUG_INFO}",
            f"-DCMAKE_CXX_FLAGS_DEBUG={SANITIZER_DEBUG_INFO}"]


def sanitize_flags(libzmq_prefix: Path | None) -> list[str]:
    flags = [f for f in test_flags(libzmq_prefix) if not f.startswith("-DCMAKE_BUILD_TYPE=")]
    return [*sanitizer_debug_build(), *flags, f"-DCMAKE_C_FLAGS={SANITIZE}",
            f"-DCMAKE_CXX_FLAGS={SANITIZE}", f"-DCMAKE_EXE_LINKER_FLAGS={SANITIZE}",
            f"-DCMAKE_SHARED_LINKER_FLAGS={SANITIZE}"]


FUZZ_COMPILERS = ("clang", "clang++")


def fuzz_flags() -> list[str]:
    # zlink/fuzz/CMakeLists.txt instruments its targets itself (-fsanitize=fuzzer,
    # address, undefined); the toolchain only picks clang and switches the targets on.
    return ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DZLINK_BUILD_TESTS=OFF", "-DZLINK_BUILD_FUZZERS=ON",
            *curve_flags()]
