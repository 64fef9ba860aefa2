"""Configure, build and install a CMake project the same way for every library."""
from __future__ import annotations

import subprocess
from pathlib import Path

from testbed.toolchain import keys
from testbed.toolchain.progress import Progress


def generator() -> list[str]:
    return ["-G", "Ninja"] if keys.have("ninja") else ["-G", "Unix Makefiles"]


def configure(src: Path, build: Path, flags: list[str], progress: Progress, *, title: str,
              env: dict | None = None, log: Path | None = None,
              compilers: tuple[str, str] | None = None) -> None:
    cc, cxx = compilers or (keys.c_compiler(), keys.cxx_compiler())
    cmd = ["cmake", "-S", str(src), "-B", str(build), *generator(),
           f"-DCMAKE_C_COMPILER={cc}", f"-DCMAKE_CXX_COMPILER={cxx}", *flags]
    progress.run(cmd, cwd=build.parent, env=env, log=log or build.parent / "build.log",
                 title=f"{title}: configure")


def build(build_dir: Path, progress: Progress, *, title: str, install: bool = False,
          log: Path | None = None, targets: list[str] | None = None) -> None:
    log = log or build_dir.parent / "build.log"
    pick = ["--target", *targets] if targets else []
    progress.run(["cmake", "--build", str(build_dir), "-j", keys.JOBS, *pick], cwd=build_dir, log=log,
                 title=f"{title}: build")
    if install:
        progress.run(["cmake", "--install", str(build_dir)], cwd=build_dir, log=log,
                     title=f"{title}: install")


def cache_value(build_dir: Path, name: str) -> str | None:
    """Read one entry of CMakeCache.txt (NAME:TYPE=value)."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        head, sep, value = line.partition("=")
        if sep and head.split(":", 1)[0] == name:
            return value
    return None


def ninja_targets(build_dir: Path) -> list[str]:
    """Every target name of a Ninja build tree (empty for other generators)."""
    if not (build_dir / "build.ninja").is_file():
        return []
    out = subprocess.run(
        ["ninja", "-C", str(build_dir), "-t", "targets", "all"], capture_output=True, text=True
    )
    return [line.split(":", 1)[0] for line in out.stdout.splitlines() if ":" in line]
