"""The sweep's window onto the library table (testbed.toolchain.libraries).

Resolves each library entry of an experiment to a LibraryBuild, or records why it
is missing. A missing library is never dropped silently: the caller warns, writes it
into the manifest and the summary.
"""
from __future__ import annotations

from testbed.toolchain.libraries import (
    LibraryBuild,
    LibraryUnavailable,
    check_name,
    ensure_built,
    find_built,
    registered_names,
)
from testbed.toolchain.zlink_revision import SEPARATOR


def known_names() -> list[str] | None:
    try:
        return list(registered_names())
    except Exception:  # noqa: BLE001 - the table is optional for validation
        return None


def check(names: list[str]) -> None:
    """Raise ValueError naming the input for a zlink@REV whose revision does not resolve
    or has no zlink/: bad input stops a run before it starts, unlike a library that is
    merely not built (missing, warned about, the rest runs)."""
    for name in names:
        if SEPARATOR in name:
            try:
                check_name(name)
            except LibraryUnavailable as exc:
                raise ValueError(f"library {exc}") from None


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
