"""Fixed text formats for numbers, so a report's bytes depend only on its data."""
from __future__ import annotations

import math

from testbed.records import schema


def value(v: float, metric: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    unit = schema.metric(metric).unit
    if unit == "msg/s":
        if v >= 1e6:
            return f"{v / 1e6:.2f} M/s"
        if v >= 1e3:
            return f"{v / 1e3:.1f} K/s"
        return f"{v:.0f} /s"
    if unit == "us":
        return f"{v:.2f} us" if v < 1000 else f"{v:,.0f} us"
    if unit == "s":
        return f"{v * 1e3:.1f} ms"
    return f"{v:.2f} {unit}".strip()


def pct(v: float, digits: int = 2) -> str:
    if v is None or math.isnan(v):
        return "-"
    return f"{v:+.{digits}f}%"


def interval(lo: float, hi: float) -> str:
    if lo is None or math.isnan(lo):
        return "no interval"
    return f"[{lo:+.1f}, {hi:+.1f}]"


def share(v: float) -> str:
    return "-" if v is None or math.isnan(v) else f"{100 * v:.0f}%"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c).replace("|", "/") for c in r) + " |" for r in rows]
    return "\n".join(lines)
