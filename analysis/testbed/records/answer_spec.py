"""The `[answer]` table of an experiment's toml: which comparisons answer its question,
and the one sentence that says the answer (experiments/README.md, "The answer").

The sweep validates it when a run starts (sweep/config.py) and the analysis applies it
to every run of the experiment (results/answer.py), so it lives here, where writer and
reader meet. Every problem is one line naming the file, the key and what is allowed,
as everywhere in experiment.toml.

    [answer]
    sentence = "Static sizes against the default: {static.counts}."
    [[answer.comparison]]
    name = "static"                   # the sentence's {static.FAST}, {static.counts}, ...
    kind = "configurations"           # libraries | configurations | aa | spread
    metrics = ["throughput", "p50_latency"]
    by = ["config"]                   # one row per value of these fields (none: one row)
    library = "zlink"                 # optional: only this candidate library's comparisons
    reference = "default"             # optional, configurations only: the configuration the others are
                                      #   judged against (default: the one that overrides nothing)
    where = { transport = "tcp" }     # optional: only the cells matching every key
    [[answer.quote]]                  # optional: one comparison quoted as a figure
    name = "split_tcp_64"             # the sentence's {split_tcp_64}
    metric = "throughput"
    where = { pattern = "PUSH_PULL", transport = "tcp", msg_size = 64, placement = "split" }
"""
from __future__ import annotations

import re
import string
import tomllib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from testbed.records import counted, store

KINDS = ("libraries", "configurations", "aa", "spread")
# The toml's metric names -> the tidy table's (records/schema.py).
METRICS = {"throughput": "throughput_msgs", "p50_latency": "lat_p50_us", "p99_latency": "lat_p99_us",
           "mean_latency": "lat_mean_us", "startup": "startup_s",
           # counted work per message, judged as the timings are (syscalls_per_msg, ...): an
           # answer can name the second judge too (security-cost's CURVE vs NULL)
           **{m.name.removeprefix("cw_"): m.name for m in counted.METRICS}}
FIELDS = ("pattern", "transport", "msg_size", "io_threads", "config", "placement", "process_model", "link",
          "library")
# What the sentence may say of a comparison ({name.X}), by kind.
COUNTS = ("FAST", "SLOW", "SAME", "AMBIGUOUS", "not_planned", "n", "counts", "margin", "range", "geomean")
ATTRIBUTES = {"libraries": COUNTS, "configurations": COUNTS,
              "aa": COUNTS + ("false_calls", "judged", "rate"),
              "spread": ("best", "rows", "n")}
GLOBALS = ("run", "profile")
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


class AnswerSpecError(ValueError):
    """One line: `<file>: answer.<key>: <problem>; allowed: <what>`."""

    def __init__(self, file: Path | str, key: str, problem: str, allowed: str = ""):
        self.file, self.key, self.problem, self.allowed = str(file), key, problem, allowed
        super().__init__(f"{file}: {key}: {problem}" + (f"; allowed: {allowed}" if allowed else ""))


@dataclass(frozen=True)
class Comparison:
    name: str
    kind: str
    metrics: tuple[str, ...]            # tidy metric names
    by: tuple[str, ...] = ()
    library: str | None = None
    where: dict = field(default_factory=dict)   # field -> tuple of allowed values
    reference: str | None = None    # configurations: the configuration the others are judged against


@dataclass(frozen=True)
class Quote:
    name: str
    metric: str                         # tidy metric name
    where: dict = field(default_factory=dict)
    library: str | None = None


@dataclass(frozen=True)
class AnswerSpec:
    sentence: str
    comparisons: tuple[Comparison, ...]
    quotes: tuple[Quote, ...] = ()
    source: str = ""                    # the toml it came from ("" = the default below)


# An experiment that declares no answer: every candidate against the reference library.
DEFAULT = AnswerSpec(
    sentence="Against the reference library: {libraries.counts}.",
    comparisons=(Comparison("libraries", "libraries", ("throughput_msgs", "lat_p50_us", "lat_p99_us",
                                                       "lat_mean_us", "startup_s")),))


