"""[libraries] of an experiment.toml, and the `--libs` option of `./testbed run` that
replaces it. A library is a registered name (`./testbed libs`), an alias of one from
[libraries.aliases], or a registered name at a git revision, `zlink@REV`
(toolchain/zlink_revision.py): here only its form is checked; whether REV exists is
the library table's business (sweep/libs.py checks it before a run starts)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from testbed.sweep.toml_reader import ExperimentError, Section

REVISION_SEPARATOR = "@"  # toolchain/zlink_revision.py SEPARATOR, without importing the toolchain


@dataclass(frozen=True)
class LibraryEntry:
    label: str  # what results call it (an alias, or the library name itself)
    name: str   # registered library name (`./testbed libs`), or one at a revision (zlink@REV)


def is_known(name: str, names: list[str] | None) -> bool:
    """Registered, or `REGISTERED@REV` with a non-empty REV (None: nothing to check against)."""
    if names is None or name in names:
        return True
    base, sep, revision = name.partition(REVISION_SEPARATOR)
    return bool(sep and revision and base in names)


def allowed_text(names: list[str]) -> str:
    return ", ".join([*names, "zlink@REV (zlink at a git commit, tag or branch)"])


def parse(path: Path, sec: Section, names: list[str] | None) -> tuple[tuple[LibraryEntry, ...], str]:
    """(entries in `use` order, the reference label)."""
    use = sec.str_list("use")
    aliases_sec = sec.sub("aliases", {})
    aliases: dict[str, str] = {}
    for label in aliases_sec.table:
        target = aliases_sec.get(label, str)
        if not is_known(target, names):
            raise aliases_sec.err(label, f"unknown library {target!r}", allowed_text(names))
        aliases[label] = target
    entries = []
    for label in use:
        target = aliases.get(label, label)
        if not is_known(target, names):
            raise sec.err("use", f"unknown library {label!r}", allowed_text(names) + ", or an alias from "
                          "[libraries.aliases]")
        entries.append(LibraryEntry(label=label, name=target))
    unused = sorted(set(aliases) - set(use))
    if unused:
        raise aliases_sec.err(unused[0], "alias defined but not listed in use", ", ".join(use))
    reference = sec.choice("reference", use)
    sec.done()
    return tuple(entries), reference


def override(exp, names: list[str], known: list[str] | None):
    """The experiment with `--libs A,B,...` in place of its [libraries]: each a library
    name (no aliases), the first the reference, e.g. `--libs zlink@main~3,zlink` for a
    before/after comparison of zlink against itself."""
    if len(names) < 2 or len(set(names)) != len(names):
        raise ExperimentError(exp.path, "--libs", f"{','.join(names)!r} does not name two or more "
                              "different libraries", "A,B[,...] (the first is the reference)")
    for name in names:
        if not is_known(name, known):
            raise ExperimentError(exp.path, "--libs", f"unknown library {name!r}", allowed_text(known))
    entries = tuple(LibraryEntry(label=name, name=name) for name in names)
    return dataclasses.replace(exp, libraries=entries, reference=names[0])
