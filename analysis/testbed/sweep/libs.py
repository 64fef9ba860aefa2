"""The sweep's window onto the library table (testbed.toolchain.libraries).

Resolves each library entry of an experiment to a LibraryBuild, or records why it
is missing. A missing library is never dropped silently: the caller warns, writes it
into the manifest and the summary.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

try:
    from testbed.toolchain.libraries import (LibraryBuild, LibraryUnavailable, ensure_built,
                                             find_built, registered_names)
except ImportError:  # the toolchain module has not landed yet: honour TESTBED_PREBUILT only
    class LibraryUnavailable(Exception):
        pass

    @dataclass(frozen=True)
    class LibraryBuild:  # same shape as the contract in the library-table API
        name: str
        prefix: Path
        bench_dir: Path
        info: dict

        def bench_binary(self, pattern: str) -> Path:
            return self.bench_dir / f"bench_{pattern.lower()}"

    def _prebuilt() -> dict:
        spec = os.environ.get("TESTBED_PREBUILT")
        return json.loads(Path(spec).read_text())["libraries"] if spec else {}

    def registered_names() -> list[str]:
        return sorted(set(_prebuilt()) | {"libzmq-4.3.5", "libzmq-4.3.5-nocurve", "zlink"})

    def find_built(name: str) -> LibraryBuild:
        entry = _prebuilt().get(name)
        if entry is None:
            raise LibraryUnavailable(f"{name}: not built (library table module missing, "
                                     "and TESTBED_PREBUILT does not name it)")
        prefix = Path(entry["prefix"])
        info_file = prefix / "testbed-lib.json"
        info = json.loads(info_file.read_text()) if info_file.exists() else {"name": name}
        return LibraryBuild(name, prefix, Path(entry["bench_dir"]), info)

    ensure_built = find_built


def known_names() -> list[str] | None:
    try:
        return list(registered_names())
    except Exception:  # noqa: BLE001 - the table is optional for validation
        return None


def resolve(names: list[str], build: bool) -> tuple[dict[str, LibraryBuild], dict[str, str]]:
    """name -> LibraryBuild for those available; name -> reason for those missing."""
    found, missing = {}, {}
    for name in dict.fromkeys(names):
        try:
            found[name] = ensure_built(name) if build else find_built(name)
        except LibraryUnavailable as exc:
            missing[name] = str(exc)
        except Exception as exc:  # noqa: BLE001 - a failed build makes the library missing, not the sweep
            missing[name] = f"{name}: build failed: {type(exc).__name__}: {exc}"
    return found, missing


def describe(lib: LibraryBuild) -> dict:
    return {"name": lib.name, "prefix": str(lib.prefix), "bench_dir": str(lib.bench_dir), "info": lib.info}