class _Table:
    """One table of [answer]: typed reads, and unknown keys refused."""

    def __init__(self, file, key: str, table):
        if not isinstance(table, dict):
            raise AnswerSpecError(file, key, f"must be a table, got {type(table).__name__}")
        self.file, self.key, self.table, self.seen = file, key, table, set()

    def err(self, name: str, problem: str, allowed: str = "") -> AnswerSpecError:
        return AnswerSpecError(self.file, f"{self.key}.{name}", problem, allowed)

    def get(self, name: str, typ, default=..., allowed: str = ""):
        self.seen.add(name)
        if name not in self.table:
            if default is ...:
                raise self.err(name, "missing", allowed)
            return default
        value = self.table[name]
        if not isinstance(value, typ) or isinstance(value, bool) and typ is not bool:
            raise self.err(name, f"wrong type {type(value).__name__} ({value!r})", allowed)
        return value

    def names(self, name: str, options, default=...) -> tuple[str, ...]:
        allowed = ", ".join(options)
        values = self.get(name, list, default, allowed=f"a list of: {allowed}")
        for v in values:
            if v not in options:
                raise self.err(name, f"unknown value {v!r}", allowed)
        if len(set(values)) != len(values):
            raise self.err(name, "duplicate values", allowed)
        return tuple(values)

    def done(self) -> None:
        unknown = sorted(set(self.table) - self.seen)
        if unknown:
            raise self.err(unknown[0], "unknown key", ", ".join(sorted(self.seen)))


def _where(t: _Table) -> dict:
    raw = t.get("where", dict, {}, allowed=f"a table of {', '.join(FIELDS)} = a value or a list of values")
    out = {}
    for key, value in raw.items():
        if key not in FIELDS:
            raise t.err(f"where.{key}", "unknown field", ", ".join(FIELDS))
        values = tuple(value) if isinstance(value, list) else (value,)
        if not values or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
            raise t.err(f"where.{key}", f"bad value {value!r}", "a string, an integer or a list of them")
        out[key] = values
    return out


def _name(t: _Table, taken: set[str]) -> str:
    name = t.get("name", str, allowed="a lower-case identifier (letters, digits, _)")
    if not _NAME.match(name) or name in GLOBALS:
        raise t.err("name", f"bad name {name!r}",
                    f"a lower-case identifier (letters, digits, _), not {', '.join(GLOBALS)}")
    if name in taken:
        raise t.err("name", f"{name!r} is declared twice", "a name per comparison and quote")
    taken.add(name)
    return name


def _comparison(file, key: str, raw, taken: set[str]) -> Comparison:
    t = _Table(file, key, raw)
    name = _name(t, taken)
    kind = t.get("kind", str, allowed=", ".join(KINDS))
    if kind not in KINDS:
        raise t.err("kind", f"unknown kind {kind!r}", ", ".join(KINDS))
    metrics = t.names("metrics", tuple(METRICS), ["throughput", "p50_latency"] if kind == "aa" else ...)
    if not metrics:
        raise t.err("metrics", "empty list", ", ".join(METRICS))
    reference = t.get("reference", str, None, allowed="a configuration label (kind configurations only)")
    if reference is not None and kind != "configurations":
        raise t.err("reference", f"only for kind \"configurations\", not {kind!r}",
                    "remove it, or kind = \"configurations\"")
    comparison = Comparison(name, kind, tuple(METRICS[m] for m in metrics), t.names("by", FIELDS, []),
                            t.get("library", str, None, allowed="a library label of the run"), _where(t),
                            reference)
    t.done()
    return comparison


def _quote(file, key: str, raw, taken: set[str]) -> Quote:
    t = _Table(file, key, raw)
    name = _name(t, taken)
    metric = t.get("metric", str, allowed=", ".join(METRICS))
    if metric not in METRICS:
        raise t.err("metric", f"unknown metric {metric!r}", ", ".join(METRICS))
    where = _where(t)
    if not where:
        raise t.err("where", "missing: a quote names one comparison", "a table of " + ", ".join(FIELDS))
    quote = Quote(name, METRICS[metric], where, t.get("library", str, None, allowed="a library label"))
    t.done()
    return quote


