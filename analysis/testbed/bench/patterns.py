"""The one list of benchmark patterns, transports, roles and process models.

bench/ builds one binary per pattern (`bench_<pattern in lower case>`, the list in
bench/CMakeLists.txt); everything in the analysis package that needs these names
(the sweep's config and planner, the results code, `./testbed bench`) imports them
from here instead of writing them out again. Importing this module has no side
effects: plain constants and two small pure functions.

    PATTERNS                  every pattern, in report order
    TRANSPORTS                every transport
    PATTERN_TRANSPORTS        pattern -> the transports it supports (STREAM: tcp only)
    ROLES, PROCESS_MODELS     values of --role and settings.process_model
    SPLIT_TRANSPORTS          transports a two-process/two-host run can use (not inproc)
    LOCKSTEP_PATTERNS         patterns whose throughput phase is request/reply pairs
    transports_for(pattern, process_model)   what a cell may combine
    binary_name(pattern), normalise_pattern(text)

Which library implements which socket type is not recorded here: a library that
lacks one (zlink before REQ/REP/PUSH/PULL land) fails that pattern's run cleanly
with exit 1 and "zmq_socket(ZMQ_REP): ..." on stderr.
"""
from __future__ import annotations

TRANSPORTS: tuple[str, ...] = ("tcp", "ipc", "inproc")

# STREAM talks to a plain TCP socket, so it has no ipc/inproc variant.
PATTERN_TRANSPORTS: dict[str, tuple[str, ...]] = {
    "PAIR": TRANSPORTS,
    "PUBSUB": TRANSPORTS,
    "DEALER_DEALER": TRANSPORTS,
    "DEALER_ROUTER": TRANSPORTS,
    "ROUTER_ROUTER": TRANSPORTS,
    "ROUTER_ROUTER_POLL": TRANSPORTS,
    "STREAM": ("tcp",),
    "PUSH_PULL": TRANSPORTS,
    "REQ_REP": TRANSPORTS,
}
PATTERNS: tuple[str, ...] = tuple(PATTERN_TRANSPORTS)

# REQ allows one request in flight: throughput = request/reply pairs per second,
# timed at the replier (the receiver), like every other pattern's receiver.
LOCKSTEP_PATTERNS: frozenset[str] = frozenset({"REQ_REP"})

ROLES: tuple[str, ...] = ("both", "receiver", "sender")
PROCESS_MODELS: tuple[str, ...] = ("one-process", "two-process", "two-host")
# inproc exists only inside one process (one ZeroMQ context).
SPLIT_TRANSPORTS: tuple[str, ...] = ("tcp", "ipc")

# Exit statuses of every bench binary (bench/README.md).
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_TIMEOUT, EXIT_VERIFY = 0, 1, 2, 3, 4


def normalise_pattern(text: str) -> str:
    """'router_router' or 'ROUTER-ROUTER' -> 'ROUTER_ROUTER'; ValueError names the choices."""
    name = text.strip().upper().replace("-", "_").replace("/", "_")
    if name not in PATTERNS:
        raise ValueError(f"unknown pattern {text!r}; choose from: {', '.join(PATTERNS)}")
    return name


def binary_name(pattern: str) -> str:
    """The bench binary of a pattern: 'REQ_REP' -> 'bench_req_rep'."""
    return f"bench_{normalise_pattern(pattern).lower()}"


def transports_for(pattern: str, process_model: str = "one-process") -> tuple[str, ...]:
    """Transports a cell of `pattern` may use in `process_model` (ValueError if unknown)."""
    if process_model not in PROCESS_MODELS:
        raise ValueError(f"unknown process model {process_model!r}; choose from: {', '.join(PROCESS_MODELS)}")
    supported = PATTERN_TRANSPORTS[normalise_pattern(pattern)]
    if process_model == "one-process":
        return supported
    return tuple(t for t in supported if t in SPLIT_TRANSPORTS)
