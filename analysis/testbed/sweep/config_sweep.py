"""The `[sweep]` table of experiment.toml: the run-time axes crossed with patterns x
transports x sizes (io_threads, placement, process_model, link, env variables, zipped
groups) and the `[[sweep.exclude]]` selectors (experiments/README.md)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from testbed.bench.command import PLACEMENTS
from testbed.bench.patterns import PROCESS_MODELS
from testbed.sweep.config_net import DIRECT_LINK
from testbed.sweep.toml_reader import ExperimentError, Section, deviation_reason, tname

UNSET = "unset"  # an env axis value meaning "variable not set at all"
# Chosen by measurement (experiments/README.md, "Placement and process model").
DEFAULT_PLACEMENT = "one-core"
DEFAULT_PROCESS_MODEL = "two-process"
# Cell fields every selector may name, besides the env variables.
SELECTOR_FIELDS = ("library", "pattern", "transport", "msg_size", "io_threads", "config",
                   "placement", "process_model", "link")


@dataclass(frozen=True)
class ZipGroup:
    """Env variables that vary together: value i of every variable forms config i."""
    name: str
    labels: tuple[str, ...]
    env: dict[str, tuple[str, ...]]


def _env_values(sec: Section, name: str) -> tuple[str, ...]:
    allowed = f'a non-empty list of integers or strings ("{UNSET}" = variable not set)'
    values = sec.get(name, list, allowed=allowed)
    if not values:
        raise sec.err(name, "empty axis", allowed)
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise sec.err(name, f"wrong type {tname(v)} ({v!r}) in axis", allowed)
        out.append(str(v))
    if len(set(out)) != len(out):
        raise sec.err(name, "duplicate values", allowed)
    return tuple(out)


def _env_name_ok(sec: Section, name: str) -> None:
    if not name.replace("_", "").isalnum() or not name[0].isalpha() or name.upper() != name:
        raise sec.err(name, "not an environment variable name", "UPPER_CASE names")
    if name == "BENCH_IO_THREADS":
        raise sec.err(name, "IO threads are an axis of their own", "[sweep].io_threads = [..]")


def parse(path: Path, sec: Section, links: dict, kind: str = "bench") -> dict:
    """[sweep] -> the Experiment fields it defines; `links` are the declared [links.NAME].
    Startup cells time one whole process, so their default process model is one-process."""
    io_threads = sec.int_list("io_threads", 1, (1,))
    io_threads_reason = deviation_reason(sec, "io_threads", io_threads != (1,),
                                         "[1], ZMQ_IO_THREADS' default in both libraries")
    placement = sec.str_list("placement", PLACEMENTS, (DEFAULT_PLACEMENT,))
    default_model = "one-process" if kind == "startup" else DEFAULT_PROCESS_MODEL
    process_model = sec.str_list("process_model", PROCESS_MODELS, (default_model,))
    link = sec.str_list("link", (DIRECT_LINK, *links), (DIRECT_LINK,))
    env_axes, zipped = _env_axes(path, sec)
    _no_build_axes(sec)
    exclude = []
    raw_ex = sec.get("exclude", list, [], allowed="an array of tables [[sweep.exclude]]")
    allowed_keys = selector_keys(env_axes, zipped)
    for i, item in enumerate(raw_ex):
        exclude.append(selector(path, f"sweep.exclude[{i}]", item, allowed_keys))
    sec.done()
    return {"io_threads": io_threads, "io_threads_reason": io_threads_reason,
            "placement": placement, "process_model": process_model,
            "link": link, "env_axes": env_axes, "zipped": tuple(zipped), "exclude": tuple(exclude)}


def selector_keys(env_axes: dict, zipped) -> tuple[str, ...]:
    return (*SELECTOR_FIELDS, *env_axes, *(k for g in zipped for k in g.env))


def _env_axes(path: Path, sec: Section) -> tuple[dict, list]:
    env_sec = sec.sub("env", {})
    env_axes = {}
    for name in env_sec.table:
        _env_name_ok(env_sec, name)
        env_axes[name] = _env_values(env_sec, name)
    zipped: list[ZipGroup] = []
    raw_zip = sec.get("zip", list, [], allowed="an array of tables [[sweep.zip]]")
    for i, item in enumerate(raw_zip):
        taken = set(env_axes) | {k for g in zipped for k in g.env}
        zipped.append(_zip_group(Section(path, f"sweep.zip[{i}]", item), f"zip{i}", taken))
    return env_axes, zipped


def _zip_group(zsec: Section, default_name: str, taken: set[str]) -> ZipGroup:
    zname = zsec.get("name", str, default_name)
    zenv = zsec.sub("env")
    if not zenv.table:
        raise zenv.err("", "empty group", "two or more env variables with equally long lists")
    env = {}
    for name in zenv.table:
        _env_name_ok(zenv, name)
        if name in taken:
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
    return ZipGroup(name=zname, labels=tuple(labels), env=env)


def _no_build_axes(sec: Section) -> None:
    build = sec.sub("build", {})
    for name in build.table:
        raise build.err(name, "build-time axes are not supported yet (no keyed rebuild is wired "
                        "into ./testbed run); remove it or run one experiment per build",
                        "nothing under [sweep.build] for now")


def selector(path: Path, key: str, item: object, allowed_keys) -> dict:
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
