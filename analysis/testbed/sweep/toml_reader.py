"""Typed, strict reading of one TOML table: the building block of experiment.toml
validation. Every problem is one line naming the file, the key and what is allowed;
a key nobody read is an error, never silently ignored."""
from __future__ import annotations

from pathlib import Path


class ExperimentError(ValueError):
    """One line: `<file>: <key>: <problem>; allowed: <what>`."""

    def __init__(self, file: Path | str, key: str, problem: str, allowed: str = ""):
        text = f"{file}: {key}: {problem}"
        if allowed:
            text += f"; allowed: {allowed}"
        super().__init__(text)


class Section:
    """Reads typed keys from one TOML table and rejects keys nobody read."""

    def __init__(self, file: Path, prefix: str, table: object):
        self.file, self.prefix = file, prefix
        if not isinstance(table, dict):
            raise ExperimentError(file, prefix, f"must be a table, got {tname(table)}")
        self.table = dict(table)
        self.seen: set[str] = set()

    def key(self, name: str) -> str:
        if self.prefix and name:
            return f"{self.prefix}.{name}"
        return name or self.prefix

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
            raise self.err(name, f"wrong type {tname(value)} ({value!r})", allowed or _tname_of(typ))
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
                raise self.err(name, f"wrong type {tname(v)} ({v!r}) in list", allowed)
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

    def number(self, name: str, default=..., minimum: float = 0.0, above: bool = False) -> float:
        """A float (an integer is accepted); `above`: strictly greater than `minimum`.
        A default of None means "absent is allowed" and returns None."""
        allowed = f"a number {'>' if above else '>='} {minimum:g}"
        value = self.get(name, float, default, allowed=allowed)
        if value is None:
            return None
        if value < minimum or (above and value == minimum):
            raise self.err(name, f"bad value {value!r}", allowed)
        return value

    def positive(self, name: str, default=..., minimum: int = 1) -> int:
        value = self.get(name, int, default, allowed=f"an integer >= {minimum}")
        if value < minimum:
            raise self.err(name, f"bad value {value!r}", f"an integer >= {minimum}")
        return value

    def sub(self, name: str, default=...) -> Section:
        self.seen.add(name)
        if name not in self.table:
            if default is ...:
                raise self.err(name, "missing table")
            return Section(self.file, self.key(name), default)
        return Section(self.file, self.key(name), self.table[name])

    def done(self, allowed_extra: tuple[str, ...] = ()) -> None:
        unknown = sorted(set(self.table) - self.seen - set(allowed_extra))
        if unknown:
            raise self.err(unknown[0], "unknown key", ", ".join(sorted(self.seen | set(allowed_extra))))


def deviation_reason(sec: Section, key: str, deviates: bool, default: str) -> str | None:
    """Defaults are the default (DEVELOPERS.md): a setting that differs from the
    libraries' own default needs `<key>_reason`, a sentence saying why; a reason for a
    setting at its default is refused too, so it cannot outlive the deviation."""
    name = f"{key}_reason"
    reason = sec.get(name, str, None, allowed="a sentence saying why this run deviates from the default")
    if deviates and not (reason or "").strip():
        raise sec.err(key, f"differs from the default ({default}) without a reason",
                      f'{sec.key(name)} = "<why>" beside it, or remove {key!r} to run at the default')
    if reason is not None and not deviates:
        raise sec.err(name, f"a reason, but {key} is at its default ({default})",
                      f"remove {name}, or declare the deviation")
    return reason


def tname(value: object) -> str:
    return {str: "string", int: "integer", float: "float", bool: "boolean",
            list: "array", dict: "table"}.get(type(value), type(value).__name__)


def _tname_of(typ) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false",
            list: "an array", dict: "a table"}.get(typ, str(typ))
