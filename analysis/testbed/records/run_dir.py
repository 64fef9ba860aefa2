"""A run directory (docs/data-formats.md §4) as one typed object: the only way the
analysis and the commands open a run. `RunDir.open(path)` checks it is one (a
manifest.json), then hands out what is inside: the manifest (RunManifest), the
records (results.jsonl or results.parquet, read by store.parse_lines' one rule for a
torn last line), the host speed reference, the ceilings, the work per message, the
slices, the kept experiment toml. Nothing outside records/ joins a file name onto a
run directory (tests/test_run_dir_owner.py fails if one does).

Which run of an experiment is current, superseded or stale is records' rule too:
records/run_status.py.
"""
from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from testbed.records import counting_runs, run_toml, slices, store
from testbed.records import speed_reference as speedref
from testbed.records.manifest import RunManifest

CELL_SCHEMA = "testbed.cell/1"   # every record of results.jsonl / results.parquet
CEILING_SCHEMAS = ("testbed.ceiling/1", "testbed.ceiling/2")


class RunDirError(ValueError):
    """Not a run directory, or one whose files cannot be read: names the file."""


def is_run(path: Path) -> bool:
    """A run directory with records: a manifest and results.jsonl or results.parquet."""
    return (Path(path) / store.MANIFEST_NAME).is_file() and store.has_results(Path(path))


def runs_under(root: Path, depth: int = 1) -> list[Path]:
    """The run directories `depth` levels below `root` (1: results/<experiment>/, 2:
    results/ or reports/), in name order (run ids sort by time)."""
    pattern = "/".join(["*"] * depth) + "/" + store.MANIFEST_NAME
    return sorted(p.parent for p in Path(root).glob(pattern) if store.has_results(p.parent))


