"""Display order of patterns and transports: the bench's own lists (bench/patterns.py),
unknown names last and alphabetical, so every table and figure sorts alike."""
from __future__ import annotations

from testbed.bench.patterns import PATTERNS, TRANSPORTS


def pattern_key(pattern: str) -> tuple[int, str]:
    return (PATTERNS.index(pattern) if pattern in PATTERNS else len(PATTERNS), pattern)


def transport_key(transport: str) -> tuple[int, str]:
    return (TRANSPORTS.index(transport) if transport in TRANSPORTS else len(TRANSPORTS), transport)


def sort_patterns(patterns) -> list[str]:
    return sorted(patterns, key=pattern_key)


def sort_transports(transports) -> list[str]:
    return sorted(transports, key=transport_key)
