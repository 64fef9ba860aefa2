"""experiment.toml of kind "faults" (a matrix of cells) and "faults-soak" (a long mixed
run with seeded random faults): read strictly, every problem one line naming the file,
the key and what is allowed (testbed.sweep.toml_reader's Section)."""

from __future__ import annotations

import hashlib
import itertools
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from testbed import paths
from testbed.sweep import config_libraries
from testbed.sweep.config_libraries import LibraryEntry
from testbed.sweep.toml_reader import ExperimentError, Section

KINDS = ("faults", "faults-soak")
PATTERNS = ("PAIR", "PUSH_PULL", "DEALER_ROUTER", "REQ_REP", "PUB_SUB")
SECURITY = ("null", "curve")
HEARTBEAT = ("off", "on")
STREAMS = ("upstream", "downstream", "both")
# Toxiproxy 2.5's toxics and the attributes each takes (all integers).
TOXICS: dict[str, tuple[str, ...]] = {
    "latency": ("latency", "jitter"),
    "bandwidth": ("rate",),
    "slow_close": ("delay",),
    "timeout": ("timeout",),
    "reset_peer": ("timeout",),
    "slicer": ("average_size", "size_variation", "delay"),
    "limit_data": ("bytes",),
}
PROFILE_NAMES = ("quick", "default", "full")
# A soak's faults count as the cause of a loss until this long after they end
# (reconnects, lazy-pirate retries, backlogs draining), and none is applied this
# long before a window where RSS and descriptors are measured.
SOAK_SETTLE_S = 5.0
MATRIX_PROFILE_KEYS = ("repetitions", "patterns", "security", "heartbeat", "faults", "concurrency")
SOAK_PROFILE_KEYS = (
    "patterns",
    "security",
    "heartbeat",
    "faults",
    "duration_s",
    "warmup_s",
    "warmup_rounds",
    "level_window_s",
    "end_window_s",
    "fault_gap_s",
    "fault_s",
)


@dataclass(frozen=True)
class Toxic:
    kind: str
    stream: str
    attributes: dict[str, int]


@dataclass(frozen=True)
class Fault:
    name: str
    toxics: tuple[Toxic, ...]
    kill: bool  # SIGKILL the bound process at the start, restart it at the end
    freeze: bool  # SIGSTOP the bound process at the start, SIGCONT at the end


@dataclass(frozen=True)
class Traffic:
    size_min: int
    size_max: int
    rate: float
    linger_ms: int | None
    linger_reason: str | None
    poll_ms: int
    request_timeout_ms: int
    retries: int
    # Each driver process calls srand() with a seed of its own before any zmq call
    # (cell.rand_seed). libzmq 4.3.5 draws its reconnect waits from rand() and never
    # seeds it: unseeded, every libzmq process waits 183, 125, 141, ... ms.
    seed_rand: bool = False
    seed_rand_reason: str | None = None


@dataclass(frozen=True)
class Heartbeat:
    ivl_ms: int
    timeout_ms: int
    ttl_ms: int
    reason: str


@dataclass(frozen=True)
class Schedule:
    startup_s: float
    warmup_s: float
    fault_s: float
    recover_s: float
    drain_s: float
    grace_s: float
    # A cell's fault lasts fault_s plus a part drawn in [0, fault_jitter_s) per pair of
    # cell runs (experiment.toml says why); 0: exactly fault_s.
    fault_jitter_s: float = 0.0


@dataclass(frozen=True)
class Soak:
    duration_s: float
    warmup_s: float  # RSS / descriptors: the level is measured after this
    level_window_s: float  # ... over this window
    end_window_s: float  # the end level: the median over this last window
    tolerance: float  # flat = end level within this share of the level
    fault_gap_s: tuple[float, float]  # seconds between faults, uniform in [a, b]
    fault_s: tuple[float, float]  # how long each fault lasts, uniform in [a, b]
    seed: int  # the schedule's default seed; a run's own seed (its manifest's) wins
    # The warm-up applies every fault this many times (soak.warmup_faults); more than
    # one is a choice the toml states the reason for (warmup_rounds_reason).
    warmup_rounds: int = 1
    warmup_rounds_reason: str | None = None