@dataclass(eq=False)
class RunDir:
    path: Path
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, path: Path | str | RunDir) -> RunDir:
        if isinstance(path, RunDir):
            return path
        path = Path(path)
        if not (path / store.MANIFEST_NAME).is_file():
            raise RunDirError(f"{path}: not a run directory: no manifest.json (a run directory holds "
                              "manifest.json and results.jsonl or results.parquet)")
        return cls(path)

    @classmethod
    def at(cls, path: Path | str | RunDir) -> RunDir:
        """A directory read as a run's without asking for its manifest: its side files
        alone (a ceiling or speed file being checked, a run still being written)."""
        return path if isinstance(path, RunDir) else cls(Path(path))

    @property
    def name(self) -> str:
        return self.path.name

    def relative(self, other: Path | str) -> RunDir:
        """Another run a manifest names (an A/A calibration run): absolute, or relative
        to this run directory."""
        other = Path(other)
        return RunDir.open(other if other.is_absolute() else self.path / other)

    # --- the manifest -----------------------------------------------------------------

    def manifest_json(self) -> dict:
        """manifest.json as stored (a plain dict, keys other writers added included)."""
        if "manifest_json" not in self._cache:
            path = self.path / store.MANIFEST_NAME
            try:
                self._cache["manifest_json"] = json.loads(path.read_text())
            except json.JSONDecodeError as exc:
                raise RunDirError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        return self._cache["manifest_json"]

    @cached_property
    def manifest(self) -> RunManifest:
        return RunManifest.read(self.manifest_json(), self.path)

    # --- the records ------------------------------------------------------------------

    def has_records(self) -> bool:
        return store.has_results(self.path)

    def is_compacted(self) -> bool:
        return self.records_file().name == store.PARQUET_NAME

    def journal_size(self) -> int | None:
        """Bytes of results.jsonl when the run still keeps its records there, else None."""
        path = self.records_file()
        return path.stat().st_size if path.name == store.RESULTS_NAME and path.is_file() else None

    def compact(self) -> tuple[int, int]:
        """results.jsonl -> results.parquet, checked (store.compact)."""
        self._cache.pop("records", None)
        return store.compact(self.path)

    def pack_side_files(self) -> tuple[int, int]:
        """The speed, work and in-run ceiling lines gzipped, checked (store.pack_side_files)."""
        return store.pack_side_files(self.path)

    def records_file(self) -> Path:
        return store.results_file(self.path)

    def raw_records(self) -> tuple[list[dict], str]:
        """Every record in the order written and the journal's torn last line ("" if
        none; a compacted run has none). The same rule whatever the file."""
        if "records" not in self._cache:
            try:
                self._cache["records"] = store.read_run(self.path)
            except store.CorruptLine as exc:
                raise RunDirError(str(exc)) from None
        return self._cache["records"]

    def cells(self, warn: bool = True) -> list[dict]:
        """The cell records (schema testbed.cell/1, checked), one per (cell, repetition):
        a merged or resumed run may repeat an attempt, and the last line wins. A torn
        last line is left out, with a warning on stderr."""
        path = self.records_file()
        if not path.is_file():
            raise RunDirError(f"{self.path}: no {store.RESULTS_NAME} or {store.PARQUET_NAME}")
        records, torn = self.raw_records()
        if torn and warn:
            print(f"warning: {path}: torn last line skipped (interrupted run?)", file=sys.stderr)
        for number, cell in enumerate(records, 1):
            if cell.get("schema") != CELL_SCHEMA:
                raise RunDirError(f"{path}: record {number}: schema {cell.get('schema')!r}, "
                                  f"expected {CELL_SCHEMA!r}")
        return list({(c["cell_id"], c["repetition"]): c for c in records}.values())

    # --- side files -------------------------------------------------------------------

    def work(self) -> dict[str, dict]:
        """cell_id -> work per message as the sweep measured it (work.jsonl; ok lines)."""
        return {rec["cell_id"]: rec for rec in store.read_lines(self.path / store.WORK_NAME)
                if isinstance(rec, dict) and rec.get("status") == "ok" and rec.get("cell_id")}

    def speed_lines(self) -> list[dict]:
        """speed.jsonl as written (records/speed_reference.py reads what it means)."""
        return store.read_lines(self.path / speedref.FILE_NAME)

    def speed_pairs(self) -> list[dict]:
        """The run's host speed pairs (last line of a pair wins), in the order they ran."""
        return speedref.latest_pairs(self.speed_lines())

    def drifted_pairs(self) -> set[tuple[str, int]]:
        """(group, repetition) of the pairs marked host-drift."""
        return speedref.excluded_pairs(self.speed_lines())

    def host_ceiling(self) -> dict | None:
        """ceiling.json (`./testbed ceiling` before the run) when present and of a schema
        read here, else None."""
        path = self.path / store.CEILING_HOST_NAME
        if not path.is_file():
            return None
        data = json.loads(path.read_text())
        return data if data.get("schema") in CEILING_SCHEMAS else None

    def ceiling_probes(self) -> list[dict]:
        """ceiling.jsonl (the probe inside the run), every complete line."""
        return store.read_lines(self.path / store.CEILING_RUN_NAME)

    def slices(self) -> list[dict]:
        return slices.read(self.path)

    def counting_cells(self) -> list[dict]:
        """The counting runs' records (counting.jsonl: cell records of runs that counted
        the syscall tracepoints, so their times are not for any verdict), the last per
        (cell, counting run); [] when the run made none."""
        lines = store.read_lines(self.path / store.COUNTING_NAME)
        cells = [c for c in lines if isinstance(c, dict) and c.get("schema") == CELL_SCHEMA]
        return counting_runs.latest(cells)

    def experiment_toml(self) -> dict | None:
        """The run's own copy of its experiment toml, parsed (None: it kept none)."""
        return run_toml.read(self.path)

    def experiment_toml_path(self) -> Path | None:
        path = self.path / store.TOML_COPY_NAME
        return path if path.is_file() else None

    # --- files as files (publishing, regenerate's inputs) ------------------------------

    # What a published run keeps beside its records and manifest (report_cmd.publish).
    PUBLISHED_SIDE_FILES = (store.SPEED_NAME, store.WORK_NAME, store.CEILING_HOST_NAME,
                            store.CEILING_RUN_NAME, store.TOML_COPY_NAME, store.COUNTING_NAME)
    # What a report is rendered from: a change to any of them makes it out of date.
    REPORT_INPUTS = (store.MANIFEST_NAME, store.PARQUET_NAME, store.RESULTS_NAME, store.CEILING_HOST_NAME,
                     store.CEILING_RUN_NAME, store.TOML_COPY_NAME, store.COUNTING_NAME)

    def publish(self, dest: Path, cells: list[dict], manifest: dict) -> RunDir:
        """Store this run as a published run in `dest` (reports/<experiment>/<run-id>/):
        `cells` (the records as published) compacted into results.parquet, `manifest` as
        manifest.json, and the side files a report reads when they are there (the host
        speed reference, the work per message, the ceilings, the kept experiment toml)."""
        from testbed.records import columnar
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        columnar.write(cells, dest / store.PARQUET_NAME)
        (dest / store.RESULTS_NAME).unlink(missing_ok=True)  # an earlier publication's journal
        (dest / store.MANIFEST_NAME).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        for path in self.side_files():
            shutil.copyfile(path, dest / path.name)
        store.pack_side_files(dest)
        return RunDir(dest)

    def report_inputs(self) -> list[Path]:
        return [self.path / name for name in self.REPORT_INPUTS if (self.path / name).is_file()]

    def side_files(self) -> list[Path]:
        """The published side files this run has, plain or packed (<name>.gz)."""
        names = [n for name in self.PUBLISHED_SIDE_FILES for n in (name + store.PACK_SUFFIX, name)]
        return [self.path / name for name in names if (self.path / name).is_file()]
