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

The arms bench (bench_arms_<pattern>, several arms in one process pair):

    arms_argv(binary, transport, size, libs, arms, **options)   one process (or one role)
    arms_role_argvs(binary, transport, size, endpoints, libs, arms, ...)
    parse_arm("16k=zlink:ZMQ_ASIO_IN_BATCH_SIZE=16384")          --arm text -> Arm
    join_arms_roles(receiver_result, sender_result)             one arms result from two lines
    annotate_arms(result, libs), run_arms(...)

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
                    timeout_s: float = 600, join=None) -> TwoProcessRun:
    """Starts the receiver, then the sender (which retries its connect), and waits
    for both; a process still running after `timeout_s` is killed (exit -9). `join`
    makes one result of the two lines (default join_roles; join_arms_roles for the
    arms bench)."""
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
        joined = (join or join_roles)(receiver.result, sender.result)
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


# ---------------------------------------------------------------------------------------
# The arms bench (bench/README.md "The arms bench"; docs/design/2026-12-02-arms.md):
# one binary per pattern, bench_arms_<pattern>, holding several arms (library x
# environment) in one process pair. THE builder of its argv, and the join of its two
# role lines.

# Options of the arms binaries beside bench's (keyword -> flag). --count/--lat-count
# do not apply: counts are per slice.
ARMS_PASS_THROUGH = {**{k: v for k, v in PASS_THROUGH.items() if k not in ("count", "lat_count")},
                     "rounds": "--rounds", "warmup_rounds": "--warmup-rounds",
                     "slice_count": "--slice-count", "slice_lat_count": "--slice-lat-count",
                     "seed": "--seed", "counters": "--counters", "redeal": "--redeal"}
COUNTER_MODES = ("auto", "software", "rusage", "off")
REDEAL_MODES = ("on", "off")  # bench/arms/dealer.hpp
LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.@")


def _check_label(label: str, what: str) -> None:
    if not label or len(label) > 64 or not set(label) <= LABEL_CHARS:
        raise ValueError(f"{what} {label!r}: use 1-64 letters, digits, '_', '-', '.', '@'")


@dataclass(frozen=True)
class ArmLib:
    """A shared object the arms binary loads into a namespace of its own (--lib
    LABEL=PATH). `name`/`build_id`: the registered library it is, when known; the
    join copies them into each arm's `library` (the binary knows only the label)."""
    label: str
    path: str
    name: str | None = None
    build_id: str | None = None

    def __post_init__(self) -> None:
        _check_label(self.label, "library label")
        if not self.path:
            raise ValueError(f"library {self.label!r} has no path")


@dataclass(frozen=True)
class Arm:
    """An arm (--arm LABEL=LIB[:VAR=VALUE,...]): a library label and the environment
    set while the arm's contexts are created."""
    label: str
    lib: str
    env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        _check_label(self.label, "arm label")
        seen = set()
        for name, value in self.env:
            if not name or name[0].isdigit() or not all(c.isalnum() or c == "_" for c in name):
                raise ValueError(f"arm {self.label!r}: {name!r} is not an environment variable name")
            if name in seen:
                raise ValueError(f"arm {self.label!r}: variable {name} given twice")
            if "," in value:
                raise ValueError(f"arm {self.label!r}: the value of {name} may not contain ','")
            seen.add(name)

    def flag(self) -> str:
        env = ",".join(f"{k}={v}" for k, v in self.env)
        return f"{self.label}={self.lib}" + (f":{env}" if env else "")


def parse_arm(text: str) -> Arm:
    """'16k=zlink:ZMQ_ASIO_IN_BATCH_SIZE=16384,ZMQ_ASIO_OUT_BATCH_SIZE=16384' -> Arm;
    ValueError says what is wrong."""
    label, eq, rest = text.partition("=")
    if not eq or not rest:
        raise ValueError(f"--arm {text!r}: expected LABEL=LIB[:VAR=VALUE,...]")
    lib, colon, env_text = rest.partition(":")
    env = []
    if colon:
        if not env_text:
            raise ValueError(f"--arm {text!r}: nothing after ':' (give VAR=VALUE,... or no ':')")
        for item in env_text.split(","):
            name, eq2, value = item.partition("=")
            if not eq2:
                raise ValueError(f"--arm {text!r}: {item!r} is not VAR=VALUE")
            env.append((name, value))
    if not lib:
        raise ValueError(f"--arm {text!r}: no library after '='")
    return Arm(label, lib, tuple(env))


