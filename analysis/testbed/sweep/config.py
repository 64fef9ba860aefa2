"""Parse and validate `experiments/<name>/experiment.toml` (schema: experiments/README.md).

Every problem is reported as one line naming the file, the key and what is allowed,
because a sweep that starts on a typo wastes the machine for nothing. Validation is
strict: an unknown key is an error, never silently ignored.
"""
from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from testbed import paths

PATTERNS = ("PAIR", "PUBSUB", "DEALER_DEALER", "DEALER_ROUTER", "ROUTER_ROUTER",
            "ROUTER_ROUTER_POLL", "STREAM")
TRANSPORTS = ("tcp", "ipc", "inproc")
MODES = ("thr", "lat", "both")
KINDS = ("bench", "startup")  # startup: hyperfine times a whole bench process
DEFAULT_PERF_EVENTS = ("task-clock", "context-switches", "cpu-migrations", "page-faults")
DEFAULT_HW_EVENTS = ("cycles", "instructions", "cache-misses", "branch-misses")
UNSET = "unset"  # an env axis value meaning "variable not set at all"
PROFILE_NAMES = ("quick", "default", "full")
# Profile override key -> the section whose value it replaces.
PROFILE_KEYS = {
    "repetitions": "run", "warmup_runs": "run", "timeout_s": "run",
    "patterns": "workload", "transports": "workload", "sizes": "workload",
    "counts": "workload", "lat_counts": "workload", "warmup": "workload", "mode": "workload",
    "io_threads": "sweep",
}


class ExperimentError(ValueError):
    """One line: `<file>: <key>: <problem>; allowed: <what>`."""

    def __init__(self, file: Path | str, key: str, problem: str, allowed: str = ""):
        text = f"{file}: {key}: {problem}"
        if allowed:
            text += f"; allowed: {allowed}"
        super().__init__(text)


@dataclass(frozen=True)
class LibraryEntry:
    label: str  # what results call it (an alias, or the registered name itself)
    name: str   # registered library name (`./testbed libs`)


@dataclass(frozen=True)
class ZipGroup:
    """Env variables that vary together: value i of every variable forms config i."""
    name: str
    labels: tuple[str, ...]
    env: dict[str, tuple[str, ...]]


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
    hwm: int
    bench_timeout_ms: int
    io_threads: tuple[int, ...]
    env_axes: dict[str, tuple[str, ...]]
    zipped: tuple[ZipGroup, ...]
    exclude: tuple[dict, ...]
    repetitions: int
    warmup_runs: int
    interleave: bool
    shuffle: bool
    pin: str | None
    timeout_s: float
    perf_events: tuple[str, ...]
    perf_hardware: tuple[str, ...]
    perf_record: tuple[dict, ...]
    hyperfine_runs: int
    profiles: tuple[str, ...] = field(default=())

    def count_for(self, size: int) -> int:
        return step_lookup(self.counts, size)

    def lat_count_for(self, size: int) -> int:
        return step_lookup(self.lat_counts, size)


def step_lookup(table: dict[int, int], size: int) -> int:
    """The entry with the largest key not above `size` (validated to exist)."""
    keys = [k for k in table if k <= size]
    return table[max(keys)]


