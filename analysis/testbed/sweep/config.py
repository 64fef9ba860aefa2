"""Parse and validate `experiments/<name>/experiment.toml` (schema: experiments/README.md).

Every problem is reported as one line naming the file, the key and what is allowed,
because a sweep that starts on a typo wastes the machine for nothing. Validation is
strict: an unknown key is an error, never silently ignored. The [sweep], [run],
[hosts] and [links] tables are read by config_sweep, config_run and config_net.
"""
from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from testbed import paths
from testbed.bench.patterns import PATTERNS, TRANSPORTS
from testbed.records import answer_spec
from testbed.sweep import (
    config_ceiling,
    config_libraries,
    config_net,
    config_perf_tools,
    config_run,
    config_sweep,
)
from testbed.sweep.config_ceiling import CeilingSpec
from testbed.sweep.config_libraries import LibraryEntry
from testbed.sweep.config_net import HostsSpec, LinkSpec
from testbed.sweep.config_run import Design
from testbed.sweep.config_sweep import UNSET, ZipGroup, selector, selector_keys
from testbed.sweep.toml_reader import ExperimentError, Section, deviation_reason, tname

__all__ = ["UNSET", "Experiment", "ExperimentError", "LibraryEntry", "ZipGroup", "load", "experiment_path"]

MODES = ("thr", "lat", "both")
KINDS = ("bench", "startup", "perf-tools")  # startup: hyperfine times a whole bench process;
# perf-tools: libzmq's own perf programs, unmodified (testbed.sweep.perf_tools)
DEFAULT_PERF_EVENTS = ("task-clock", "context-switches", "cpu-migrations", "page-faults")
DEFAULT_HW_EVENTS = ("cycles", "instructions", "cache-misses", "branch-misses")
PROFILE_NAMES = ("quick", "default", "full")
# Profile override key -> the section whose value it replaces.
PROFILE_KEYS = {
    "repetitions": "run", "min_repetitions": "run", "max_repetitions": "run", "time_budget_s": "run",
    "min_window_s": "run", "lat_warmup_s": "run", "tail_round_trips": "run", "stop_on": "run",
    "warmup_runs": "run", "timeout_s": "run", "verdicts": "run",
    "speed_reference": "run", "speed_drift_tolerance": "run", "config_margin": "run",
    "design": "run", "slice_s": "run", "rounds": "run", "warmup_rounds": "run", "counting_runs": "run",
    "patterns": "workload", "transports": "workload", "sizes": "workload",
    "counts": "workload", "lat_counts": "workload", "warmup": "workload", "mode": "workload",
    "io_threads": "sweep", "placement": "sweep", "process_model": "sweep", "link": "sweep",
}

# A profile key that replaces others of the base table (repetitions = N is a fixed
# design; min/max_repetitions an adaptive one: a profile switches between them).
REPLACES = {"repetitions": ("min_repetitions", "max_repetitions", "look_every", "time_budget_s"),
            "min_repetitions": ("repetitions",), "max_repetitions": ("repetitions",)}


@dataclass(frozen=True)
class Experiment:
    path: Path
    toml_sha256: str
    profile: str
    name: str
    question: str
    seed: str | None
    libraries: tuple[LibraryEntry, ...]
    reference: str
    kind: str
    patterns: tuple[str, ...]
    transports: tuple[str, ...]
    sizes: tuple[int, ...]
    counts: dict[int, int]
    lat_counts: dict[int, int]
    warmup: int
    mode: str
    hwm: int | None             # None: not set, each library's own default (1000 in both)
    hwm_reason: str | None      # why a declared hwm deviates from the default (required with it)
    bench_timeout_ms: int
    io_threads: tuple[int, ...]
    io_threads_reason: str | None  # why io_threads lists other than the default 1 (required then)
    placement: tuple[str, ...]
    process_model: tuple[str, ...]
    link: tuple[str, ...]
    env_axes: dict[str, tuple[str, ...]]
    zipped: tuple[ZipGroup, ...]
    exclude: tuple[dict, ...]
    design: Design
    repetitions: int            # the design's minimum per cell
    warmup_runs: int
    interleave: bool
    shuffle: bool
    cpus: str | None            # CPUs placements draw from (None: all this process may use)
    timeout_s: float
    perf_events: tuple[str, ...]
    perf_hardware: tuple[str, ...]
    perf_record: tuple[dict, ...]
    work_per_message: bool
    perf_work: tuple[dict, ...]  # cells to measure work per message for (empty: all)
    hyperfine_runs: int
    # false: speed runs are not wrapped in `perf stat`. Counting even software events
    # costs every context switch: about 2.5 us of a 64 KiB tcp round trip on one core for
    # both libraries, and it made zlink's slow round-trip mode 9 in 16 runs instead of
    # 1 in 16 (docs/profiling/2026-11-24-perf-wrapper.md).
    perf_stat: bool = True
    hosts: HostsSpec | None = None
    links: dict[str, LinkSpec] = field(default_factory=dict)
    ceiling: CeilingSpec | None = None  # [ceiling]: the host's limit probed inside the run
    profiles: tuple[str, ...] = field(default=())

    def count_for(self, size: int) -> int:
        return step_lookup(self.counts, size)

    def lat_count_for(self, size: int) -> int:
        return step_lookup(self.lat_counts, size)


