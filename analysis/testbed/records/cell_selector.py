"""The command line's cell selector, `KEY=VALUE,...` (e.g.
`pattern=PUSH_PULL,transport=tcp,msg_size=64`): one syntax for every command that
names cells (`./testbed history --cell`, `./testbed bisect CELL`). Here only its form
is checked; which keys a command allows and what they match is the command's business."""
from __future__ import annotations

INT_KEYS = ("msg_size", "io_threads")


class CellSelectorError(ValueError):
    """A selector that is not KEY=VALUE,... with allowed keys; names the part."""


def parse(text: str | None, keys: tuple[str, ...], option: str = "--cell") -> dict:
    """'pattern=PUSH_PULL,transport=tcp,msg_size=64' -> {key: value}; msg_size and
    io_threads as integers. A key given twice is refused (which one would count?)."""
    out: dict = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in keys or not value:
            raise CellSelectorError(f"{option}: {part!r} is not KEY=VALUE with KEY one of {', '.join(keys)}")
        if key in out:
            raise CellSelectorError(f"{option}: {key} is given twice")
        if key in INT_KEYS and not value.isdigit():
            raise CellSelectorError(f"{option}: {key} must be an integer, not {value!r}")
        out[key] = int(value) if key in INT_KEYS else value
    return out
