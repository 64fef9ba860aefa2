"""Build keys: a build is reused only if everything that shapes its output is the
same: source hash, flags, compiler (and the recipe version, bumped when a recipe
changes in a way the other inputs do not show)."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from testbed.toolchain.nar import nar_hash

RECIPE_VERSION = 1
JOBS = os.environ.get("TESTBED_JOBS", "2")  # the machine is 2 cores, shared


def build_key(**parts) -> str:
    """sha256 hex over a canonical JSON of the parts; its first 16 hex are the build id."""
    parts = {"recipe": RECIPE_VERSION, **parts}
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _first_line(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        return f"unavailable ({cmd[0]}: {exc})"
    return out.splitlines()[0].strip() if out else "unknown"


@functools.cache
def cxx_compiler() -> str:
    return os.environ.get("CXX") or "c++"


@functools.cache
def c_compiler() -> str:
    return os.environ.get("CC") or "cc"


@functools.cache
def compiler_id() -> str:
    """`c++ --version` first line: the `compiler` field of testbed-lib.json."""
    return _first_line([cxx_compiler(), "--version"])


@functools.cache
def toolchain_id() -> dict:
    """Everything about the tools that goes into a key (C and C++ compiler, CMake)."""
    return {"cxx": compiler_id(), "cc": _first_line([c_compiler(), "--version"]),
            "cmake": _first_line(["cmake", "--version"])}


# Working-tree entries that are outputs or editor state, not sources.
_SKIP_NAMES = {".git", "__pycache__", ".cache", ".vscode", ".idea"}


def tree_filter(path: Path) -> Callable[[Path], bool]:
    """What a source tree's hash leaves out: its top-level build* folders (gitignored
    outputs) and editor junk anywhere. A build that copies the tree leaves out the same."""
    root = Path(path)

    def skip(entry: Path) -> bool:
        name = entry.name
        if entry.parent == root and name.startswith("build"):
            return True
        return name in _SKIP_NAMES or name.endswith((".pyc", ".swp", "~"))

    return skip


def tree_hash(path: Path) -> str:
    """NAR hash of a working tree (zlink/, bench/), without what tree_filter leaves out."""
    return nar_hash(Path(path), tree_filter(path))


def have(tool: str) -> bool:
    return shutil.which(tool) is not None
