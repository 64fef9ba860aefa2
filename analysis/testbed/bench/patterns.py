"""The benchmark patterns and transports the bench binaries implement (bench/)."""
from __future__ import annotations

PATTERNS: tuple[str, ...] = ("PAIR", "PUBSUB", "DEALER_DEALER", "DEALER_ROUTER", "ROUTER_ROUTER",
                             "ROUTER_ROUTER_POLL", "STREAM")
TRANSPORTS: tuple[str, ...] = ("tcp", "ipc", "inproc")
# STREAM talks to a plain TCP socket, so it has no ipc/inproc variant.
PATTERN_TRANSPORTS: dict[str, tuple[str, ...]] = {p: ("tcp",) if p == "STREAM" else TRANSPORTS for p in PATTERNS}

# Exit statuses of every bench binary (bench/README.md).
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_TIMEOUT, EXIT_VERIFY = 0, 1, 2, 3, 4


def normalise_pattern(text: str) -> str:
    """'router_router' or 'ROUTER-ROUTER' -> 'ROUTER_ROUTER'; ValueError names the choices."""
    name = text.strip().upper().replace("-", "_").replace("/", "_")
    if name not in PATTERNS:
        raise ValueError(f"unknown pattern {text!r}; choose from: {', '.join(PATTERNS)}")
    return name
