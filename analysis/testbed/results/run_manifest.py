"""A run's manifest.json as the analysis reads it: one class, so the string keys of
docs/data-formats.md §4 appear here and nowhere else in testbed.results.

Read-only and lenient: a field an older runner did not write comes back as None or a
stated default, never as a KeyError in the middle of a report. (When the sweep's typed
manifest lands, this class becomes a thin adapter over it.)
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MARGIN = 0.03  # equivalence margin of SAME (issue 9 item 5), unless the run declares one


def is_reference_name(library: str) -> bool:
    return library.lower().startswith("libzmq")


def reference_library(libraries) -> str | None:
    """The shortest libzmq* label: the reference when the manifest does not name one."""
    refs = sorted((lib for lib in set(libraries) if is_reference_name(lib)), key=lambda s: (len(s), s))
    return refs[0] if refs else None


@dataclass(frozen=True)
class Library:
    label: str
    name: str
    version: str
    build_id: str | None
    role: str

    @classmethod
    def from_json(cls, lib: dict) -> Library:
        info = lib.get("info") or {}
        label = str(lib.get("label") or lib.get("name") or "?")
        return cls(label=label, name=str(lib.get("name") or label), version=str(info.get("version") or ""),
                   build_id=lib.get("build_id") or info.get("build_id"), role=str(lib.get("role") or "?"))


class RunManifest:
    """The fields of one run's manifest that reports, comparisons and loaders use."""

    def __init__(self, data: dict, run_dir: Path | None = None):
        self.data = data
        self.run_dir = Path(run_dir) if run_dir is not None else None

    @classmethod
    def read(cls, run_dir: Path) -> RunManifest:
        return cls(json.loads((Path(run_dir) / "manifest.json").read_text()), run_dir)

    def _dir_name(self, level: int) -> str:
        if self.run_dir is None:
            return ""
        return (self.run_dir if level == 0 else self.run_dir.parent).name

    @property
    def run_id(self) -> str:
        return str(self.data.get("run_id") or self._dir_name(0))

    @property
    def experiment(self) -> str:
        e = self.data.get("experiment")
        if isinstance(e, dict):  # early runs nested name, question and hash here
            e = e.get("name")
        return str(e or self._dir_name(1))

    @property
    def question(self) -> str:
        e = self.data.get("experiment")
        nested = e.get("question", "") if isinstance(e, dict) else ""
        return str(self.data.get("question") or nested or "")

    @property
    def libraries(self) -> list[Library]:
        return [Library.from_json(lib) for lib in self.data.get("libraries") or [] if isinstance(lib, dict)]

    @property
    def reference(self) -> str | None:
        """The reference library's label as the runner recorded it, else by name."""
        if isinstance(self.data.get("reference"), str):
            return self.data["reference"]
        return reference_library(lib.label for lib in self.libraries)

    @property
    def aa_aliases(self) -> frozenset[str]:
        """Labels that are the reference build under another name (same build_id):
        comparing them with the reference is an A/A pair, pure noise."""
        ref = self.reference
        ref_build = next((lib.build_id for lib in self.libraries if lib.label == ref), None)
        if not ref_build:
            return frozenset()
        return frozenset(lib.label for lib in self.libraries
                         if lib.label != ref and lib.build_id == ref_build)

    @property
    def margin(self) -> float:
        """The equivalence margin SAME uses: the run's `margin` if it declares one."""
        m = self.data.get("margin")
        return float(m) if isinstance(m, (int, float)) and not isinstance(m, bool) else DEFAULT_MARGIN

    @property
    def calibration_run(self) -> str | None:
        """An A/A run (path relative to this run) whose false-call rate the report quotes."""
        nf = self.data.get("noise_floor_run")
        return str(nf) if nf else None

    def brief(self) -> list[tuple[str, str]]:
        """(label, text) rows of the report's run table."""
        m, host = self.data, self.data.get("host") or {}
        cores = host.get("cores") or host.get("cpus") or "?"
        facts = [host.get("cpu_model"), f"{cores} cores", f"kernel {host.get('kernel', '?')}",
                 f"governor {host.get('governor', '?')}", f"turbo {host.get('turbo', '?')}"]
        out = [("status", str(m.get("status", "?"))),
               ("host", ", ".join(str(x) for x in facts if x)),
               ("load before / after", f"{host.get('load_before', '?')} / {host.get('load_after', '?')}")]
        out += self._hosts_rows()
        for lib in sorted(self.libraries, key=lambda lib: lib.label):
            out.append((f"library `{lib.label}`", f"{lib.name} {lib.version} build `{lib.build_id or '?'}` "
                                                  f"({lib.role})"))
        git = m.get("git") or {}
        commit = str(git.get("commit", "?"))[:12] + (" (dirty tree)" if git.get("dirty") else "")
        out.append(("commit", f"`{commit}`"))
        out.append(("profile / repetitions / shuffle seed",
                    f"{m.get('profile', '?')} / {m.get('repetitions', '?')} / {m.get('shuffle_seed', '?')}"))
        pin = m.get("pinning")
        out.append(("pinning", _text(pin) if pin else "none"))
        out.append(("equivalence margin (SAME)", f"+/-{100 * self.margin:g}%"))
        return out

    def _hosts_rows(self) -> list[tuple[str, str]]:
        """Two-host runs name both ends (and the link between them) in `hosts`/`link`."""
        hosts = self.data.get("hosts")
        hosts = hosts if isinstance(hosts, dict) else {}
        rows = [(f"host ({role})", _text(h)) for role, h in sorted(hosts.items())]
        link = self.data.get("link")
        return rows + ([("link", _text(link))] if link else [])


def _text(value) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
