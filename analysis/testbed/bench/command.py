"""THE bench command-line builder, and the small runners around it.

Every caller that starts a bench binary (`./testbed bench`, `./testbed profile`, the
sweep runner, the tests) builds its argv here, so a flag is spelt in one place
(docs/data-formats.md section 3 is the contract):

    bench_argv(binary, transport, size, **options)       one process (or one role)
    role_argvs(binary, transport, size, endpoints, ...)  (receiver argv, sender argv)
    local_endpoints(transport)                           endpoints for a run on this host
    placement_pins(placement, cpus)                      split / one-core / free -> pin options
    run_bench(argv), run_two_process(receiver, sender)   run and parse the JSON line(s)
    join_roles(receiver_result, sender_result)           one cell result from two lines

A caller that wraps the command (perf stat, taskset, ssh) wraps what these return.
"""
from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from testbed.bench.patterns import PROCESS_MODELS, ROLES, normalise_pattern

# Options passed through to the binary (keyword -> flag); None leaves the default.
PASS_THROUGH = {"count": "--count", "warmup": "--warmup", "lat_count": "--lat-count",
                "lat_warmup": "--lat-warmup", "io_threads": "--io-threads", "hwm": "--hwm",
                "timeout_ms": "--timeout-ms", "mode": "--mode", "sndbuf": "--sndbuf", "rcvbuf": "--rcvbuf",
                "role": "--role", "bind": "--bind", "connect": "--connect", "control": "--control",
                "pin_sender": "--pin-sender", "pin_receiver": "--pin-receiver",
                "process_model": "--process-model"}
PLACEMENTS = ("split", "one-core", "free")


def _cpu_list(value: object) -> str:
    """A pin as taskset's list syntax: 1 -> '1', [0, 2] -> '0,2', '0-1' stays."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(int(c)) for c in value)
    return str(value)


def bench_argv(binary: Path | str, transport: str, size: int, **options: object) -> list[str]:
    """Command line for one run; options left as None use the binary's defaults."""
    argv = [str(binary), "--transport", transport, "--size", str(size)]
    for name, value in options.items():
        if name not in PASS_THROUGH:
            raise ValueError(f"unknown bench option {name!r}; allowed: {', '.join(PASS_THROUGH)}")
        if value is None:
            continue
        if name == "role" and value not in ROLES:
            raise ValueError(f"role {value!r} is not one of {', '.join(ROLES)}")
        if name == "process_model" and value not in PROCESS_MODELS:
            raise ValueError(f"process_model {value!r} is not one of {', '.join(PROCESS_MODELS)}")
        argv += [PASS_THROUGH[name], _cpu_list(value) if name.startswith("pin_") else str(value)]
    return argv


@dataclass(frozen=True)
class Endpoints:
    """Where the receiver binds and the sender connects (the control connection sits
    beside them unless `control` is given: tcp port + 1, or the ipc path + .ctl)."""
    bind: str
    connect: str
    control: str | None = None


def _port_pair_free(port: int, host: str) -> bool:
    for p in (port, port + 1):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, p))
            except OSError:
                return False
    return True


def local_endpoints(transport: str, host: str = "127.0.0.1") -> Endpoints:
    """Endpoints for a two-process run on this host: a tcp port whose neighbour (the
    control port) is free too, or a fresh ipc path under /tmp."""
    if transport == "ipc":
        path = Path(tempfile.gettempdir()) / f"bench-{os.getpid()}-{uuid.uuid4().hex[:8]}.ipc"
        return Endpoints(f"ipc://{path}", f"ipc://{path}")
    if transport != "tcp":
        raise ValueError(f"a two-process run needs tcp or ipc, not {transport!r} "
                         "(inproc lives in one process)")
    # Below the kernel's ephemeral range: a port from it (bind to 0) can be taken, between
    # this check and the receiver's bind, as the source port of any outgoing connection
    # on the host (seen: a noise-floor cell failed with "Address already in use").
    low, high = _outside_ephemeral_range()
    rng = random.Random(f"{os.getpid()}-{uuid.uuid4().hex}")
    for _ in range(200):
        port = rng.randrange(low, high - 1)
        if _port_pair_free(port, host):
            return Endpoints(f"tcp://{host}:{port}", f"tcp://{host}:{port}")
    raise RuntimeError(f"found no free pair of neighbouring tcp ports on {host} in {low}-{high}")


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PORT = 10000


def _outside_ephemeral_range() -> tuple[int, int]:
    """[low, high): the ports a benchmark may bind, below the ephemeral range (or above
    it when the range starts too low to leave room)."""
    try:
        first, last = (int(x) for x in EPHEMERAL_RANGE.read_text().split())
    except (OSError, ValueError):
        first, last = 32768, 60999  # Linux's default
    if first - LOWEST_PORT >= 1000:
        return LOWEST_PORT, first
    return last + 1, 65536


