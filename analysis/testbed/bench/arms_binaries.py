"""Where the arms bench's pieces are: its binaries (built once, against the reference
library's zmq.h: testbed.toolchain.bench_build.ensure_arms) and the shared object of
each registered library it loads.

With TESTBED_PREBUILT=<libs.json> (the Nix path) the listing's "arms_dir" names the
binaries' directory and nothing is built."""
from __future__ import annotations

import json
import os
from pathlib import Path

from testbed.bench.patterns import normalise_pattern
from testbed.toolchain import bench_build, libraries
from testbed.toolchain.progress import Progress


class ArmsUnavailable(Exception):
    """The message says what is missing and how to get it."""


def _prebuilt_arms_dir() -> Path | None:
    listing = os.environ.get("TESTBED_PREBUILT")
    if not listing:
        return None
    try:
        entry = json.loads(Path(listing).read_text()).get("arms_dir")
    except (OSError, json.JSONDecodeError, AttributeError) as exc:
        raise ArmsUnavailable(f"TESTBED_PREBUILT={listing}: unreadable ({exc})") from None
    if not entry:
        raise ArmsUnavailable(f"TESTBED_PREBUILT={listing} names no arms_dir (the arms bench binaries)")
    return Path(entry)


def prebuilt() -> bool:
    """TESTBED_PREBUILT names the binaries (the Nix path): nothing is built here."""
    return bool(os.environ.get("TESTBED_PREBUILT"))


def arms_dir(progress: Progress | None = None) -> Path:
    """The directory of bench_arms_<pattern>; built first when `progress` is given,
    else it must exist (ArmsUnavailable says to run ./testbed setup)."""
    prebuilt = _prebuilt_arms_dir()
    if prebuilt is not None:
        return prebuilt
    reference = bench_build.ARMS_REFERENCE
    try:
        ref = (libraries.ensure_built(reference, bench=False, progress=progress) if progress
               else libraries.find_built(reference, bench=False))
    except libraries.LibraryUnavailable as exc:
        raise ArmsUnavailable(f"the arms bench compiles against {reference}'s zmq.h: {exc}") from None
    if progress is not None:
        return bench_build.ensure_arms(ref.prefix, ref.info, progress)
    if not bench_build.arms_is_built(ref.info):
        raise ArmsUnavailable("the arms bench is not built for the current sources "
                              f"({bench_build.arms_dir(ref.info)}; run ./testbed setup)")
    return bench_build.arms_dir(ref.info)


def arms_binary(pattern: str, progress: Progress | None = None) -> Path:
    return arms_dir(progress) / f"bench_arms_{normalise_pattern(pattern).lower()}"


def shared_object(lib: libraries.LibraryBuild) -> Path:
    """The library file an arm loads: <prefix>/lib/lib<link name>.so."""
    link_name = lib.info.get("link_name")
    if not link_name:
        raise ArmsUnavailable(f"{lib.name}: {lib.prefix}/testbed-lib.json has no link_name")
    for sub in ("lib", "lib64"):
        path = lib.prefix / sub / f"lib{link_name}.so"
        if path.exists():
            return path
    raise ArmsUnavailable(f"{lib.name}: no lib{link_name}.so under {lib.prefix}/lib")