class _Section:
    """Reads typed keys from one TOML table and rejects keys nobody read."""

    def __init__(self, file: Path, prefix: str, table: object):
        self.file, self.prefix = file, prefix
        if not isinstance(table, dict):
            raise ExperimentError(file, prefix, f"must be a table, got {_tname(table)}")
        self.table = dict(table)
        self.seen: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def err(self, name: str, problem: str, allowed: str = "") -> ExperimentError:
        return ExperimentError(self.file, self.key(name), problem, allowed)

    def get(self, name: str, typ, default=..., allowed: str = ""):
        self.seen.add(name)
        if name not in self.table:
            if default is ...:
                raise self.err(name, "missing", allowed)
            return default
        value = self.table[name]
        if typ is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
            raise self.err(name, f"wrong type {_tname(value)} ({value!r})", allowed or _tname_of(typ))
        return value

    def choice(self, name: str, options, default=...):
        value = self.get(name, str, default, allowed=", ".join(options))
        if value not in options:
            raise self.err(name, f"unknown value {value!r}", ", ".join(options))
        return value

    def str_list(self, name: str, options=None, default=...) -> tuple[str, ...]:
        allowed = ", ".join(options) if options else "a non-empty list of strings"
        values = self.get(name, list, default, allowed=allowed)
        if not values:
            raise self.err(name, "empty list", allowed)
        for v in values:
            if not isinstance(v, str):
                raise self.err(name, f"wrong type {_tname(v)} ({v!r}) in list", allowed)
            if options and v not in options:
                raise self.err(name, f"unknown value {v!r}", allowed)
        if len(set(values)) != len(values):
            raise self.err(name, "duplicate values", allowed)
        return tuple(values)

    def int_list(self, name: str, minimum: int, default=...) -> tuple[int, ...]:
        allowed = f"a non-empty list of integers >= {minimum}"
        values = self.get(name, list, default, allowed=allowed)
        if not values:
            raise self.err(name, "empty list", allowed)
        for v in values:
            if not isinstance(v, int) or isinstance(v, bool) or v < minimum:
                raise self.err(name, f"bad value {v!r}", allowed)
        if len(set(values)) != len(values):
            raise self.err(name, "duplicate values", allowed)
        return tuple(values)

    def positive(self, name: str, default=..., minimum: int = 1) -> int:
        value = self.get(name, int, default, allowed=f"an integer >= {minimum}")
        if value < minimum:
            raise self.err(name, f"bad value {value!r}", f"an integer >= {minimum}")
        return value

    def sub(self, name: str, default=...) -> _Section:
        self.seen.add(name)
        if name not in self.table:
            if default is ...:
                raise self.err(name, "missing table")
            return _Section(self.file, self.key(name), default)
        return _Section(self.file, self.key(name), self.table[name])

    def done(self, allowed_extra: tuple[str, ...] = ()) -> None:
        unknown = sorted(set(self.table) - self.seen - set(allowed_extra))
        if unknown:
            raise self.err(unknown[0], "unknown key", ", ".join(sorted(self.seen | set(allowed_extra))))


def _tname(value: object) -> str:
    return {str: "string", int: "integer", float: "float", bool: "boolean",
            list: "array", dict: "table"}.get(type(value), type(value).__name__)


def _tname_of(typ) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false",
            list: "an array", dict: "a table"}.get(typ, str(typ))


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


