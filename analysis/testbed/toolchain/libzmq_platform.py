"""platform.hpp of the pinned libzmq 4.3.5 tree, from a configure-only run of its
CMake with the flags of the baseline flavour whose CURVE setting is asked for: the
libzmq suite's test programs (testbed.suites.libzmq_suite_build) and libzmq's perf
programs (perf_tools_build) compile against it, outside libzmq's CMake."""
from __future__ import annotations

import shutil
from pathlib import Path

from testbed import paths
from testbed.toolchain import baselines, buildcache, cmake, keys, sources
from testbed.toolchain.progress import Progress

# Where the libzmq suite's builds live (kept at this path so existing caches stay valid):
# platform/, perf-tools-runner/ (perf_tools_build), and the suite's own per-library trees.
SUITE_BUILD_DIR = paths.BUILD_DIR / "libzmq-suite"


def _flavour_for(curve: bool) -> dict:
    for flavour in baselines.pinned()["flavours"].values():
        if flavour["curve"] == curve:
            return flavour
    raise RuntimeError(f"baselines/pins.toml has no flavour with curve = {str(curve).lower()}")


def platform_key(curve: bool) -> str:
    pin = baselines.pinned()
    return keys.build_key(kind="libzmq-suite-platform", source=pin["libzmq"]["nar_hash"],
                          flags=_flavour_for(curve)["cmake_flags"], tools=keys.toolchain_id(),
                          sodium=baselines.libsodium_key(pin) if curve else None)


def platform_dir(curve: bool, progress: Progress) -> Path:
    """A folder holding platform.hpp from a configure-only run of libzmq's CMake."""
    pin, flavour = baselines.pinned(), _flavour_for(curve)

    def configure(work: Path) -> None:
        src = sources.libzmq_source(pin, progress)
        flags, env = list(flavour["cmake_flags"]), None
        if curve:
            sodium = baselines.ensure_libsodium(pin, progress)
            env = {"PKG_CONFIG_LIBDIR": str(sodium / "lib" / "pkgconfig")}
            flags.append(f"-DCMAKE_PREFIX_PATH={sodium}")
        progress.step(f"libzmq suite: platform.hpp ({'with' if curve else 'without'} CURVE, configure only)")
        cmake.configure(src, work / "configure", flags, progress, title="libzmq configure (platform.hpp)",
                        env=env, log=work / "configure.log")
        shutil.copy2(work / "configure" / "platform.hpp", work / "platform.hpp.tmp")
        (work / "platform.hpp.tmp").rename(work / "platform.hpp")  # the marker: written last

    return buildcache.cached(SUITE_BUILD_DIR / "platform", platform_key(curve), "platform.hpp", configure)
