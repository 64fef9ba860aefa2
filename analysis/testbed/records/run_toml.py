"""The copy of its experiment toml a run keeps (store.TOML_COPY_NAME: the runner writes
it, publishing keeps it): what the run was asked to do, to be set against what the
experiment asks today (records/freshness.py)."""
from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

from testbed.records import store


def read(run_dir: Path) -> dict | None:
    """The parsed copy, or None where the run has none (runs published before
    2026-12-02 got theirs from git history by the sha256 in their manifest; two could
    not be found)."""
    path = Path(run_dir) / store.TOML_COPY_NAME
    return tomllib.loads(path.read_text()) if path.is_file() else None


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
