"""Keyed build directories: <root>/<build id>/ is reused when its completion marker
exists, otherwise wiped and built again. The marker is written last, so a build that
failed or was interrupted never counts as built. A lock file serialises concurrent
callers (several commands or tests may ask for the same library at once)."""
from __future__ import annotations

import fcntl
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def keyed_dir(root: Path, key: str) -> Path:
    return root / key[:16]


def cached(root: Path, key: str, marker: str, build: Callable[[Path], None]) -> Path:
    """Return <root>/<key[:16]>, calling build(dir) first unless dir/marker exists."""
    target = keyed_dir(root, key)
    if (target / marker).exists():
        return target
    with _locked(root / f"{key[:16]}.lock"):
        if (target / marker).exists():  # someone else built it while we waited
            return target
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        build(target)
        if not (target / marker).exists():
            raise RuntimeError(f"build in {target} finished without writing {marker}")
    return target
