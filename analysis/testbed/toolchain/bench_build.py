"""The bench harness (bench/) built against one library. Every library gets the
identical harness source and the identical flags below (fairness); only the four
BENCH_LIB_* cache variables differ."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from testbed import paths
from testbed.toolchain import buildcache, cmake, compiler_cache, keys
from testbed.toolchain.progress import Progress

BENCH_FLAGS = ["-DCMAKE_BUILD_TYPE=Release"]
MARKER = ".testbed-bench.json"


def missing_reason() -> str | None:
    if not (paths.BENCH_SRC_DIR / "CMakeLists.txt").is_file():
        return f"{paths.BENCH_SRC_DIR}/CMakeLists.txt does not exist yet, so no bench binaries"
    return None


def bench_key(info: dict) -> str:
    return keys.build_key(kind="bench", source=keys.tree_hash(paths.BENCH_SRC_DIR), library=info["name"],
                          library_build_id=info["build_id"], flags=BENCH_FLAGS, tools=keys.toolchain_id())


def bench_dir(info: dict) -> Path:
    return buildcache.keyed_dir(paths.BENCH_BUILD_DIR / info["name"], bench_key(info))


def is_built(info: dict) -> bool:
    return (bench_dir(info) / MARKER).is_file()


def lib_flags(prefix: Path, info: dict) -> list[str]:
    return [f"-DBENCH_LIB_PREFIX={prefix}", f"-DBENCH_LIB_LINK_NAME={info['link_name']}",
            f"-DBENCH_LIB_NAME={info['name']}", f"-DBENCH_LIB_BUILD_ID={info['build_id']}"]


def ensure(prefix: Path, info: dict, progress: Progress) -> Path:
    key = bench_key(info)

    def build(work: Path) -> None:
        progress.step(f"building bench/ against {info['name']} ({info['build_id']})")
        log = work / "testbed-build.log"
        cmake.configure(paths.BENCH_SRC_DIR, work,
                        [*BENCH_FLAGS, *compiler_cache.launcher_flags(), *lib_flags(prefix, info)], progress,
                        title=f"bench[{info['name']}]", log=log)
        cmake.build(work, progress, title=f"bench[{info['name']}]", log=log)
        binaries = sorted(p.name for p in work.glob("bench_*") if p.is_file())
        if not binaries:
            raise RuntimeError(f"bench build against {info['name']} produced no bench_* binaries in {work}")
        (work / MARKER).write_text(json.dumps({"library": info["name"], "library_build_id": info["build_id"],
                                               "bench_key": key, "flags": BENCH_FLAGS,
                                               "binaries": binaries}, indent=1) + "\n")

    return buildcache.cached(paths.BENCH_BUILD_DIR / info["name"], key, MARKER, build)


# The arms bench (bench/arms/): bench_arms_<pattern>, built once, not per library,
# from the same sources with the same flags. It links no library; it compiles against
# the reference library's zmq.h (the API every registered library offers) and loads
# the libraries it is given at run time.
ARMS_REFERENCE = "libzmq-4.3.5"
ARMS_MARKER = ".testbed-bench-arms.json"
ARMS_DIR_NAME = "_arms"  # beside the per-library bench dirs (no library is named so)
CALLGRIND_HEADER = Path("/usr/include/valgrind/callgrind.h")


# What the arms build reads from bench/ (the files bench/package.nix takes too): a
# README or a measurement added under bench/ does not rebuild it.
ARMS_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".cmake", ".in")


def arms_source_hash() -> str:
    digest = hashlib.sha256()
    root = paths.BENCH_SRC_DIR
    skip = keys.tree_filter(root)
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        chain = [root.joinpath(*rel.parts[:i + 1]) for i in range(len(rel.parts))]
        if not path.is_file() or any(skip(p) for p in chain):
            continue
        if path.name == "CMakeLists.txt" or path.suffix in ARMS_SOURCE_SUFFIXES:
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def arms_key(ref_info: dict) -> str:
    # The client requests are compiled in only where valgrind's header exists.
    return keys.build_key(kind="bench-arms", source=arms_source_hash(),
                          reference=ref_info["name"], reference_build_id=ref_info["build_id"],
                          flags=BENCH_FLAGS, tools=keys.toolchain_id(),
                          callgrind_header=CALLGRIND_HEADER.is_file())


def arms_dir(ref_info: dict) -> Path:
    return buildcache.keyed_dir(paths.BENCH_BUILD_DIR / ARMS_DIR_NAME, arms_key(ref_info))


def arms_is_built(ref_info: dict) -> bool:
    return (arms_dir(ref_info) / ARMS_MARKER).is_file()


def ensure_arms(ref_prefix: Path, ref_info: dict, progress: Progress) -> Path:
    """Builds bench_arms_<pattern> (once per bench source and reference zmq.h)."""
    key = arms_key(ref_info)

    def build(work: Path) -> None:
        progress.step(f"building the arms bench (bench/arms/) against {ref_info['name']}'s zmq.h")
        log = work / "testbed-build.log"
        cmake.configure(paths.BENCH_SRC_DIR, work,
                        [*BENCH_FLAGS, *compiler_cache.launcher_flags(), "-DBENCH_BUILD=arms",
                         f"-DBENCH_LIB_PREFIX={ref_prefix}"], progress, title="bench[arms]", log=log)
        cmake.build(work, progress, title="bench[arms]", log=log)
        binaries = sorted(p.name for p in work.glob("bench_arms_*") if p.is_file())
        if not binaries:
            raise RuntimeError(f"the arms bench build produced no bench_arms_* binaries in {work}")
        (work / ARMS_MARKER).write_text(json.dumps({"reference": ref_info["name"],
                                                    "reference_build_id": ref_info["build_id"],
                                                    "bench_key": key, "flags": BENCH_FLAGS,
                                                    "callgrind": CALLGRIND_HEADER.is_file(),
                                                    "binaries": binaries}, indent=1) + "\n")

    return buildcache.cached(paths.BENCH_BUILD_DIR / ARMS_DIR_NAME, key, ARMS_MARKER, build)
