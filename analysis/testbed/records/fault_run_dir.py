"""A fault runner's run directory (experiments of kind "faults" and "faults-soak",
testbed/faults/): a directory of its own kind, not the sweep's (run_dir.py), but
opened the same way: only through records/ (tests/test_run_dir_owner.py).

Inside results/<experiment>/<run-id>/:
  experiment.toml   the copy of the experiment the run used (a resume reads it)
  faults-run.json   the run's manifest: libraries, proxy, host, status
  cells.jsonl       one record per cell run (the soak: per library and pair)
  samples.jsonl     the soak's RSS and descriptor samples
  cells/<tag>/      the raw logs of a cell run that found anything wrong
  pairs/<name>/     the soak's raw logs, one folder per pair and library
  proxy.log, proxy-<slot>.log   the fault proxies' output
  report.md
Published (reports/<experiment>/<run-id>/): the report, the manifest and the toml as
they are, the JSONL files gzipped (cells.jsonl.gz), never the raw logs.

The JSONL files follow store.parse_lines' one rule for a torn line: lines are
appended fsynced (store.append_line, which closes a torn line off first) and read
back without the torn last line; a broken line left mid-file by an interrupted run
is skipped (its cell run was done again on resume).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from testbed.records import store

MANIFEST_NAME = "faults-run.json"
TOML_COPY_NAME = store.TOML_COPY_NAME
REPORT_NAME = "report.md"
# kind -> file: the run's JSON-lines files.
JOURNALS = {"cells": "cells.jsonl", "samples": "samples.jsonl"}
PUBLISHED_AS_IS = (REPORT_NAME, MANIFEST_NAME, TOML_COPY_NAME)


class FaultRunError(ValueError):
    """Not a fault run directory, or a file of one that cannot be read: names the file."""


@dataclass(frozen=True)
class FaultRunDir:
    path: Path

    @classmethod
    def at(cls, path: Path | str | FaultRunDir) -> FaultRunDir:
        """A directory as a fault run's, whether it holds anything yet or not."""
        return path if isinstance(path, FaultRunDir) else cls(Path(path))

    @classmethod
    def open(cls, path: Path | str | FaultRunDir) -> FaultRunDir:
        """An existing fault run (it has its manifest)."""
        run = cls.at(path)
        if not run.has_manifest():
            raise FaultRunError(f"{run.path}: not a fault run directory: no {MANIFEST_NAME}")
        return run

    @property
    def name(self) -> str:
        return self.path.name

    # --- the manifest -----------------------------------------------------------------

    def has_manifest(self) -> bool:
        return (self.path / MANIFEST_NAME).is_file()

    def manifest(self) -> dict:
        path = self.path / MANIFEST_NAME
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            raise FaultRunError(f"{self.path}: not a fault run directory: no {MANIFEST_NAME}") from None
        except json.JSONDecodeError as exc:
            raise FaultRunError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None

    def write_manifest(self, manifest: dict) -> None:
        """Replaced whole (written aside, then renamed): a kill leaves the old one."""
        tmp = self.path / (MANIFEST_NAME + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=1) + "\n")
        tmp.replace(self.path / MANIFEST_NAME)

    # --- the experiment it ran --------------------------------------------------------

    def keep_toml(self, source: Path) -> None:
        shutil.copyfile(source, self.toml_copy())

    def toml_copy(self) -> Path:
        return self.path / TOML_COPY_NAME

    # --- the JSON-lines files ---------------------------------------------------------

    def records(self, kind: str = "cells") -> list[dict]:
        """Every complete line of a journal, in the order written ([] when there is
        none yet). A published run has the gzipped copy instead (store.read_lines)."""
        return store.read_lines(self.path / JOURNALS[kind])

    def append(self, rec: dict, kind: str = "cells") -> None:
        """One record onto a journal, fsynced (store.append_line)."""
        store.append_line(self.path / JOURNALS[kind], rec)

    @contextmanager
    def rewrite(self, kind: str) -> Iterator[Writer]:
        """A journal written anew (the soak writes its records once, at the end)."""
        with open(self.path / JOURNALS[kind], "w") as out:
            yield Writer(out)

    # --- raw logs and the report ------------------------------------------------------

    def cell_logs(self, tag: str) -> Path:
        return self.path / "cells" / tag

    def pair_logs(self, name: str) -> Path:
        return self.path / "pairs" / name

    def proxy_log(self, slot: int = 0) -> Path:
        return self.path / ("proxy.log" if slot == 0 else f"proxy-{slot}.log")

    def report_path(self, out_dir: Path | None = None) -> Path:
        return Path(out_dir or self.path) / REPORT_NAME

    # --- publishing -------------------------------------------------------------------

    def publish(self, dest: Path) -> FaultRunDir:
        """The report, the manifest and the toml copied to `dest`, the journals gzipped
        (no date inside: the same records give the same bytes); never the raw logs."""
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        for name in PUBLISHED_AS_IS:
            if (self.path / name).is_file():
                shutil.copy2(self.path / name, dest / name)
        for name in JOURNALS.values():
            if (self.path / name).is_file():
                store.write_packed(store.packed_path(dest / name), (self.path / name).read_bytes())
        return FaultRunDir(dest)


class Writer:
    """One JSON object per line onto an open journal."""

    def __init__(self, out):
        self._out = out

    def add(self, rec: dict) -> None:
        self._out.write(json.dumps(rec) + "\n")


def runs_under(root: Path) -> list[FaultRunDir]:
    """The fault runs (a manifest each) directly under root, in name order (run ids
    sort by time)."""
    return [FaultRunDir(p.parent) for p in sorted(Path(root).glob(f"*/{MANIFEST_NAME}"))]


def published_under(reports_dir: Path, experiment: str) -> list[FaultRunDir]:
    """The published runs of `experiment` (a manifest and a report each), oldest first."""
    return [run for run in runs_under(Path(reports_dir) / experiment) if run.report_path().is_file()]