@dataclass(frozen=True)
class Cell:
    pattern: str
    security: str
    heartbeat: str
    fault: str

    def key(self) -> str:
        return f"{self.pattern}/{self.security}/hb-{self.heartbeat}/{self.fault}"


@dataclass(frozen=True)
class FaultsExperiment:
    path: Path
    toml_sha256: str
    profile: str
    kind: str
    name: str
    question: str
    libraries: tuple[LibraryEntry, ...]
    reference: str
    traffic: Traffic
    heartbeat: Heartbeat
    schedule: Schedule
    faults: dict[str, Fault]
    patterns: tuple[str, ...]
    security: tuple[str, ...]
    heartbeats: tuple[str, ...]
    fault_names: tuple[str, ...]
    exclude: tuple[dict, ...]
    repetitions: int
    timing_margin: float
    timing_margin_reason: str
    confidence: float
    # Cell runs in flight at once, each pair with its own proxy server (runner.py).
    concurrency: int = 1
    concurrency_reason: str = ""
    soak: Soak | None = None
    profiles: tuple[str, ...] = field(default=())

    def cells(self) -> list[Cell]:
        out = []
        for pattern, sec, hb, fault in itertools.product(
            self.patterns, self.security, self.heartbeats, self.fault_names
        ):
            cell = Cell(pattern, sec, hb, fault)
            if not any(_matches(cell, rule) for rule in self.exclude):
                out.append(cell)
        return out


def _matches(cell: Cell, rule: dict) -> bool:
    values = {
        "patterns": cell.pattern,
        "security": cell.security,
        "heartbeat": cell.heartbeat,
        "faults": cell.fault,
    }
    return all(values[k] in (v if isinstance(v, list) else [v]) for k, v in rule.items())


def kind_of(path: Path) -> str | None:
    """[workload].kind of an experiment.toml, or None when unreadable: how `./testbed
    run` decides whether this package runs it (commands/run_cmd.py)."""
    try:
        doc = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    workload = doc.get("workload")
    return workload.get("kind") if isinstance(workload, dict) else None


def load(path: Path, profile: str = "default", library_names: list[str] | None = None) -> FaultsExperiment:
    raw = Path(path).read_bytes()
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ExperimentError(path, "(syntax)", str(exc).splitlines()[0], "valid TOML") from None
    top = Section(path, "", doc)
    meta = top.sub("experiment")
    name = meta.get("name", str)
    folder = Path(path).resolve().parent
    shipped = Path(path).name == "experiment.toml" and folder.parent == paths.EXPERIMENTS_DIR.resolve()
    if shipped and name != path.parent.name:  # a run directory's copy sits elsewhere
        raise meta.err("name", f"{name!r} differs from the folder name", repr(path.parent.name))
    question = meta.get("question", str)
    if not question.strip():
        raise meta.err("question", "empty", "one sentence stating what the experiment answers")
    meta.get("seed", str, "none")
    meta.done()
    libs, reference = config_libraries.parse(path, top.sub("libraries"), library_names)
    workload = top.sub("workload")
    kind = workload.choice("kind", KINDS)
    workload.done()
    overrides = _profile(top, profile, kind)
    faults = _faults(top.sub("faults"))
    exp = FaultsExperiment(
        path=Path(path),
        toml_sha256=hashlib.sha256(raw).hexdigest(),
        profile=profile,
        kind=kind,
        name=name,
        question=question,
        libraries=libs,
        reference=reference,
        traffic=_traffic(top.sub("traffic")),
        heartbeat=_heartbeat(top.sub("heartbeat")),
        schedule=_schedule(top.sub("schedule"), kind),
        faults=faults,
        **_sweep(top.sub("sweep"), faults, overrides),
        **(_run(top.sub("run"), overrides) if kind == "faults" else SOAK_RUN),
        soak=_soak(top.sub("soak"), overrides) if kind == "faults-soak" else None,
        profiles=tuple(sorted(doc.get("profiles", {}))),
    )
    top.done()
    if exp.soak:
        _check_warmup(exp)
    if not exp.cells():
        raise ExperimentError(path, "sweep.exclude", "every cell is excluded", "rules that leave some cells")
    return exp


