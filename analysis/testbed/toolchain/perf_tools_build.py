"""libzmq 4.3.5's six perf programs (perf/local_thr, remote_thr, local_lat,
remote_lat, inproc_thr, inproc_lat of the pinned tree), compiled once, unmodified,
against the libzmq-4.3.5 baseline's zmq.h and linked against its libzmq.so.5, for the
`perf-tools` experiment kind (testbed.sweep.perf_tools).

One binary serves every library: the runner swaps the library per run through
LD_LIBRARY_PATH. Unlike the drop-in check's build (libzmq_suite_dropin), these carry
no rpath at all, so a run whose LD_LIBRARY_PATH is missing fails to start instead of
silently measuring the baseline. The inproc programs include libzmq's generated
platform.hpp (they only test ZMQ_HAVE_WINDOWS in it): it comes from the same
configure-only run the libzmq suite uses.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from testbed.toolchain import baselines, buildcache, keys, sources
from testbed.toolchain.libzmq_platform import SUITE_BUILD_DIR, platform_dir
from testbed.toolchain.progress import Progress

TOOLS = ("local_thr", "remote_thr", "local_lat", "remote_lat", "inproc_thr", "inproc_lat")
# As libzmq's own CMake builds perf/ in a Release build.
CXXFLAGS = ["-O3", "-DNDEBUG", "-D_REENTRANT", "-D_THREAD_SAFE"]
MARKER = "done"


def tools_key(baseline) -> str:
    pin = baselines.pinned()
    return keys.build_key(kind="libzmq-perf-tools-runner", source=pin["libzmq"]["nar_hash"],
                          tools=keys.toolchain_id(), programs=list(TOOLS), flags=CXXFLAGS, rpath=False,
                          baseline=baseline.info.get("build_id") or str(baseline.prefix))


def build_tools(baseline, progress: Progress) -> Path:
    """The six programs linked against `baseline` (a LibraryBuild of libzmq-4.3.5),
    cached by the pinned source, compiler, baseline build and flags; -> their bin dir."""
    def build(work: Path) -> None:
        src = sources.libzmq_source(baselines.pinned(), progress)
        platform = platform_dir(bool(baseline.info.get("curve", True)), progress)
        stage = work / "stage"
        (stage / "perf").mkdir(parents=True)
        (stage / "include").mkdir()
        # The programs include "../include/zmq.h": the baseline's installed header.
        shutil.copy2(baseline.prefix / "include" / "zmq.h", stage / "include" / "zmq.h")
        (work / "bin").mkdir()
        for tool in TOOLS:
            source = stage / "perf" / f"{tool}.cpp"
            shutil.copy2(src / "perf" / f"{tool}.cpp", source)
            cmd = [keys.cxx_compiler(), *CXXFLAGS, f"-I{platform}", str(source),
                   f"-L{baseline.prefix / 'lib'}", "-lzmq", "-pthread", "-o", str(work / "bin" / tool)]
            progress.run(cmd, cwd=work, log=work / "build.log",
                         title=f"libzmq perf/{tool} (against {baseline.name})")
        (work / MARKER).write_text("\n".join(TOOLS) + "\n")

    root = SUITE_BUILD_DIR / "perf-tools-runner"
    return buildcache.cached(root, tools_key(baseline), MARKER, build) / "bin"
