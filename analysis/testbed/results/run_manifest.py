"""A run's manifest as the analysis reads it: the sweep's typed record
(testbed.sweep.manifest.RunManifest, docs/data-formats.md §4) plus what a report
derives from it (reference, A/A aliases, margin and confidence of the verdicts, stop
reasons, the run table). Reports, comparisons and loaders read a manifest only here.

Keys the typed record does not know (`noise_floor_run`, added by `report --publish`)
live in its `extra`; anything a runner did not write comes back as a stated default.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from testbed.sweep import library_settings
from testbed.sweep import manifest as sweep_manifest

DEFAULT_MARGIN = 0.03      # equivalence margin of SAME (issue 9 item 5), unless the run declares one
DEFAULT_CONFIDENCE = 0.95  # of each verdict, unless the run's design judged at another


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


class RunManifest:
    """The fields of one run's manifest that reports, comparisons and loaders use.
    Raises sweep_manifest.ManifestError (a ValueError naming the file) on a manifest
    the typed record refuses (unknown schema, no run_id or experiment)."""

    def __init__(self, data: dict, run_dir: Path | None = None):
        source = Path(run_dir) / sweep_manifest.FILE_NAME if run_dir is not None else "manifest"
        self.typed = sweep_manifest.RunManifest.from_dict(data, source)
        self.run_dir = Path(run_dir) if run_dir is not None else None

    @property
    def run_id(self) -> str:
        return str(self.typed.run_id)

    @property
    def experiment(self) -> str:
        e = self.typed.experiment
        return str(e.get("name") if isinstance(e, dict) else e)  # early runs nested name and question

    @property
    def question(self) -> str:
        e = self.typed.experiment
        return str(self.typed.question or (e.get("question", "") if isinstance(e, dict) else ""))

    @property
    def libraries(self) -> list[Library]:
        return [Library.from_json(lib) for lib in self.typed.libraries if isinstance(lib, dict)]

    @property
    def reference(self) -> str | None:
        """The reference library's label as the runner recorded it, else by name."""
        return self.typed.reference or reference_library(lib.label for lib in self.libraries)

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
        """The equivalence margin SAME uses: the design's (or a top-level `margin`)."""
        top = _number(self.typed.extra.get("margin"), DEFAULT_MARGIN)
        return _number(self.typed.design.get("margin"), top)

    @property
    def config_margin(self) -> float | None:
        """SAME's margin for configuration pairs where the design declared one
        ([run].config_margin), else None (the margin above applies)."""
        value = self.typed.design.get("config_margin")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def overall_confidence(self) -> float:
        """The run's own confidence (all looks of a comparison together)."""
        return _number(self.typed.design.get("confidence"), DEFAULT_CONFIDENCE)

    @property
    def paired_configurations(self) -> bool:
        """Did the run's configurations of one workload point run back to back (so a
        configuration comparison pairs repetition i with repetition i)?"""
        return bool(self.typed.design.get("paired_configurations"))

    @property
    def looks(self) -> LookPlan | None:
        """Where an adaptive design looked (None: a fixed design or a run without one)."""
        d = self.typed.design
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
        d = self.typed.design
        return _number(d.get("look_confidence"), _number(d.get("confidence"), DEFAULT_CONFIDENCE))

    @property
    def speed_reference_present(self) -> bool | None:
        """Did the runner time the host speed reference (None: a run from before it)."""
        value = (self.typed.speed_reference or {}).get("present")
        return bool(value) if value is not None else None

    @property
    def speed_tolerance(self) -> float | None:
        """The host-drift tolerance the run declared (None: no pair was excluded)."""
        value = (self.typed.speed_reference or {}).get("tolerance")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def calibration_run(self) -> str | None:
        """An A/A run (path relative to this run) whose false-call rate the report quotes."""
        nf = self.typed.extra.get("noise_floor_run")
        return str(nf) if nf else None

    def stop_reasons(self) -> dict[str, str]:
        """Configuration group id -> why its repetitions stopped (decided, cap, budget, ...)."""
        groups = (self.typed.summary or {}).get("groups") or []
        return {str(g["group"]): str(g.get("stop_reason") or "") for g in groups
                if isinstance(g, dict) and g.get("group")}

    def brief(self) -> list[tuple[str, str]]:
        """(label, text) rows of the report's run table."""
        m, host = self.typed, self.typed.host or {}
        cores = host.get("cores") or host.get("cpus") or "?"
        facts = [host.get("cpu_model"), f"{cores} cores", f"kernel {host.get('kernel', '?')}",
                 f"governor {host.get('governor', '?')}", f"turbo {host.get('turbo', '?')}"]
        out = [("status", str(m.status)), ("host", ", ".join(str(x) for x in facts if x)),
               ("load before / after", f"{host.get('load_before', '?')} / {host.get('load_after', '?')}")]
        if host.get("competing_before") or host.get("competing_after"):
            out.append(("other work at start / end", " / ".join(
                _competing(host.get(k)) for k in ("competing_before", "competing_after"))))
        out += self._hosts_rows()
        for lib in sorted(self.libraries, key=lambda lib: lib.label):
            out.append((f"library `{lib.label}`", lib.header_text()))
        commit = str(m.git.get("commit", "?"))[:12] + (" (dirty tree)" if m.git.get("dirty") else "")
        out.append(("commit", f"`{commit}`"))
        reps = m.repetitions or "?"
        out.append(("profile / repetitions / shuffle seed", f"{m.profile} / {reps} / {m.shuffle_seed}"))
        out.append(("pinning", _text(m.pinning) if m.pinning else "none"))
        same = f"SAME inside +/-{100 * self.margin:g}%"
        if self.config_margin is not None:
            same += f" (configuration pairs: +/-{100 * self.config_margin:g}%)"
        out.append(("verdicts", f"confidence {100 * self.confidence:.4g}% each, {same}"))
        return out + self._design_rows() + library_settings.header_rows(self.typed.library_settings)

    def _design_rows(self) -> list[tuple[str, str]]:
        d = self.typed.design
        if not d:
            return []
        reps = f"{d.get('min_repetitions', '?')}-{d.get('max_repetitions', '?')}" if d.get("adaptive") \
            else str(d.get("min_repetitions", "?"))
        looks = f", {d.get('looks')} looks every {d.get('look_every')}" if d.get("adaptive") else ""
        budget = d.get("time_budget_s")
        budget = "none" if budget is None else f"{budget:g} s"
        kind = "adaptive" if d.get("adaptive") else "fixed"
        # Only runs that asked for it name the timed latency warm-up, so reports of
        # earlier runs regenerate unchanged.
        warmup = f", latency warm-up >= {d['lat_warmup_s']} s" if d.get("lat_warmup_s") else ""
        tail = (f", latency window >= {d['tail_round_trips']} round trips above its p99"
                if d.get("tail_round_trips") else "")
        stop = f", the loop waits for {', '.join(d['stop_on'])}" if d.get("stop_on") else ""
        return [("design", f"{kind}: {reps} repetitions a side{looks}, run confidence "
                           f"{d.get('confidence', '?')}, budget {budget}, timed window >= "
                           f"{d.get('min_window_s', '?')} s{warmup}{tail}{stop}")]

    def _hosts_rows(self) -> list[tuple[str, str]]:
        """Two-host runs name both ends in `hosts`; shaped links are described in `links`."""
        rows = []
        for entries, label in ((self.typed.hosts, "host"), (self.typed.links, "link")):
            rows += [(f"{label} `{name}`", _text(v)) for name, v in sorted((entries or {}).items())]
        return rows


def _number(value, default: float) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else default


def _text(value) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)


def _competing(load: dict | None) -> str:
    """CPUs other processes used: at a policy that competes with a woken bench, and idle."""
    if not load:
        return "?"
    return f"{load.get('normal_cpus', '?')} CPUs competing, {load.get('idle_cpus', '?')} SCHED_IDLE"