def arms_argv(binary: Path | str, transport: str, size: int, libs: list[ArmLib], arms: list[Arm],
              **options: object) -> list[str]:
    """Command line of one arms run (or one role of it); options as bench_argv, plus
    rounds, warmup_rounds, slice_count, slice_lat_count, seed, counters, redeal."""
    if not arms:
        raise ValueError("an arms run needs at least one arm")
    labels = [lib.label for lib in libs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"library labels repeat: {labels}")
    arm_labels = [a.label for a in arms]
    if len(set(arm_labels)) != len(arm_labels):
        raise ValueError(f"arm labels repeat: {arm_labels}")
    for arm in arms:
        if arm.lib not in labels:
            raise ValueError(f"arm {arm.label!r} names library {arm.lib!r}; given: {', '.join(labels)}")
    argv = [str(binary), "--transport", transport, "--size", str(size)]
    for lib in libs:
        argv += ["--lib", f"{lib.label}={lib.path}"]
    for arm in arms:
        argv += ["--arm", arm.flag()]
    for name, value in options.items():
        if name not in ARMS_PASS_THROUGH:
            raise ValueError(f"unknown arms option {name!r}; allowed: {', '.join(ARMS_PASS_THROUGH)}")
        if value is None:
            continue
        if name == "role" and value not in ROLES:
            raise ValueError(f"role {value!r} is not one of {', '.join(ROLES)}")
        if name == "process_model" and value not in PROCESS_MODELS:
            raise ValueError(f"process_model {value!r} is not one of {', '.join(PROCESS_MODELS)}")
        if name == "counters" and value not in COUNTER_MODES:
            raise ValueError(f"counters {value!r} is not one of {', '.join(COUNTER_MODES)}")
        if name == "redeal" and value not in REDEAL_MODES:
            raise ValueError(f"redeal {value!r} is not one of {', '.join(REDEAL_MODES)}")
        argv += [ARMS_PASS_THROUGH[name], _cpu_list(value) if name.startswith("pin_") else str(value)]
    return argv


def arms_role_argvs(binary: Path | str, transport: str, size: int, endpoints: Endpoints,
                    libs: list[ArmLib], arms: list[Arm], process_model: str = "two-process",
                    **options: object) -> tuple[list[str], list[str]]:
    """The receiver's and the sender's command lines of a two-process arms run: the
    same arms and options (each process applies its own pins)."""
    for name in ("role", "bind", "connect", "process_model", "control"):
        if name in options:
            raise ValueError(f"arms_role_argvs sets {name!r} itself")
    common = dict(options, process_model=process_model, control=endpoints.control)
    receiver = arms_argv(binary, transport, size, libs, arms, role="receiver", bind=endpoints.bind,
                         **common)
    sender = arms_argv(binary, transport, size, libs, arms, role="sender", connect=endpoints.connect,
                       **common)
    return receiver, sender


def annotate_arms(result: dict, libs: list[ArmLib]) -> dict:
    """Each arm's `library` gets the registered `registered_name`/`build_id` of its
    --lib, where the caller knew them (the binary knows only labels and paths)."""
    by_label = {lib.label: lib for lib in libs}
    for arm in result.get("arms", []):
        lib = by_label.get(arm.get("lib"))
        if lib is not None and isinstance(arm.get("library"), dict):
            arm["library"]["registered_name"] = lib.name
            arm["library"]["build_id"] = lib.build_id
    return result


# What each role's slice carries (the other role's values of these are ignored).
_RECEIVER_THR_KEYS = ("count", "receiver_seconds", "span_seconds", "delivery", "sent")


def _sum_counters(a: dict | None, b: dict | None) -> dict | None:
    if a is None or b is None:
        return a if b is None else b
    return {k: a[k] + b[k] for k in a if k in b}


