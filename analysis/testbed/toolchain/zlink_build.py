"""zlink as a registered library (Release, tests off), plus the test, sanitizer and
fuzz builds that `./testbed test` uses. zlink's own CMake decides how it builds; the
toolchain only passes these cache variables (zlink/CMakeLists.txt declares them):

  ZLINK_BUILD_TESTS=ON|OFF             zlink's GoogleTest suites (ctest)
  ZLINK_INTEROP_LIBZMQ_PREFIX=<dir>    the libzmq-4.3.5 prefix for interop tests
  ZLINK_BUILD_FUZZERS=ON               build fuzz/ targets (clang, -fsanitize=fuzzer)
  ZLINK_LIBZMQ_COMPAT=ON               also install lib/libzmq.so.5 and libzmq.pc (the
                                       binary drop-in the libzmq suite checks)
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from testbed import paths
from testbed.toolchain import cmake, keys
from testbed.toolchain.capabilities import CapabilityError, zmq_has
from testbed.toolchain.progress import Progress

RELEASE_FLAGS = ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_INSTALL_LIBDIR=lib", "-DZLINK_BUILD_TESTS=OFF",
                 "-DZLINK_BUILD_FUZZERS=OFF", "-DZLINK_LIBZMQ_COMPAT=ON"]
# -O1 -g as the ASan docs advise: usable stacks, and a much cheaper compile than -O2.
SANITIZE = "-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
ZLINK_TREES = paths.BUILD_DIR / "zlink"


def source_dir() -> Path:
    return paths.ZLINK_SRC_DIR


def missing_reason() -> str | None:
    if not (source_dir() / "CMakeLists.txt").is_file():
        return f"{source_dir()}/CMakeLists.txt does not exist yet"
    return None


class ZlinkLibrary:
    name = "zlink"
    link_name = "zlink"

    def unavailable(self) -> str | None:
        return missing_reason()

    def key(self) -> str:
        return keys.build_key(kind="zlink", source=keys.tree_hash(source_dir()), flags=RELEASE_FLAGS,
                              tools=keys.toolchain_id())

    def describe(self, version: str = "unknown") -> dict:
        return {"name": self.name, "version": version, "source_hash": keys.tree_hash(source_dir()),
                "flags": list(RELEASE_FLAGS), "compiler": keys.compiler_id(), "curve": False,
                "link_name": self.link_name}

    def build(self, work: Path, progress: Progress) -> dict:
        build_dir, prefix, log = work / "build", work / "prefix", work / "build.log"
        progress.step("building zlink (Release)")
        cmake.configure(source_dir(), build_dir, [*RELEASE_FLAGS, f"-DCMAKE_INSTALL_PREFIX={prefix}"],
                        progress, title="zlink", log=log)
        cmake.build(build_dir, progress, title="zlink", install=True, log=log)
        library = prefix / "lib" / "libzlink.so"
        for needed in (prefix / "include" / "zmq.h", library):
            if not needed.exists():
                missing = needed.relative_to(prefix)
                raise CapabilityError(f"zlink: its install did not produce {missing} in {prefix}")
        version = cmake.cache_value(build_dir, "CMAKE_PROJECT_VERSION") or "unknown"
        info = self.describe(version or "unknown")
        try:
            info["curve"] = zmq_has(library, "curve")
        except CapabilityError as exc:
            info["curve_probe"] = str(exc)
        return info


def configure_and_build(kind: str, flags: list[str], progress: Progress, env: dict | None = None,
                        compilers: tuple[str, str] | None = None,
                        pick: Callable[[list[str]], list[str]] | None = None) -> Path:
    """An incremental (not keyed) zlink build in build/zlink/<kind>/, for tests: the
    build tool itself decides what is stale, so re-running is cheap."""
    build_dir = ZLINK_TREES / kind
    build_dir.mkdir(parents=True, exist_ok=True)
    log = ZLINK_TREES / f"{kind}.log"
    log.unlink(missing_ok=True)
    cmake.configure(source_dir(), build_dir, flags, progress, title=f"zlink ({kind})", env=env, log=log,
                    compilers=compilers)
    # pick(all target names) -> the targets to build; None builds everything.
    targets = pick(cmake.ninja_targets(build_dir)) if pick else None
    cmake.build(build_dir, progress, title=f"zlink ({kind})", log=log, targets=targets or None)
    return build_dir


def test_flags(libzmq_prefix: Path | None) -> list[str]:
    flags = ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DZLINK_BUILD_TESTS=ON", "-DZLINK_BUILD_FUZZERS=OFF"]
    if libzmq_prefix is not None:
        flags.append(f"-DZLINK_INTEROP_LIBZMQ_PREFIX={libzmq_prefix}")
    return flags


def sanitize_flags(libzmq_prefix: Path | None) -> list[str]:
    flags = [f for f in test_flags(libzmq_prefix) if not f.startswith("-DCMAKE_BUILD_TYPE=")]
    return ["-DCMAKE_BUILD_TYPE=Debug", *flags, f"-DCMAKE_C_FLAGS={SANITIZE}",
            f"-DCMAKE_CXX_FLAGS={SANITIZE}", f"-DCMAKE_EXE_LINKER_FLAGS={SANITIZE}",
            f"-DCMAKE_SHARED_LINKER_FLAGS={SANITIZE}"]


FUZZ_COMPILERS = ("clang", "clang++")


def fuzz_flags() -> list[str]:
    # zlink/fuzz/CMakeLists.txt instruments its targets itself (-fsanitize=fuzzer,
    # address, undefined); the toolchain only picks clang and switches the targets on.
    return ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DZLINK_BUILD_TESTS=OFF", "-DZLINK_BUILD_FUZZERS=ON"]
