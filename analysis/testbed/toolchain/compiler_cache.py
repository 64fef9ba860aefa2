"""ccache for the keyed builds that repeat with small changes: zlink (the working tree's
and every `zlink@REV`, which `./testbed bisect` builds by the handful) and the bench
built against each of them. Used when ccache is installed (setup installs it).

The launcher is a CMake cache variable given at configure time, so it changes no build
flag, no build key and no output: ccache returns the object the compiler would produce.
It runs ccache through `env` with its options, so they hold for every compile of that
build whatever the caller's environment. Why the options:
- Each zlink tree and each build sits in its own directory, so absolute paths differ
  between revisions. base_dir = the build root makes ccache hash the paths under it
  relative to the compile's directory, and zlink_build compiles a copy of the source
  inside the build directory (../zlink/src/...), so an unchanged file has the same
  relative path, hence the same hash, in every zlink build.
- hash_dir off: the compile directory differs per build too; it only matters for
  debug info, which these Release builds do not carry.
The bench's zmq-facing half does not hit across libraries (its include path names the
library's prefix and it compiles the build id in); its library-independent half does.
"""
from __future__ import annotations

import shutil

from testbed import paths


def launcher_flags() -> list[str]:
    """-DCMAKE_{C,CXX}_COMPILER_LAUNCHER=... for a configure, or [] without ccache."""
    ccache = shutil.which("ccache")
    if ccache is None:
        return []
    options = [f"CCACHE_DIR={paths.BUILD_DIR / 'ccache'}", f"CCACHE_BASEDIR={paths.BUILD_DIR}",
               "CCACHE_NOHASHDIR=1"]
    launcher = ";".join(["env", *options, ccache])
    return [f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}", f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}"]