def step_lookup(table: dict[int, int], size: int) -> int:
    """The entry with the largest key not above `size` (validated to exist)."""
    keys = [k for k in table if k <= size]
    return table[max(keys)]


def experiment_path(name_or_path: str) -> Path:
    """`batch-sweep` -> experiments/batch-sweep/experiment.toml; a path is taken as is."""
    p = Path(name_or_path)
    if p.suffix == ".toml" and p.is_file():
        return p
    if p.is_dir() and (p / "experiment.toml").is_file():
        return p / "experiment.toml"
    candidate = paths.EXPERIMENTS_DIR / name_or_path / "experiment.toml"
    if candidate.is_file():
        return candidate
    known = sorted(d.name for d in paths.EXPERIMENTS_DIR.glob("*") if (d / "experiment.toml").is_file())
    raise ExperimentError(candidate, "experiment", f"no experiment named {name_or_path!r}",
                          ", ".join(known) or "(none shipped)")


def available_seeds() -> list[str]:
    return sorted(p.name for p in paths.SEEDS_DIR.glob("*.txt")) if paths.SEEDS_DIR.is_dir() else []


def _parse_toml(path: Path) -> tuple[bytes, dict]:
    raw_bytes = path.read_bytes()
    try:
        return raw_bytes, tomllib.loads(raw_bytes.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ExperimentError(path, "(syntax)", str(exc).splitlines()[0], "valid TOML") from None


def _with_profile(doc: dict, overrides: dict) -> dict[str, object]:
    """The [workload], [run] and [sweep] tables with the profile's overrides applied."""
    tables = {name: dict(doc[name]) if isinstance(doc.get(name), dict) else doc.get(name, {})
              for name in ("workload", "run", "sweep")}
    for key, value in overrides.items():
        target = tables[PROFILE_KEYS[key]]
        if isinstance(target, dict):
            for rival in REPLACES.get(key, ()):  # a fixed count replaces a range and back
                target.pop(rival, None)
            target[key] = value
    return tables


def load(path: Path, profile: str = "default", library_names: list[str] | None = None) -> Experiment:
    """Read, apply `profile`, validate. `library_names` are the registered names
    allowed in [libraries], each also at a revision (NAME@REV; None: do not check,
    e.g. when the table is unavailable)."""
    raw_bytes, doc = _parse_toml(path)
    top = Section(path, "", doc)
    tables = _with_profile(doc, _profiles(path, top, profile))
    meta = _meta(path, top.sub("experiment"))
    libs, reference = config_libraries.parse(path, top.sub("libraries"), library_names)
    top.seen.update(tables)
    links = config_net.parse_links(top.sub("links", {}))
    w = _workload(path, Section(path, "workload", tables["workload"]))
    s = config_sweep.parse(path, Section(path, "sweep", tables["sweep"]), links, w["kind"])
    r = config_run.parse(Section(path, "run", tables["run"]))
    p = _perf(path, top.sub("perf", {}), s)
    hosts = _hosts(path, top, s, links)
    if w["kind"] == "startup" and s["process_model"] != ("one-process",):
        raise ExperimentError(path, "sweep.process_model", "startup cells time one whole process with "
                              "hyperfine", '["one-process"]')
    if w["kind"] == "perf-tools":
        config_perf_tools.check(path, w, s)
    ceiling = config_ceiling.parse(path, top, doc, w["kind"], s)
    _answer(path, top, doc)
    _check_layout(path, r["design"].layout, w["kind"], s["process_model"])
    top.done()
    return Experiment(
        path=path, toml_sha256=hashlib.sha256(raw_bytes).hexdigest(), profile=profile,
        libraries=libs, reference=reference, **meta, **w, **s, **r, **p, hosts=hosts, links=links,
        ceiling=ceiling, profiles=tuple(sorted(doc.get("profiles", {}))),
    )


def _answer(path: Path, top: Section, doc: dict) -> None:
    """[answer] (optional): checked here so a typo stops the run before it starts; the
    analysis reads it (records/answer_spec.py)."""
    top.seen.add("answer")
    if "answer" in doc:
        try:
            answer_spec.parse(path, doc["answer"])
        except answer_spec.AnswerSpecError as exc:
            raise ExperimentError(exc.file, exc.key, exc.problem, exc.allowed) from None


def _check_layout(path: Path, layout: str, kind: str, models: tuple[str, ...]) -> None:
    """design = "arms" only where arms can run: the bench's patterns on this host (startup
    and perf-tools time whole processes of one library; two-host roles run elsewhere)."""
    if layout != "arms":
        return
    if kind != "bench":
        raise ExperimentError(path, "run.design", f'"arms" with [workload].kind = "{kind}" (its processes '
                              'hold one library each)', '"blocks" or "auto" (or kind = "bench")')
    if "two-host" in models:
        raise ExperimentError(path, "run.design", '"arms" with process_model "two-host" (the arms bench '
                              'runs on this host)', '"blocks" or "auto"')


def _hosts(path: Path, top: Section, sweep: dict, links: dict) -> HostsSpec | None:
    """[hosts] exists exactly when a two-host cell needs it; declared links are used."""
    two_host = "two-host" in sweep["process_model"]
    if "hosts" not in top.table:
        if two_host:
            raise ExperimentError(path, "hosts", "missing table (process_model lists two-host)",
                                  '[hosts] driver = "netns" or "ssh"')
        hosts = None
    else:
        hosts = config_net.parse_hosts(top.sub("hosts"))
        if not two_host:
            raise ExperimentError(path, "hosts", "declared but no process_model is two-host",
                                  'remove [hosts] or add "two-host" to [sweep].process_model')
    unused = sorted(set(links) - set(sweep["link"]))
    if unused:
        raise ExperimentError(path, f"links.{unused[0]}", "declared but not listed in [sweep].link",
                              ", ".join(sweep["link"]))
    shaped = [name for name in sweep["link"] if name in links]
    if shaped and (not two_host or hosts.driver != "netns"):
        raise ExperimentError(path, "sweep.link", f"{shaped[0]!r} shapes the netns veth pair, which "
                              "only two-host cells with the netns driver use",
                              'process_model "two-host" with [hosts] driver = "netns"')
    return hosts


def _profiles(path: Path, top: Section, profile: str) -> dict:
    table = top.sub("profiles", {})
    for name in table.table:
        if name not in PROFILE_NAMES:
            raise table.err(name, "unknown profile", ", ".join(PROFILE_NAMES))
        table.seen.add(name)
        sec = table.sub(name)
        for key in sec.table:
            if key not in PROFILE_KEYS:
                raise sec.err(key, "unknown key", ", ".join(PROFILE_KEYS))
    if profile not in PROFILE_NAMES:
        raise ExperimentError(path, "--profile", f"unknown profile {profile!r}", ", ".join(PROFILE_NAMES))
    return dict(table.table.get(profile, {}))


def _meta(path: Path, sec: Section) -> dict:
    name = sec.get("name", str)
    shipped = path.name == "experiment.toml" and path.parent.parent == paths.EXPERIMENTS_DIR
    if name != path.parent.name and shipped:
        raise sec.err("name", f"{name!r} differs from the folder name", repr(path.parent.name))
    question = sec.get("question", str)
    if not question.strip():
        raise sec.err("question", "empty", "one sentence stating what the experiment answers")
    seed = sec.get("seed", str, allowed="a file name in the seeds folder, or \"none\"")
    seeds = available_seeds()
    if seed == "none":
        seed = None
    elif seeds and seed not in seeds:
        raise sec.err("seed", f"unknown seed report {seed!r}", ", ".join(seeds + ["none"]))
    sec.done()
    return {"name": name, "question": question, "seed": seed}


def _size_table(sec: Section, name: str, sizes: tuple[int, ...], default=...) -> dict[int, int]:
    allowed = "a table {<size bytes> = <count>, ...}; a size uses the entry with the largest key <= it"
    sec.seen.add(name)
    if name not in sec.table:
        if default is ...:
            raise sec.err(name, "missing", allowed)
        return default
    raw = sec.table[name]
    if not isinstance(raw, dict) or not raw:
        problem = f"wrong type {tname(raw)}" if not isinstance(raw, dict) else "empty table"
        raise sec.err(name, problem, allowed)
    table: dict[int, int] = {}
    for k, v in raw.items():
        if not k.isdigit():
            raise sec.err(f"{name}.{k}", "key is not a size in bytes", allowed)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise sec.err(f"{name}.{k}", f"bad count {v!r}", "an integer >= 1")
        table[int(k)] = v
    for size in sizes:
        if not any(k <= size for k in table):
            raise sec.err(name, f"no entry covers size {size}", allowed)
    return table


def _workload(path: Path, sec: Section) -> dict:
    kind = sec.choice("kind", KINDS, "bench")
    patterns = sec.str_list("patterns", PATTERNS)
    transports = sec.str_list("transports", TRANSPORTS)
    sizes = sec.int_list("sizes", 1)
    if "time_budget_s" in sec.table:
        raise sec.err("time_budget_s", "belongs in [run] (the run's budget); counts come from "
                      "[run].min_window_s calibration", "[run] time_budget_s = <seconds>")
    counts = _size_table(sec, "counts", sizes)
    lat_counts = _size_table(sec, "lat_counts", sizes, {1: 1000})
    out = {
        "kind": kind, "patterns": patterns, "transports": transports, "sizes": sizes,
        "counts": counts, "lat_counts": lat_counts,
        "warmup": sec.positive("warmup", 1000, minimum=1),  # the bench requires >= 1
        "mode": sec.choice("mode", MODES, "both"),
        "hwm": sec.positive("hwm", None, minimum=0) if "hwm" in sec.table else None,
        "hwm_reason": deviation_reason(sec, "hwm", "hwm" in sec.table,
                                       "each library's own HWM (1000 in libzmq 4.3.5 and zlink)"),
        "bench_timeout_ms": sec.positive("bench_timeout_ms", 10000),
    }
    sec.done()
    return out


def _perf(path: Path, sec: Section, sweep: dict) -> dict:
    events = sec.str_list("events", None, DEFAULT_PERF_EVENTS)
    hardware = sec.get("hardware", list, list(DEFAULT_HW_EVENTS), allowed="a list of event names")
    if not all(isinstance(x, str) for x in hardware):
        raise sec.err("hardware", "wrong type in list", "a list of event names (may be empty)")
    allowed_keys = selector_keys(sweep["env_axes"], sweep["zipped"])
    record = sec.get("record", list, [], allowed="an array of tables [[perf.record]] selecting cells")
    selectors = tuple(selector(path, f"perf.record[{i}]", item, allowed_keys)
                      for i, item in enumerate(record))
    work = sec.get("work_per_message", bool, True)
    stat = sec.get("stat", bool, True)
    raw_work = sec.get("work", list, [], allowed="an array of tables [[perf.work]] selecting cells")
    work_cells = tuple(selector(path, f"perf.work[{i}]", item, allowed_keys)
                       for i, item in enumerate(raw_work))
    if work_cells and not work:
        raise sec.err("work", "selects cells, but work_per_message = false", "work_per_message = true")
    sec.done()
    return {"perf_events": events, "perf_hardware": tuple(hardware), "perf_record": selectors,
            "work_per_message": work, "perf_work": work_cells, "perf_stat": stat}
