"""manifest.json as a typed record: everything needed to judge or repeat a run
(docs/data-formats.md §4).

The sweep reads and writes the manifest only through `RunManifest` attributes, so a
misspelt key is an AttributeError at once instead of a silent None. `to_dict()` keeps
the key order and names of the version-1 dict (readers such as testbed.results keep
working on plain JSON); keys a reader added that this class does not know
(`noise_floor_run`, `merged_from`, ...) survive a load/save round trip in `extra`.

The same class is what the analysis reads (one RunManifest for writer and reader):
the properties after the fields derive what reports, comparisons and loaders need
(reference, A/A aliases, margin and confidence of the verdicts, the looks of an
adaptive design, stop reasons); anything a runner did not write comes back as a
stated default. They are named apart from the stored fields they read
(`experiment_name` beside `experiment`, `library_info` beside `libraries`, ...).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from testbed.records import store

SCHEMA = "testbed.manifest/2"
SCHEMAS_READ = ("testbed.manifest/1", SCHEMA)  # version 1 lacks the v2 fields: defaults fill them
FILE_NAME = store.MANIFEST_NAME

DEFAULT_MARGIN = 0.03      # equivalence margin of SAME (issue 9 item 5), unless the run declares one
DEFAULT_CONFIDENCE = 0.95  # of each verdict, unless the run's design judged at another
DEFAULT_HWM = 1000         # both libraries' ZMQ_SNDHWM/ZMQ_RCVHWM default


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

    @classmethod
    def read(cls, data: dict, run_dir: Path | str | None = None) -> RunManifest:
        """A manifest as the analysis gets it (a dict from RunDir.manifest_json); raises
        ManifestError naming the file on one the record refuses."""
        return cls.from_dict(data, Path(run_dir) / FILE_NAME if run_dir is not None else "manifest")

    def save(self, run_dir: Path) -> None:
        store.write_json_atomic(Path(run_dir) / FILE_NAME, self.to_dict())

    # What the analysis derives from the record (was results/run_manifest.py).

    @property
    def experiment_name(self) -> str:
        e = self.experiment
        return str(e.get("name") if isinstance(e, dict) else e)  # early runs nested name and question

    @property
    def question_text(self) -> str:
        e = self.experiment
        return str(self.question or (e.get("question", "") if isinstance(e, dict) else ""))

    @property
    def library_info(self) -> list[Library]:
        return [Library.from_json(lib) for lib in self.libraries if isinstance(lib, dict)]

    @property
    def reference_label(self) -> str | None:
        """The reference library's label as the runner recorded it, else by name."""
        return self.reference or reference_library(lib.label for lib in self.library_info)

    @property
    def aa_aliases(self) -> frozenset[str]:
        """Labels that are the reference build under another name (same build_id):
        comparing them with the reference is an A/A pair, pure noise."""
        ref = self.reference_label
        ref_build = next((lib.build_id for lib in self.library_info if lib.label == ref), None)
        if not ref_build:
            return frozenset()
        return frozenset(lib.label for lib in self.library_info
                         if lib.label != ref and lib.build_id == ref_build)

    @property
    def margin(self) -> float:
        """The equivalence margin SAME uses: the design's (or a top-level `margin`)."""
        top = _number(self.extra.get("margin"), DEFAULT_MARGIN)
        return _number(self.design.get("margin"), top)

    @property
    def config_margin(self) -> float | None:
        """SAME's margin for configuration pairs where the design declared one
        ([run].config_margin), else None (the margin above applies)."""
        value = self.design.get("config_margin")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def overall_confidence(self) -> float:
        """The run's own confidence (all looks of a comparison together)."""
        return _number(self.design.get("confidence"), DEFAULT_CONFIDENCE)

    @property
    def paired_configurations(self) -> bool:
        """Did the run's configurations of one workload point run back to back (so a
        configuration comparison pairs repetition i with repetition i)?"""
        return bool(self.design.get("paired_configurations"))

    @property
    def looks(self) -> LookPlan | None:
        """Where an adaptive design looked (None: a fixed design or a run without one)."""
        d = self.design
        if not d.get("adaptive"):
            return None
        try:
            return LookPlan(int(d["min_repetitions"]), int(d["max_repetitions"]),
                            int(d.get("look_every") or 1))
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def confidence(self) -> float:
        """The confidence of each verdict: the per-look confidence of an adaptive design
        (its looks together keep the run's confidence), so the report judges a cell as
        the sweep did when it stopped; else the design's confidence; else 95%."""
        d = self.design
        return _number(d.get("look_confidence"), _number(d.get("confidence"), DEFAULT_CONFIDENCE))

    @property
    def speed_reference_present(self) -> bool | None:
        """Did the runner time the host speed reference (None: a run from before it)."""
        value = (self.speed_reference or {}).get("present")
        return bool(value) if value is not None else None

    @property
    def speed_tolerance(self) -> float | None:
        """The host-drift tolerance the run declared (None: no pair was excluded)."""
        value = (self.speed_reference or {}).get("tolerance")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def calibration_run(self) -> str | None:
        """An A/A run (path relative to this run) whose false-call rate the report quotes."""
        nf = self.extra.get("noise_floor_run")
        return str(nf) if nf else None

    def stop_reasons(self) -> dict[str, str]:
        """Configuration group id -> why its repetitions stopped (decided, cap, budget, ...)."""
        groups = (self.summary or {}).get("groups") or []
        return {str(g["group"]): str(g.get("stop_reason") or "") for g in groups
                if isinstance(g, dict) and g.get("group")}


def load(run_dir: Path) -> RunManifest:
    path = Path(run_dir) / FILE_NAME
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return RunManifest.from_dict(data, path)


@dataclass(frozen=True)
class LookPlan:
    """The looks of an adaptive design: at `start` usable pairs, then every `every`,
    up to `cap` (sweep/config_run.py Design.is_look)."""
    start: int
    cap: int
    every: int

    def last_look(self, pairs: int, stop_reason: str) -> int | None:
        """How many pairs the loop judged last for a cell with `pairs` usable pairs that
        stopped for `stop_reason` (None: it never looked). At the cap the loop looks at
        whatever is usable; otherwise only at planned points, so pairs run after the
        last look (a budget stop mid-way) never entered a verdict."""
        if stop_reason in ("cap", "fixed"):
            return pairs if pairs >= min(self.start, self.cap) else None
        if pairs < self.start:
            return None
        if pairs >= self.cap:
            return self.cap
        return min(self.cap, self.start + (pairs - self.start) // self.every * self.every)


def is_reference_name(library: str) -> bool:
    """The one statement of the rule: a library named libzmq* is the reference (when a
    run names none, reference_library picks the shortest such label). Every reader
    (comparisons, plots, inflections, summaries) asks here."""
    return str(library).lower().startswith("libzmq")


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
    commit: str | None = None  # zlink@REV: the commit it was built from (None: the working tree)

    @classmethod
    def from_json(cls, lib: dict) -> Library:
        info = lib.get("info") or {}
        label = str(lib.get("label") or lib.get("name") or "?")
        return cls(label=label, name=str(lib.get("name") or label), version=str(info.get("version") or ""),
                   build_id=lib.get("build_id") or info.get("build_id"), role=str(lib.get("role") or "?"),
                   commit=lib.get("commit") or info.get("commit"))

    def header_text(self) -> str:
        """The report header's line for this library."""
        at = f" at commit `{self.commit[:12]}`" if self.commit else ""
        return f"{self.name} {self.version}{at} build `{self.build_id or '?'}` ({self.role})"


def _number(value, default: float) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else default
