"""The libzmq 4.3.5 baselines: libsodium from its pinned tarball, then libzmq from
its pinned tree in the flavours listed in baselines/pins.toml."""
from __future__ import annotations

import functools
from pathlib import Path

from testbed import paths
from testbed.toolchain import buildcache, cmake, keys, pins, sources
from testbed.toolchain.capabilities import CapabilityError, check_curve
from testbed.toolchain.progress import Progress

DEPS_DIR = paths.BUILD_DIR / "deps"
_SODIUM_MARKER = ".testbed-done"


@functools.cache
def pinned() -> dict:
    return pins.load()


def libsodium_key(pin: dict) -> str:
    sodium = pin["libsodium"]
    return keys.build_key(kind="libsodium", sha256=sodium["sha256"], flags=sodium["configure_flags"],
                          tools=keys.toolchain_id())


def ensure_libsodium(pin: dict, progress: Progress) -> Path:
    """Build (once per key) libsodium into build/deps/libsodium/<id>/prefix."""
    sodium = pin["libsodium"]

    def build(work: Path) -> None:
        progress.step(f"building libsodium {sodium['version']} (about 30 s)")
        src = sources.libsodium_source(pin, progress)
        build_dir, prefix, log = work / "build", work / "prefix", work / "build.log"
        build_dir.mkdir()
        env = {"CC": keys.c_compiler()}
        progress.run([str(src / "configure"), f"--prefix={prefix}", *sodium["configure_flags"]],
                     cwd=build_dir, log=log, env=env, title="libsodium: configure")
        progress.run(["make", f"-j{keys.JOBS}"], cwd=build_dir, log=log, title="libsodium: build")
        progress.run(["make", "install"], cwd=build_dir, log=log, title="libsodium: install")
        (prefix / _SODIUM_MARKER).write_text(libsodium_key(pin) + "\n")

    root = DEPS_DIR / "libsodium"
    work = buildcache.cached(root, libsodium_key(pin), f"prefix/{_SODIUM_MARKER}", build)
    return work / "prefix"


def build_libzmq(src: Path, work: Path, flags: list[str], *, name: str, curve: bool,
                 sodium_prefix: Path | None, progress: Progress) -> Path:
    """Configure+build+install one flavour into work/prefix and check it came out as
    asked. Separate from the cache so a test can build into a temporary folder."""
    build_dir, prefix, log = work / "build", work / "prefix", work / "build.log"
    env = None
    extra = [f"-DCMAKE_INSTALL_PREFIX={prefix}"]
    if sodium_prefix is not None:
        # Only our libsodium may be found: its pkg-config folder replaces the host's.
        env = {"PKG_CONFIG_LIBDIR": str(sodium_prefix / "lib" / "pkgconfig")}
        extra.append(f"-DCMAKE_PREFIX_PATH={sodium_prefix}")
    cmake.configure(src, build_dir, [*flags, *extra], progress, title=name, env=env, log=log)
    _check_configured(build_dir, name, curve, sodium_prefix, log)
    cmake.build(build_dir, progress, title=name, install=True, log=log)
    library = prefix / "lib" / "libzmq.so"
    if not library.exists() or not (prefix / "include" / "zmq.h").exists():
        raise CapabilityError(
            f"{name}: install into {prefix} did not produce lib/libzmq.so and include/zmq.h"
        )
    check_curve(library, curve, name)  # what was built, whatever configure said
    return prefix


def _check_configured(build_dir: Path, name: str, curve: bool, sodium_prefix: Path | None, log: Path) -> None:
    """The CURVE pitfall caught at configure time, before half a minute of compiling:
    libzmq's CMake without libsodium configures a build without CURVE (platform.hpp
    leaves ZMQ_HAVE_CURVE undefined) and says so only in its output; and a CURVE build
    must use the pinned libsodium, not one the host happens to have."""
    platform = build_dir / "platform.hpp"
    text = platform.read_text() if platform.is_file() else ""
    configured = "#define ZMQ_HAVE_CURVE" in text
    if configured != curve:
        want, got = ("with", "without") if curve else ("without", "with")
        hint = f" (libzmq's CMake did not find libsodium under {sodium_prefix})" if curve else ""
        raise CapabilityError(f"{name}: configured {got} CURVE ({platform} "
                              f"{'lacks' if curve else 'has'} ZMQ_HAVE_CURVE) but the flavour asks for a "
                              f"build {want} CURVE{hint}; configure output: {log}")
    if curve and sodium_prefix is not None:
        used = cmake.cache_value(build_dir, "SODIUM_LIBRARIES") or ""
        if not used.startswith(str(sodium_prefix)):
            raise CapabilityError(
                f"{name}: libzmq linked libsodium {used!r}, not the pinned one in {sodium_prefix}"
            )


class LibzmqFlavour:
    """One [flavours."<name>"] entry of pins.toml as a buildable library."""

    link_name = "zmq"

    def __init__(self, name: str):
        self.name = name

    def _flavour(self) -> dict:
        flavours = pinned()["flavours"]
        if self.name not in flavours:
            raise pins.PinsError(f"baselines/pins.toml has no [flavours.\"{self.name}\"]")
        return flavours[self.name]

    def unavailable(self) -> str | None:
        try:
            self._flavour()
        except pins.PinsError as exc:
            return str(exc)
        return None

    def key(self) -> str:
        pin, flavour = pinned(), self._flavour()
        return keys.build_key(kind="libzmq", name=self.name, source=pin["libzmq"]["nar_hash"],
                              flags=flavour["cmake_flags"], tools=keys.toolchain_id(),
                              sodium=libsodium_key(pin) if flavour["curve"] else None)

    def describe(self) -> dict:
        """What testbed-lib.json will say, minus build_id (known before building)."""
        pin, flavour = pinned(), self._flavour()
        info = {"name": self.name, "version": pin["libzmq"]["version"],
                "source_hash": pin["libzmq"]["nar_hash"], "flags": list(flavour["cmake_flags"]),
                "compiler": keys.compiler_id(), "curve": flavour["curve"], "link_name": self.link_name}
        if flavour["curve"]:
            info["libsodium"] = {"version": pin["libsodium"]["version"], "sha256": pin["libsodium"]["sha256"]}
        return info

    def build(self, work: Path, progress: Progress) -> dict:
        pin, flavour = pinned(), self._flavour()
        sodium = ensure_libsodium(pin, progress) if flavour["curve"] else None
        src = sources.libzmq_source(pin, progress)
        progress.step(f"building {self.name} (about 25 s)")
        build_libzmq(src, work, flavour["cmake_flags"], name=self.name, curve=flavour["curve"],
                     sodium_prefix=sodium, progress=progress)
        return self.describe()