def _profile(top: Section, profile: str, kind: str) -> dict:
    allowed = SOAK_PROFILE_KEYS if kind == "faults-soak" else MATRIX_PROFILE_KEYS
    table = top.sub("profiles", {})
    for name in table.table:
        if name not in PROFILE_NAMES:
            raise table.err(name, "unknown profile", ", ".join(PROFILE_NAMES))
        table.seen.add(name)
        sec = table.sub(name)
        for key in sec.table:
            if key not in allowed:
                raise sec.err(key, "unknown key", ", ".join(allowed))
    if profile not in PROFILE_NAMES:
        raise ExperimentError(top.file, "--profile", f"unknown profile {profile!r}", ", ".join(PROFILE_NAMES))
    return dict(table.table.get(profile, {}))


def _faults(sec: Section) -> dict[str, Fault]:
    out = {}
    for name in sec.table:
        f = sec.sub(name)
        toxics = []
        for i, raw in enumerate(f.get("toxics", list, allowed="an array of {type, stream, attributes}")):
            toxics.append(_toxic(Section(f.file, f"{f.key('toxics')}[{i}]", raw)))
        kill = f.get("kill", bool, False)
        freeze = f.get("freeze", bool, False)
        if kill and freeze:
            raise f.err(
                "freeze",
                "a fault kills the bound process or freezes it, not both",
                "kill = true or freeze = true",
            )
        f.done()
        out[name] = Fault(name, tuple(toxics), kill, freeze)
    if not out:
        raise sec.err("", "no fault declared", "[faults.NAME] tables")
    return out


def _toxic(sec: Section) -> Toxic:
    kind = sec.choice("type", tuple(TOXICS))
    stream = sec.choice("stream", STREAMS)
    attrs = sec.sub("attributes")
    values = {}
    for key in attrs.table:
        if key not in TOXICS[kind]:
            raise attrs.err(key, f"not an attribute of the {kind} toxic", ", ".join(TOXICS[kind]))
        values[key] = attrs.positive(key, minimum=0)
    attrs.done()
    sec.done()
    return Toxic(kind, stream, values)


def _traffic(sec: Section) -> Traffic:
    size = sec.get("size", (int, str), allowed='bytes >= 40, or "MIN:MAX" (a mix)')
    lo, _, hi = str(size).partition(":")
    if not lo.isdigit() or (hi and not hi.isdigit()) or int(lo) < 40 or (hi and int(hi) < int(lo)):
        raise sec.err("size", f"bad value {size!r}", 'bytes >= 40 (the header), or "MIN:MAX" with MAX >= MIN')
    linger = sec.get("linger_ms", int, None, allowed="an integer >= 0 (ms), or absent for the default")
    seed_rand = sec.get("seed_rand", bool, False, allowed="true or false")
    seed_reason = sec.get("seed_rand_reason", str, None)
    if seed_rand != (seed_reason is not None):
        raise sec.err(
            "seed_rand_reason",
            "seed_rand = true and seed_rand_reason go together (seeding rand() is a deviation: say why)",
            "both, or neither",
        )
    reason = sec.get("linger_reason", str, None)
    if (linger is None) != (reason is None):
        raise sec.err(
            "linger_reason",
            "linger_ms and linger_reason go together (a deviation from the default -1 states why)",
            "both, or neither",
        )
    out = Traffic(
        int(lo),
        int(hi or lo),
        sec.number("rate", minimum=0, above=True),
        linger,
        reason,
        sec.positive("poll_ms"),
        sec.positive("request_timeout_ms"),
        sec.positive("retries", minimum=0),
        seed_rand,
        seed_reason,
    )
    sec.done()
    return out


