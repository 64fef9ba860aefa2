"""manifest.json as a typed record: everything needed to judge or repeat a run
(docs/data-formats.md §4).

The sweep reads and writes the manifest only through `RunManifest` attributes, so a
misspelt key is an AttributeError at once instead of a silent None. `to_dict()` keeps
the key order and names of the version-1 dict (readers such as testbed.results keep
working on plain JSON); keys a reader added that this class does not know
(`noise_floor_run`, `merged_from`, ...) survive a load/save round trip in `extra`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from testbed.records import store

SCHEMA = "testbed.manifest/2"
SCHEMAS_READ = ("testbed.manifest/1", SCHEMA)  # version 1 lacks the v2 fields: defaults fill them
FILE_NAME = "manifest.json"


class ManifestError(ValueError):
    """A manifest.json that cannot be read: names the file and the problem."""


@dataclass(kw_only=True)
class RunManifest:
    schema: str = SCHEMA
    run_id: str
    status: str = "running"      # running | complete | incomplete | interrupted
    experiment: str
    question: str = ""
    seed_report: str | None = None
    experiment_toml_sha256: str = ""
    experiment_source: str = ""
    profile: str = "default"
    shard: dict | None = None     # {"index", "total"}
    shuffle_seed: int = 0
    interleave: bool = True
    shuffle: bool = True
    repetitions: int = 0          # the design's minimum per cell (fixed designs: the count)
    warmup_runs: int = 0
    timeout_s: float = 0.0
    reference: str = ""
    libraries: list[dict] = field(default_factory=list)
    missing_libraries: list[dict] = field(default_factory=list)
    git: dict = field(default_factory=dict)
    host: dict = field(default_factory=dict)
    pinning: dict = field(default_factory=dict)
    perf: dict = field(default_factory=dict)
    tool_versions: dict = field(default_factory=dict)
    cell_count: int = 0
    planned_runs: int = 0
    estimated_seconds: float = 0.0
    created_at: str = ""
    finished_at: str | None = None
    command: list[str] = field(default_factory=list)
    warmup: list[dict] = field(default_factory=list)
    flamegraphs: list[dict] = field(default_factory=list)
    summary: dict | None = None
    sessions: list[dict] = field(default_factory=list)
    # Version 2 (additive; docs/data-formats.md §4).
    design: dict = field(default_factory=dict)        # repetitions, calibration, decision settings
    placement: dict = field(default_factory=dict)     # CPUs used, per-placement thread affinity check
    hosts: dict = field(default_factory=dict)         # role -> host facts (two-host runs), driver
    links: dict = field(default_factory=dict)         # link name -> shaping asked for and applied
    work_per_message: dict = field(default_factory=dict)  # method (perf/callgrind) and why
    # Host speed reference (speedref.py): present or not, the workload, the drift
    # tolerance, and at the end its spread over the run and the pairs it excluded.
    speed_reference: dict = field(default_factory=dict)
    # HWM, IO threads and socket buffers: declared (with reasons for deviations) and as
    # each library reported them in every run (library_settings.py).
    library_settings: dict = field(default_factory=dict)
    # [ceiling]: what the in-run probe was asked (sizes, tries, bytes) and, at the end,
    # how many probes ran and failed (sweep/ceiling.py; {} = not declared).
    ceiling: dict = field(default_factory=dict)
    # `./testbed run --libs A,B` as given (the first the reference); a resumed run
    # applies it again over its experiment.toml copy. Empty: the toml's [libraries].
    libs_option: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)         # keys other writers added; kept verbatim

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: dict, source: Path | str = "manifest") -> RunManifest:
        if not isinstance(data, dict):
            raise ManifestError(f"{source}: not a JSON object")
        schema = data.get("schema")
        if schema not in SCHEMAS_READ:
            raise ManifestError(f"{source}: schema {schema!r} is not one this testbed reads "
                                f"({', '.join(SCHEMAS_READ)})")
        known = {f.name for f in fields(cls)} - {"extra"}
        missing = [k for k in ("run_id", "experiment") if k not in data]
        if missing:
            raise ManifestError(f"{source}: missing {', '.join(missing)}")
        values = {k: v for k, v in data.items() if k in known}
        values["schema"] = SCHEMA  # migrated on read: v1 lacks only the v2 fields
        return cls(**values, extra={k: v for k, v in data.items() if k not in known})

    def save(self, run_dir: Path) -> None:
        store.write_json_atomic(Path(run_dir) / FILE_NAME, self.to_dict())


def load(run_dir: Path) -> RunManifest:
    path = Path(run_dir) / FILE_NAME
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return RunManifest.from_dict(data, path)