def _check_sentence(t: _Table, sentence: str, comparisons, quotes) -> None:
    kinds = {c.name: c.kind for c in comparisons}
    allowed = ", ".join([f"{{{g}}}" for g in GLOBALS] + [f"{{{q.name}}}" for q in quotes]
                        + [f"{{{c.name}.<{'|'.join(ATTRIBUTES[c.kind])}>}}" for c in comparisons])
    if not sentence.strip() or "\n" in sentence:
        raise t.err("sentence", "not one line", "one sentence with placeholders: " + allowed)
    try:
        fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(sentence) if f is not None]
    except ValueError as exc:
        raise t.err("sentence", f"bad placeholder ({exc})", allowed) from None
    for name, spec, conv in fields:
        head, _, attr = name.partition(".")
        ok = (not spec and not conv) and (
            (name in GLOBALS or name in {q.name for q in quotes}) if not attr
            else attr in ATTRIBUTES.get(kinds.get(head, ""), ()))
        if not ok:
            raise t.err("sentence", f"unknown placeholder {{{name}}}", allowed)


def parse(file: Path | str, raw) -> AnswerSpec:
    """The [answer] table (`raw`, as tomllib read it) of `file`, validated."""
    t = _Table(file, "answer", raw)
    taken: set[str] = set()
    comparisons = t.get("comparison", list, allowed="an array of tables [[answer.comparison]]")
    if not comparisons:
        raise t.err("comparison", "empty", "at least one [[answer.comparison]]")
    comps = tuple(_comparison(file, f"answer.comparison[{i}]", c, taken) for i, c in enumerate(comparisons))
    raw_quotes = t.get("quote", list, [], allowed="an array of tables [[answer.quote]]")
    quotes = tuple(_quote(file, f"answer.quote[{i}]", q, taken) for i, q in enumerate(raw_quotes))
    sentence = t.get("sentence", str, allowed="one sentence with placeholders")
    _check_sentence(t, sentence, comps, quotes)
    t.done()
    return AnswerSpec(sentence, comps, quotes, str(file))


def read(toml_path: Path) -> tuple[dict, AnswerSpec | None]:
    """(the parsed toml, its [answer] or None where it declares none)."""
    doc = tomllib.loads(Path(toml_path).read_text())
    return doc, parse(toml_path, doc["answer"]) if "answer" in doc else None


@lru_cache(maxsize=8)
def _by_name(experiments_dir: Path, stamp: tuple) -> dict[str, Path]:
    out = {}
    for path in sorted(Path(experiments_dir).glob("*/*.toml")):
        try:
            name = tomllib.loads(path.read_text()).get("experiment", {}).get("name")
        except tomllib.TOMLDecodeError:
            continue  # not an experiment file we can read; `testbed run` says why
        if isinstance(name, str):
            out.setdefault(name, path)
    return out


def experiment_tomls(experiments_dir: Path) -> dict[str, Path]:
    """Experiment name -> the toml that declares it now (experiments/<folder>/*.toml)."""
    d = Path(experiments_dir)
    stamp = tuple((str(p), p.stat().st_mtime_ns) for p in sorted(d.glob("*/*.toml"))) if d.is_dir() else ()
    return _by_name(d, stamp)


def for_run(experiment: str, run_dir: Path | None, experiments_dir: Path) -> AnswerSpec:
    """The [answer] a run of `experiment` is read with: the toml that declares the
    experiment now (so a sentence edited there reaches every run's report), else the
    copy of the toml the run kept (an experiment file from outside experiments/), else
    DEFAULT. Its `source` is a path relative to the checkout, so reports stay byte-stable."""
    toml = experiment_tomls(experiments_dir).get(experiment)
    if toml is not None:
        _, spec = read(toml)
        source = toml.relative_to(Path(experiments_dir).parent).as_posix()
        return replace(spec or DEFAULT, source=source if spec else "")
    copy = Path(run_dir) / store.TOML_COPY_NAME if run_dir is not None else None
    if copy is not None and copy.is_file():
        _, spec = read(copy)
        if spec is not None:
            return replace(spec, source=f"this run's own {store.TOML_COPY_NAME}")
    return DEFAULT