def load(path: Path, profile: str = "default", library_names: list[str] | None = None) -> Experiment:
    """Read, apply `profile`, validate. `library_names` are the registered names
    allowed in [libraries] (None: do not check, e.g. when the table is unavailable)."""
    raw_bytes = path.read_bytes()
    try:
        doc = tomllib.loads(raw_bytes.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ExperimentError(path, "(syntax)", str(exc).splitlines()[0], "valid TOML") from None
    top = _Section(path, "", doc)
    profiles = _profiles(path, top, profile)
    meta = _meta(path, top.sub("experiment"))
    libs, reference = _libraries(path, top.sub("libraries"), library_names)
    work = dict(doc.get("workload", {})) if isinstance(doc.get("workload"), dict) else doc.get("workload")
    run = dict(doc.get("run", {})) if isinstance(doc.get("run"), dict) else doc.get("run")
    sweep = dict(doc.get("sweep", {})) if isinstance(doc.get("sweep"), dict) else doc.get("sweep")
    for key, value in profiles.items():
        target = {"run": run, "workload": work, "sweep": sweep}[PROFILE_KEYS[key]]
        if isinstance(target, dict):
            target[key] = value
    top.seen.update({"workload", "run", "sweep"})
    w = _workload(path, _Section(path, "workload", work if work is not None else {}))
    s = _sweep(path, _Section(path, "sweep", sweep if sweep is not None else {}), libs, w)
    r = _run(path, _Section(path, "run", run if run is not None else {}))
    p = _perf(path, top.sub("perf", {}), libs, s)
    top.done()
    return Experiment(
        path=path, toml_sha256=hashlib.sha256(raw_bytes).hexdigest(), profile=profile,
        libraries=libs, reference=reference, **meta, **w, **s, **r, **p,
        profiles=tuple(sorted(doc.get("profiles", {}))),
    )


def _profiles(path: Path, top: _Section, profile: str) -> dict:
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


def _meta(path: Path, sec: _Section) -> dict:
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


def _libraries(path: Path, sec: _Section, names: list[str] | None):
    use = sec.str_list("use")
    aliases_sec = sec.sub("aliases", {})
    aliases: dict[str, str] = {}
    for label in aliases_sec.table:
        target = aliases_sec.get(label, str)
        if names is not None and target not in names:
            raise aliases_sec.err(label, f"unknown library {target!r}", ", ".join(names))
        aliases[label] = target
    entries = []
    for label in use:
        target = aliases.get(label, label)
        if names is not None and target not in names:
            allowed = ", ".join(list(names) + ["an alias from [libraries.aliases]"])
            raise sec.err("use", f"unknown library {label!r}", allowed)
        entries.append(LibraryEntry(label=label, name=target))
    unused = sorted(set(aliases) - set(use))
    if unused:
        raise aliases_sec.err(unused[0], "alias defined but not listed in use", ", ".join(use))
    reference = sec.choice("reference", use)
    sec.done()
    return tuple(entries), reference


def _size_table(sec: _Section, name: str, sizes: tuple[int, ...], default=...) -> dict[int, int]:
    allowed = "a table {<size bytes> = <count>, ...}; a size uses the entry with the largest key <= it"
    sec.seen.add(name)
    if name not in sec.table:
        if default is ...:
            raise sec.err(name, "missing", allowed)
        return default
    raw = sec.table[name]
    if not isinstance(raw, dict) or not raw:
        problem = f"wrong type {_tname(raw)}" if not isinstance(raw, dict) else "empty table"
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


def _workload(path: Path, sec: _Section) -> dict:
    kind = sec.choice("kind", KINDS, "bench")
    patterns = sec.str_list("patterns", PATTERNS)
    transports = sec.str_list("transports", TRANSPORTS)
    sizes = sec.int_list("sizes", 1)
    if "time_budget_s" in sec.table:
        raise sec.err("time_budget_s", "not supported yet (counts are explicit so both libraries "
                      "do identical work)", "counts = {<size> = <count>}")
    counts = _size_table(sec, "counts", sizes)
    lat_counts = _size_table(sec, "lat_counts", sizes, {1: 1000})
    out = {
        "kind": kind, "patterns": patterns, "transports": transports, "sizes": sizes,
        "counts": counts, "lat_counts": lat_counts,
        "warmup": sec.positive("warmup", 1000, minimum=1),  # the bench requires >= 1
        "mode": sec.choice("mode", MODES, "both"),
        "hwm": sec.positive("hwm", 0, minimum=0),
        "bench_timeout_ms": sec.positive("bench_timeout_ms", 10000),
    }
    sec.done()
    return out


def _env_values(sec: _Section, name: str) -> tuple[str, ...]:
    allowed = f'a non-empty list of integers or strings ("{UNSET}" = variable not set)'
    values = sec.get(name, list, allowed=allowed)
    if not values:
        raise sec.err(name, "empty axis", allowed)
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise sec.err(name, f"wrong type {_tname(v)} ({v!r}) in axis", allowed)
        out.append(str(v))
    if len(set(out)) != len(out):
        raise sec.err(name, "duplicate values", allowed)
    return tuple(out)


def _env_name_ok(sec: _Section, name: str) -> None:
    if not name.replace("_", "").isalnum() or not name[0].isalpha() or name.upper() != name:
        raise sec.err(name, "not an environment variable name", "UPPER_CASE names")
    if name == "BENCH_IO_THREADS":
        raise sec.err(name, "IO threads are an axis of their own", "[sweep].io_threads = [..]")


def _sweep(path: Path, sec: _Section, libs, work) -> dict:
    io_threads = sec.int_list("io_threads", 1, (1,))
    env_sec = sec.sub("env", {})
    env_axes = {}
    for name in env_sec.table:
        _env_name_ok(env_sec, name)
        env_axes[name] = _env_values(env_sec, name)
    zipped = []
    raw_zip = sec.get("zip", list, [], allowed="an array of tables [[sweep.zip]]")
    for i, item in enumerate(raw_zip):
        zsec = _Section(path, f"sweep.zip[{i}]", item)
        zname = zsec.get("name", str, f"zip{i}")
        zenv = zsec.sub("env")
        if not zenv.table:
            raise zenv.err("", "empty group", "two or more env variables with equally long lists")
        env = {}
        for name in zenv.table:
            _env_name_ok(zenv, name)
            if name in env_axes or any(name in g.env for g in zipped):
                raise zenv.err(name, "variable appears in two axes", "each variable in one axis")
            env[name] = _env_values(zenv, name)
        lengths = {len(v) for v in env.values()}
        if len(lengths) != 1:
            raise zenv.err(next(iter(env)), f"lists of different lengths {sorted(lengths)}",
                           "equally long lists (zipped, not crossed)")
        n = lengths.pop()
        labels = zsec.get("labels", list, None, allowed=f"{n} strings")
        if labels is None:
            labels = [",".join(f"{k}={vals[j]}" for k, vals in env.items()) for j in range(n)]
        elif len(labels) != n or not all(isinstance(x, str) for x in labels) or len(set(labels)) != n:
            raise zsec.err("labels", f"need {n} distinct strings, got {labels!r}", f"{n} distinct strings")
        zsec.done()
        zipped.append(ZipGroup(name=zname, labels=tuple(labels), env=env))
    build = sec.sub("build", {})
    for name in build.table:
        raise build.err(name, "build-time axes are not supported yet (no keyed rebuild is wired "
                        "into ./testbed run); remove it or run one experiment per build",
                        "nothing under [sweep.build] for now")
    exclude = []
    raw_ex = sec.get("exclude", list, [], allowed="an array of tables [[sweep.exclude]]")
    allowed_keys = ("library", "pattern", "transport", "msg_size", "io_threads", "config",
                    *env_axes, *(k for g in zipped for k in g.env))
    for i, item in enumerate(raw_ex):
        exclude.append(_selector(path, f"sweep.exclude[{i}]", item, allowed_keys))
    sec.done()
    return {"io_threads": io_threads, "env_axes": env_axes, "zipped": tuple(zipped),
            "exclude": tuple(exclude)}


def _selector(path: Path, key: str, item: object, allowed_keys) -> dict:
    """A table of cell field -> value (or list of values); a cell matches if every field does."""
    if not isinstance(item, dict) or not item:
        raise ExperimentError(path, key, "must be a non-empty table", ", ".join(allowed_keys))
    out = {}
    for k, v in item.items():
        if k not in allowed_keys:
            raise ExperimentError(path, f"{key}.{k}", "unknown key", ", ".join(allowed_keys))
        values = v if isinstance(v, list) else [v]
        if not values or any(isinstance(x, (dict, list, bool)) for x in values):
            raise ExperimentError(path, f"{key}.{k}", f"bad value {v!r}",
                                  "a string/integer or a list of them")
        out[k] = tuple(str(x) for x in values)
    return out


def _run(path: Path, sec: _Section) -> dict:
    pin = sec.get("pin", str, "none", allowed='"none" or a CPU list like "0" or "0,1" or "0-1"')
    if pin != "none":
        ok = all(part.replace("-", "", 1).isdigit() for part in pin.split(","))
        if not ok:
            raise sec.err("pin", f"bad CPU list {pin!r}", '"none" or a CPU list like "0,1" or "0-1"')
    timeout = sec.get("timeout_s", float, 60.0, allowed="seconds > 0")
    if timeout <= 0:
        raise sec.err("timeout_s", f"bad value {timeout!r}", "seconds > 0")
    out = {
        "repetitions": sec.positive("repetitions", 3),
        "warmup_runs": sec.positive("warmup_runs", 1, minimum=0),
        "interleave": sec.get("interleave", bool, True),
        "shuffle": sec.get("shuffle", bool, True),
        "pin": None if pin == "none" else pin,
        "timeout_s": timeout,
        "hyperfine_runs": sec.positive("hyperfine_runs", 10),
    }
    sec.done()
    return out


def _perf(path: Path, sec: _Section, libs, sweep) -> dict:
    events = sec.str_list("events", None, DEFAULT_PERF_EVENTS)
    hardware = sec.get("hardware", list, list(DEFAULT_HW_EVENTS), allowed="a list of event names")
    if not all(isinstance(x, str) for x in hardware):
        raise sec.err("hardware", "wrong type in list", "a list of event names (may be empty)")
    allowed_keys = ("library", "pattern", "transport", "msg_size", "io_threads", "config",
                    *sweep["env_axes"], *(k for g in sweep["zipped"] for k in g.env))
    record = sec.get("record", list, [], allowed="an array of tables [[perf.record]] selecting cells")
    selectors = tuple(_selector(path, f"perf.record[{i}]", item, allowed_keys)
                      for i, item in enumerate(record))
    sec.done()
    return {"perf_events": events, "perf_hardware": tuple(hardware), "perf_record": selectors}