def _heartbeat(sec: Section) -> Heartbeat:
    out = Heartbeat(
        sec.positive("ivl_ms"),
        sec.positive("timeout_ms"),
        sec.positive("ttl_ms", minimum=0),
        sec.get("reason", str),
    )
    if not out.reason.strip():
        raise sec.err("reason", "empty", "why the on arm deviates from the default (off)")
    sec.done()
    return out


def _schedule(sec: Section, kind: str) -> Schedule:
    """A soak draws its faults' times itself ([soak]): it has no warm-up, fault or
    recovery phase of a cell, so those keys are refused there."""
    keys = ("startup_s", "warmup_s", "fault_s", "recover_s", "drain_s", "grace_s")
    cell_only = ("warmup_s", "fault_s", "recover_s")
    values = []
    for key in keys:
        if kind == "faults-soak" and key in cell_only:
            if key in sec.table:
                raise sec.err(
                    key,
                    "a soak's faults are timed by [soak] fault_gap_s / fault_s",
                    "startup_s, drain_s, grace_s",
                )
            values.append(0.0)
        else:
            values.append(sec.number(key, minimum=0, above=True))
    jitter = 0.0 if kind == "faults-soak" else sec.number("fault_jitter_s", 0.0, minimum=0)
    sec.done()
    return Schedule(*values, fault_jitter_s=jitter)


def _list(sec: Section, key: str, options, overrides: dict) -> tuple[str, ...]:
    if key in overrides:
        sec.seen.add(key)
        return Section(sec.file, "profiles", {key: overrides[key]}).str_list(key, options)
    return sec.str_list(key, options)


def _sweep(sec: Section, faults: dict[str, Fault], overrides: dict) -> dict:
    out = {
        "patterns": _list(sec, "patterns", PATTERNS, overrides),
        "security": _list(sec, "security", SECURITY, overrides),
        "heartbeats": _list(sec, "heartbeat", HEARTBEAT, overrides),
        "fault_names": _list(sec, "faults", tuple(faults), overrides),
    }
    axes = {"patterns": PATTERNS, "security": SECURITY, "heartbeat": HEARTBEAT, "faults": tuple(faults)}
    rules = []
    for i, raw in enumerate(sec.get("exclude", list, [], allowed="an array of tables [[sweep.exclude]]")):
        rule = Section(sec.file, f"sweep.exclude[{i}]", raw)
        for key, value in rule.table.items():
            if key not in axes:
                raise rule.err(key, "unknown key", ", ".join(axes))
            for v in value if isinstance(value, list) else [value]:
                if v not in axes[key]:
                    raise rule.err(key, f"unknown value {v!r}", ", ".join(axes[key]))
        rules.append(dict(rule.table))
    out["exclude"] = tuple(rules)
    sec.done()
    return out


# A soak is one long run with no timing verdicts: it has no [run] table.
SOAK_RUN = {
    "repetitions": 1,
    "timing_margin": 1.0,
    "timing_margin_reason": "a soak times nothing",
    "confidence": 0.95,
}


def _run(sec: Section, overrides: dict) -> dict:
    reps = overrides.get("repetitions", sec.get("repetitions", int, allowed="an integer >= 1"))
    if not isinstance(reps, int) or reps < 1:
        raise sec.err("repetitions", f"bad value {reps!r}", "an integer >= 1")
    sec.seen.add("repetitions")
    margin = sec.number("timing_margin", minimum=0, above=True)
    reason = sec.get("timing_margin_reason", str)
    confidence = sec.number("confidence", minimum=0.5, above=True)
    if confidence >= 1:
        raise sec.err("confidence", f"bad value {confidence}", "a number in (0.5, 1)")
    concurrency = overrides.get(
        "concurrency", sec.get("concurrency", int, 1, allowed="an integer from 1 to 16")
    )
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= 16:
        raise sec.err("concurrency", f"bad value {concurrency!r}", "an integer from 1 to 16")
    concurrency_reason = sec.get("concurrency_reason", str, "")
    if concurrency > 1 and not concurrency_reason.strip():
        raise sec.err(
            "concurrency_reason", "missing", "why cell runs may overlap (they share the host's CPUs)"
        )
    sec.done()
    return {
        "repetitions": reps,
        "timing_margin": margin,
        "timing_margin_reason": reason,
        "confidence": confidence,
        "concurrency": concurrency,
        "concurrency_reason": concurrency_reason,
    }