def placement_pins(placement: str, cpus: list[int] | tuple[int, ...]) -> dict[str, str | None]:
    """pin_sender/pin_receiver options for a named placement on the given CPUs:
    split = sender on cpus[0], receiver on cpus[1]; one-core = both on cpus[0];
    free = no pinning. ValueError (naming the placement) if the CPUs do not suffice."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}; choose from: {', '.join(PLACEMENTS)}")
    need = {"split": 2, "one-core": 1, "free": 0}[placement]
    if len(cpus) < need:
        raise ValueError(f"placement {placement!r} needs {need} CPU(s); "
                         f"this host offers {len(cpus)}: {list(cpus)}")
    if placement == "free":
        return {"pin_sender": None, "pin_receiver": None}
    return {"pin_sender": str(cpus[0]), "pin_receiver": str(cpus[1] if placement == "split" else cpus[0])}


def role_argvs(binary: Path | str, transport: str, size: int, endpoints: Endpoints,
               process_model: str = "two-process", **options: object) -> tuple[list[str], list[str]]:
    """The receiver's and the sender's command lines of one two-process/two-host run.
    Both get the same options (pins included: each process applies its own)."""
    for name in ("role", "bind", "connect", "process_model", "control"):
        if name in options:
            raise ValueError(f"role_argvs sets {name!r} itself")
    common = dict(options, process_model=process_model, control=endpoints.control)
    receiver = bench_argv(binary, transport, size, role="receiver", bind=endpoints.bind, **common)
    sender = bench_argv(binary, transport, size, role="sender", connect=endpoints.connect, **common)
    return receiver, sender


@dataclass
class BenchRun:
    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str
    result: dict | None  # the parsed JSON line, when there was one


def _parse_last_line(stdout: str) -> dict | None:
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError:
        return None


def run_bench(argv: list[str], timeout_s: float | None = None) -> BenchRun:
    """Runs a bench binary and parses its JSON line (present on exit 0 and 4).
    The binary has its own timeouts; `timeout_s` is only a last resort."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    return BenchRun(argv, proc.returncode, proc.stdout, proc.stderr, _parse_last_line(proc.stdout))


@dataclass
class TwoProcessRun:
    receiver: BenchRun
    sender: BenchRun
    result: dict | None  # join_roles of the two lines when both exited 0


def run_two_process(receiver_argv: list[str], sender_argv: list[str],
                    timeout_s: float = 600) -> TwoProcessRun:
    """Starts the receiver, then the sender (which retries its connect), and waits
    for both; a process still running after `timeout_s` is killed (exit -9)."""
    procs = []
    for argv in (receiver_argv, sender_argv):
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        time.sleep(0.01)
    runs = []
    deadline = time.monotonic() + timeout_s
    for argv, proc in zip((receiver_argv, sender_argv), procs):
        try:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        runs.append(BenchRun(argv, proc.returncode, out, err, _parse_last_line(out)))
    receiver, sender = runs
    joined = None
    if receiver.exit_code == 0 and sender.exit_code == 0 and receiver.result and sender.result:
        joined = join_roles(receiver.result, sender.result)
    return TwoProcessRun(receiver, sender, joined)


def join_roles(receiver: dict, sender: dict) -> dict:
    """One cell result (the shape of a one-process line) from the two role lines of a
    two-process run: throughput from the receiver (its clock), latency from the
    sender; verify counts from the side that checked them; `threads` of both
    processes, each tagged with its `process`; `role` = "joined"."""
    if receiver.get("role") != "receiver" or sender.get("role") != "sender":
        raise ValueError(f"join_roles needs a receiver and a sender line, got roles "
                         f"{receiver.get('role')!r} and {sender.get('role')!r}")
    for key in ("pattern", "transport", "msg_size"):
        if receiver.get(key) != sender.get(key):
            raise ValueError(f"the two lines differ in {key}: {receiver.get(key)!r} vs {sender.get(key)!r}")
    joined = json.loads(json.dumps(receiver))
    joined["role"] = "joined"
    joined["latency"] = sender.get("latency")
    joined["sender_throughput"] = sender.get("sender_throughput")
    rv, sv = receiver.get("verify", {}), sender.get("verify", {})
    joined["verify"] = {**rv, "ok": bool(rv.get("ok")) and bool(sv.get("ok")),
                        "lat_received": sv.get("lat_received"), "lat_expected": sv.get("lat_expected")}
    joined["threads"] = ([{**t, "process": "receiver"} for t in receiver.get("threads", [])]
                         + [{**t, "process": "sender"} for t in sender.get("threads", [])])
    joined["sender_settings"] = sender.get("settings")
    return joined


def binary_for(lib, pattern: str) -> Path:
    """The bench binary of `pattern` in a LibraryBuild (testbed.toolchain.libraries)."""
    return lib.bench_binary(normalise_pattern(pattern))