def join_arms_roles(receiver: dict, sender: dict) -> dict:
    """One arms result from the two role lines of a two-process run: the receiver's
    throughput timing, the sender's latency, per slice the counters of both
    processes summed (events both counted) and each process's kept
    (`counters_by_role`); `role` = "joined". ValueError if the lines do not belong
    together (different cell, arms or slices)."""
    if receiver.get("role") != "receiver" or sender.get("role") != "sender":
        raise ValueError(f"join_arms_roles needs a receiver and a sender line, got roles "
                         f"{receiver.get('role')!r} and {sender.get('role')!r}")
    for key in ("schema", "pattern", "transport", "msg_size"):
        if receiver.get(key) != sender.get(key):
            raise ValueError(f"the two lines differ in {key}: {receiver.get(key)!r} vs {sender.get(key)!r}")
    if [a.get("label") for a in receiver.get("arms", [])] != [a.get("label") for a in sender.get("arms", [])]:
        raise ValueError("the two lines have different arms")
    rx_rounds, tx_rounds = receiver.get("rounds", []), sender.get("rounds", [])
    if [(r["kind"], r["round"], r["order"]) for r in rx_rounds] != \
            [(r["kind"], r["round"], r["order"]) for r in tx_rounds]:
        raise ValueError("the two lines' rounds differ (kind, round or order)")
    joined = json.loads(json.dumps(receiver))
    joined["role"] = "joined"
    rx_counters, tx_counters = receiver.get("counters") or {}, sender.get("counters") or {}
    events = [e for e in rx_counters.get("events", []) if e in set(tx_counters.get("events", []))]
    joined["counters"] = {**rx_counters, "events": events,
                          "by_role": {"receiver": rx_counters, "sender": tx_counters}}
    for jr, tr in zip(joined["rounds"], tx_rounds):
        for js, ts in zip(jr["slices"], tr["slices"]):
            rx_slice_counters = js.get("counters")
            for key, value in ts.items():
                if key not in _RECEIVER_THR_KEYS or js["kind"] == "lat":
                    js[key] = value
            js["counters_by_role"] = {"receiver": rx_slice_counters, "sender": ts.get("counters")}
            summed = _sum_counters(rx_slice_counters, ts.get("counters"))
            js["counters"] = None if summed is None else {e: summed[e] for e in events if e in summed}
    rv, sv = receiver.get("verify", {}), sender.get("verify", {})
    joined["verify"] = {**rv, "ok": bool(rv.get("ok")) and bool(sv.get("ok")),
                        "lat_received": sv.get("lat_received"), "lat_expected": sv.get("lat_expected")}
    joined["threads"] = ([{**t, "process": "receiver"} for t in receiver.get("threads", [])]
                         + [{**t, "process": "sender"} for t in sender.get("threads", [])])
    joined["sender_settings"] = sender.get("settings")
    joined["sender_libs"] = sender.get("libs")
    for arm, sender_arm in zip(joined.get("arms", []), sender.get("arms", [])):
        arm["sender_library"] = sender_arm.get("library")
        arm["sender_library_reports"] = sender_arm.get("library_reports")
    return joined


@dataclass
class ArmsRun:
    receiver: BenchRun | None  # two-process runs
    sender: BenchRun | None
    one: BenchRun | None       # one-process runs
    result: dict | None        # the (joined) arms result when every process exited 0


def run_arms(argv: list[str] | None = None, receiver_argv: list[str] | None = None,
             sender_argv: list[str] | None = None, timeout_s: float = 600) -> ArmsRun:
    """Runs one arms run: `argv` (one process) or the two role argvs (two processes)."""
    if argv is not None:
        run = run_bench(argv, timeout_s)
        return ArmsRun(None, None, run, run.result if run.exit_code == 0 else None)
    if receiver_argv is None or sender_argv is None:
        raise ValueError("run_arms needs argv, or receiver_argv and sender_argv")
    pair = run_two_process(receiver_argv, sender_argv, timeout_s, join=join_arms_roles)
    return ArmsRun(pair.receiver, pair.sender, None, pair.result)