def _soak(sec: Section, overrides: dict) -> Soak:
    def number(key: str) -> float:
        if key in overrides:
            sec.seen.add(key)
            value = overrides[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ExperimentError(sec.file, f"profiles.{key}", f"bad value {value!r}", "a number > 0")
            return float(value)
        return sec.number(key, minimum=0, above=True)

    def pair(key: str) -> tuple[float, float]:
        value = overrides.get(key, sec.get(key, list, allowed="[low, high] seconds"))
        sec.seen.add(key)
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in value)
            or value[0] > value[1]
        ):
            raise sec.err(key, f"bad value {value!r}", "[low, high] seconds, 0 < low <= high")
        return float(value[0]), float(value[1])

    out = Soak(
        number("duration_s"),
        number("warmup_s"),
        number("level_window_s"),
        number("end_window_s"),
        sec.number("tolerance", minimum=0, above=True),
        pair("fault_gap_s"),
        pair("fault_s"),
        sec.positive("seed", minimum=0),
        *_warmup_rounds(sec, overrides),
    )
    if out.warmup_s + out.level_window_s + out.end_window_s > out.duration_s:
        raise sec.err(
            "duration_s",
            f"{out.duration_s:g} s is shorter than warmup_s + level_window_s + end_window_s",
            "a longer soak, or shorter windows",
        )
    sec.done()
    return out


def _warmup_rounds(sec: Section, overrides: dict) -> tuple[int, str | None]:
    """[soak] warmup_rounds (a profile may override it) and, when it is not 1, the
    warmup_rounds_reason saying why."""
    if "warmup_rounds" in overrides:
        sec.seen.add("warmup_rounds")
        rounds = overrides["warmup_rounds"]
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise ExperimentError(
                sec.file, "profiles.warmup_rounds", f"bad value {rounds!r}", "an integer >= 1"
            )
    else:
        rounds = sec.positive("warmup_rounds", 1)
    reason = sec.get("warmup_rounds_reason", str, None)
    if rounds > 1 and not (reason or "").strip():
        raise sec.err(
            "warmup_rounds_reason",
            f"missing: warmup_rounds = {rounds} repeats the warm-up, say why",
            "one sentence",
        )
    return rounds, reason


def _check_warmup(exp: FaultsExperiment) -> None:
    """The warm-up applies every fault warmup_rounds times, at its longest, then lets
    it settle: it must fit in warmup_s (testbed.faults.soak.warmup_faults)."""
    s = exp.soak
    faults = s.warmup_rounds * len(exp.fault_names)
    needed = s.fault_gap_s[0] + faults * (s.fault_s[1] + s.fault_gap_s[0]) + SOAK_SETTLE_S
    if needed > s.warmup_s:
        raise ExperimentError(
            exp.path,
            "soak.warmup_s",
            f"{s.warmup_s:g} s is shorter than the warm-up: "
            f"{s.warmup_rounds} x {len(exp.fault_names)} faults of up to {s.fault_s[1]:g} s with "
            f"{s.fault_gap_s[0]:g} s between, then {SOAK_SETTLE_S:g} s to settle = {needed:g} s",
            f">= {needed:g}, or fewer rounds or faults / shorter fault_s",
        )


def with_profile_name(exp: FaultsExperiment, profile: str) -> FaultsExperiment:
    return replace(exp, profile=profile)
