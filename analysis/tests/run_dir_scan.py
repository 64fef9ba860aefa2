"""Which modules reach inside a run directory on their own (issue 43, item 4)?

A run directory (docs/data-formats.md §4) is opened only through
testbed.records.run_dir (reading: RunDir; writing: RunDirWriter) and the records/
modules it is built from. A module elsewhere is flagged when it
- names one of a run directory's files as a string literal ("results.jsonl",
  "manifest.json", ...), or
- uses testbed.records.store, the layer that knows those files (importing it, or
  one of its names), or
- reads a file-name constant of a records module (`manifest.FILE_NAME`,
  `speed_reference.FILE_NAME`, `slices.FILE_NAME`, `*_NAME` of store).

Used by tests/test_run_dir_owner.py (the rule) and tools/run_dir_count.py (the count).
"""
from __future__ import annotations

import ast
from pathlib import Path

# The files and folders of a run directory (data-formats §4, §4a; the Slurm directory's
# record). experiment.toml is left out: experiments/<name>/experiment.toml is the
# experiment itself, not a run's copy (its copy is store.TOML_COPY_NAME, caught below).
RUN_DIR_FILES = frozenset({
    "results.jsonl", "results.parquet", "torn-lines.txt", "manifest.json", "speed.jsonl",
    "calibration.jsonl", "work.jsonl", "ceiling.jsonl", "ceiling.json", "slices.jsonl",
    "flamegraphs", "slurm.json", "faults-run.json",
})
STORE_MODULE = "testbed.records.store"
RECORDS_FILE_CONSTANTS = frozenset({"FILE_NAME", "RUN_FILE", "WORK_FILE"})
OWNER = "records"   # the package allowed to do all of it


def module_hits(source: str) -> list[str]:
    """What in this module's source reaches into a run directory (empty: nothing)."""
    tree = ast.parse(source)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in RUN_DIR_FILES:
            hits.append(f"literal {node.value!r}")
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            names = {a.name for a in node.names}
            if mod == STORE_MODULE or (mod.endswith("records") and "store" in names):
                hits.append("imports records.store")
            elif node.level and mod in ("store", "") and "store" in names:
                hits.append("imports records.store")
        elif isinstance(node, ast.Import) and any(a.name == STORE_MODULE for a in node.names):
            hits.append("imports records.store")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "store":
                hits.append(f"store.{node.attr}")
            elif node.attr in RECORDS_FILE_CONSTANTS and node.value.id in (
                    "manifest", "speed_reference", "slices", "store", "run_dir"):
                hits.append(f"{node.value.id}.{node.attr}")
    return hits


def scan(package: Path, skip_owner: bool = False) -> dict[str, list[str]]:
    """Path relative to `package` -> its hits, for every module under it that has any
    (skip_owner: leave out records/, which owns run directories)."""
    package = Path(package)
    out = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if skip_owner and rel.startswith(OWNER + "/"):
            continue
        hits = module_hits(path.read_text())
        if hits:
            out[rel] = hits
    return out
