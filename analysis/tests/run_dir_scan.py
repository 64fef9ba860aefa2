"""Which modules reach inside a run directory on their own (issue 43, item 4)?

A run directory (docs/data-formats.md §4) is opened only through records/: reading
through testbed.records.run_dir (RunDir), writing through testbed.records.run_writer.
A module elsewhere is flagged when it
- names one of a run directory's files as a string literal ("results.jsonl",
  "manifest.json", ...), or
- uses testbed.records.store, the layer that knows those files (importing it, or a
  name from it), or
- reads a constant of another testbed module whose value is one of those file names
  (`manifest.FILE_NAME`, `speedref.FILE_NAME`, `runner.TOML_COPY`...) or imports one
  by name (`from .runner import CELLS`): the attribute is resolved by importing the
  module it names, so an alias cannot hide it.

Used by tests/test_run_dir_owner.py (the rule) and tools/run_dir_count.py (the count).
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

# The files and folders of a run directory (data-formats §4, §4a; the Slurm directory's
# record; the fault runner's manifest and journals, records/fault_run_dir.py).
# "experiment.toml" is left out of the literals: experiments/<name>/experiment.toml is
# the experiment itself; the run's copy is caught when it is reached through a
# constant (TOML_COPY_ATTRS).
RUN_DIR_FILES = frozenset({
    "results.jsonl", "results.parquet", "torn-lines.txt", "manifest.json", "speed.jsonl",
    "calibration.jsonl", "work.jsonl", "ceiling.jsonl", "ceiling.json", "slices.jsonl",
    "flamegraphs", "slurm.json", "faults-run.json", "cells.jsonl", "samples.jsonl",
})
TOML_COPY_ATTRS = ("TOML_COPY", "TOML_COPY_NAME")
STORE_MODULE = "testbed.records.store"
OWNER = "records"   # the package allowed to do all of it


def _aliases(tree: ast.Module, package: str) -> dict[str, str]:
    """Local name -> the testbed module it is bound to (`from testbed.sweep import
    ceiling`, `import testbed.records.manifest as m`, `from . import load`)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("testbed."):
                    out[a.asname or a.name.split(".")[0]] = a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if base.startswith("testbed"):
                for a in node.names:
                    out[a.asname or a.name] = f"{base}.{a.name}"
    return out


def _resolved(module: str, attr: str):
    """The value of module.attr, or None when it cannot be imported or has none."""
    try:
        return getattr(importlib.import_module(module), attr, None)
    except Exception:  # noqa: BLE001 (a module that will not import names nothing here)
        return None


def module_hits(source: str, package: str = "testbed") -> list[str]:
    """What in this module's source reaches into a run directory (empty: nothing).
    `package`: the dotted package the module sits in (for relative imports)."""
    tree = ast.parse(source)
    aliases = _aliases(tree, package)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value in RUN_DIR_FILES or node.value.rsplit("/", 1)[-1] in RUN_DIR_FILES):
            hits.append(f"literal {node.value!r}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                bound = aliases.get(a.asname or a.name.split(".")[0], "")
                if bound == STORE_MODULE or bound.startswith(STORE_MODULE + "."):
                    hits.append(f"imports {bound}")
                elif isinstance(node, ast.ImportFrom) and "." in bound:
                    value = _resolved(*bound.rsplit(".", 1))
                    if (isinstance(value, str) and value in RUN_DIR_FILES) or a.name in TOML_COPY_ATTRS:
                        hits.append(f"imports {bound}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id)
            if module is None:
                continue
            value = _resolved(module, node.attr)
            if (isinstance(value, str) and value in RUN_DIR_FILES) or node.attr in TOML_COPY_ATTRS:
                hits.append(f"{node.value.id}.{node.attr}")
    return hits


def unexpected(found: dict[str, list[str]], allowed) -> tuple[dict[str, list[str]], list[str]]:
    """(the modules found that are not allowed, with their hits; the allowed modules no
    longer found: an allow-list entry outliving its reason is an error too)."""
    offending = {rel: sorted(set(hits)) for rel, hits in found.items() if rel not in allowed}
    return offending, sorted(set(allowed) - set(found))


def scan(package_dir: Path, skip_owner: bool = False) -> dict[str, list[str]]:
    """Path relative to `package_dir` (analysis/testbed) -> its hits, for every module
    under it that has any (skip_owner: leave out records/, which owns run directories)."""
    package_dir = Path(package_dir)
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir)
        if skip_owner and rel.parts[0] == OWNER:
            continue
        package = ".".join(("testbed", *rel.parts[:-1]))
        hits = module_hits(path.read_text(), package)
        if hits:
            out[rel.as_posix()] = hits
    return out
