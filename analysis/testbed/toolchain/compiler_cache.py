"""ccache for builds of zlink at many revisions (`./testbed bisect`), when it is installed.

CMake (>= 3.17) takes CMAKE_<LANG>_COMPILER_LAUNCHER from the environment, so setting
it here changes no build flag, no build key and no output: ccache returns the object
the compiler would produce. Why the options:
- Each revision is exported into its own directory and built in its own keyed
  directory, so absolute paths differ between revisions. base_dir = the build root
  makes ccache hash paths under it relative to the compile's working directory, and
  zlink_build copies a revision's source into its build directory (../zlink/src/...),
  so an unchanged file has the same relative path, hence the same hash, at every
  revision.
- hash_dir off: the compile directory differs per revision too; it only matters for
  debug info, which Release builds do not carry.
"""
from __future__ import annotations

import os
import shutil

from testbed import paths


def enable(env: dict | None = None) -> str | None:
    """Route C/C++ compiles through ccache (in `env`, default this process's
    environment, which builds inherit); the ccache path, or None if it is absent.
    A launcher the caller already set is kept."""
    env = os.environ if env is None else env
    ccache = shutil.which("ccache")
    if ccache is None:
        return None
    for lang in ("C", "CXX"):
        env.setdefault(f"CMAKE_{lang}_COMPILER_LAUNCHER", ccache)
    env.setdefault("CCACHE_DIR", str(paths.BUILD_DIR / "ccache"))
    env.setdefault("CCACHE_BASEDIR", str(paths.BUILD_DIR))
    env.setdefault("CCACHE_NOHASHDIR", "1")
    return ccache
