"""One run of one cell: the bound process, a proxy in front of it, the connecting
process through the proxy; the fault applied at its time and cleared at its end;
then every process waited for (a hang is killed and named), and the logs added up.

Which side binds: the receiver (PAIR, PULL, ROUTER, REP: the usual server), except
PUB/SUB where the publisher binds. A kill fault kills the bound side and starts a
new one (the next epoch) on the same port.
"""

from __future__ import annotations

import random
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import accounting, timing
from .config import Cell, Fault, FaultsExperiment
from .driver import Driver
from .proxy import Toxiproxy
from .records import read_events, read_records

STREAMS = {"both": ("upstream", "downstream"), "upstream": ("upstream",), "downstream": ("downstream",)}


class CellError(RuntimeError):
    pass


def bound_role(pattern: str) -> str:
    return "send" if pattern == "PUB_SUB" else "recv"


def driver_args(exp: FaultsExperiment, cell: Cell, times: dict) -> list[str]:
    t = exp.traffic
    args = [
        "--pattern",
        cell.pattern,
        "--security",
        cell.security,
        "--size",
        f"{t.size_min}:{t.size_max}",
        "--rate",
        f"{t.rate:g}",
        "--poll-ms",
        str(t.poll_ms),
        "--request-timeout",
        str(t.request_timeout_ms),
        "--retries",
        str(t.retries),
        "--start-at",
        str(times["start_at"]),
        "--send-until",
        str(times["send_until"]),
        "--until",
        str(times["until"]),
    ]
    if t.linger_ms is not None:
        args += ["--linger", str(t.linger_ms)]
    if cell.heartbeat == "on":
        hb = exp.heartbeat
        args += ["--heartbeat", f"{hb.ivl_ms}:{hb.timeout_ms}:{hb.ttl_ms}"]
    return args


def timeline(exp: FaultsExperiment, now_ns: int, stretch_s: float = 0.0) -> dict:
    """stretch_s: added to the fault's length (fault_stretch)."""
    s = exp.schedule
    ns = lambda seconds: int(seconds * 1e9)  # noqa: E731
    start = now_ns + ns(s.startup_s)
    fault_start = start + ns(s.warmup_s)
    fault_end = fault_start + ns(s.fault_s + stretch_s)
    send_until = fault_end + ns(s.recover_s)
    return {
        "spawn": now_ns,
        "start_at": start,
        "fault_start": fault_start,
        "fault_end": fault_end,
        "send_until": send_until,
        "until": send_until + ns(s.drain_s),
    }


def draw_key(seed: int, cell: Cell, rep: int) -> str:
    """What a cell run's seeded draws come from: the run's seed (its manifest's), the
    cell and the repetition. Not the library: both libraries of a pair draw the same;
    a resumed run (the same seed) too; another run draws afresh."""
    return f"{seed}#{cell.key()}#{rep}"


def fault_stretch(exp: FaultsExperiment, cell: Cell, rep: int, seed: int) -> float:
    """What a cell run's fault lasts beyond fault_s: uniform in [0, fault_jitter_s),
    drawn from draw_key. With a fault of a fixed length, a library whose reconnect
    waits repeat the same way every time (libzmq 4.3.5's rand() is never seeded)
    meets the restarted peer at the same point of its retry cycle in every
    repetition, and the timing verdict measures that point, not the library."""
    if exp.schedule.fault_jitter_s <= 0:
        return 0.0
    return random.Random(draw_key(seed, cell, rep)).uniform(0.0, exp.schedule.fault_jitter_s)


def rand_seed(base: str, role: str, epoch: int) -> int:
    """The seed a driver process gives srand() (experiment.toml [traffic] seed_rand):
    one per role and epoch of a cell run (base: draw_key) or soak pair, the same for
    both libraries of a pair, so libzmq's reconnect waits are an independent draw in
    every process instead of the one sequence its unseeded rand() gives every process."""
    return random.Random(f"{base}#{role}#{epoch}").getrandbits(32)


@dataclass
class Pair:
    """The processes of one cell, in start order, and the proxy between them."""

    binary: Path
    work: Path
    proxy: Toxiproxy
    proxy_name: str
    processes: list[Driver] = field(default_factory=list)
    starts: dict[int, int] = field(default_factory=dict)  # id(driver) -> start time ns
    bound_port: str = ""
    listen: str = ""  # the proxy's address, where the connecting side connects
    args: list[str] = field(default_factory=list)  # what every process of the pair is given
    bound: str = "recv"  # the role that binds
    rand_seed_base: str | None = None  # set: every process seeds rand() (rand_seed)

    def bound_process(self) -> Driver:
        return [d for d in self.processes if d.role == self.bound][-1]

    def restart_bound(self) -> Driver:
        """The killed bound side again, as the next epoch, on the same port, sending
        (if it sends) from now on."""
        args = [*self.args, "--bind", f"tcp://127.0.0.1:{self.bound_port}"]
        args[args.index("--start-at") + 1] = str(time.monotonic_ns())
        return self.start(args, self.bound, self.bound_process().epoch + 1)

    def begin_fault(self, fault: Fault) -> list[str]:
        """Toxics first (a slow close must be in place before the kill), then the
        process action; returns the toxics' names."""
        added = apply_fault(self.proxy, self.proxy_name, fault)
        if fault.kill:
            self.bound_process().kill()
        if fault.freeze:
            self.bound_process().signal(signal.SIGSTOP)
        return added

    def end_fault(self, fault: Fault, added: list[str]) -> None:
        for tname in added:
            self.proxy.remove_toxic(self.proxy_name, tname)
        self.end_action(fault)

    def end_action(self, fault: Fault) -> None:
        """The process half of ending a fault: the killed side restarted, the frozen one
        resumed."""
        if fault.kill:
            self.restart_bound()
        if fault.freeze:
            self.bound_process().signal(signal.SIGCONT)

    def open(self, proxy_name: str) -> None:
        """The bound side, the proxy in front of it, the connecting side through it."""
        first = self.start([*self.args, "--bind", "tcp://127.0.0.1:0"], self.bound, 1)
        line = first.wait_line("BOUND ", 10)
        if not line:
            raise CellError(
                f"the bound {self.bound} process never reported its endpoint "
                f"({first.stderr.read_text(errors='replace')[-300:]!r})"
            )
        self.bound_port = line.split(" ", 1)[1].strip().rsplit(":", 1)[1]
        self.listen = self.proxy.create(proxy_name, f"127.0.0.1:{self.bound_port}")
        self.start(
            [*self.args, "--connect", f"tcp://{self.listen}"], "recv" if self.bound == "send" else "send", 1
        )

    def reopen_proxy(self) -> None:
        """The proxy again, on the address the connecting side reconnects to (after a
        restart of a wedged server, which took every proxy and connection with it)."""
        self.proxy.create(self.proxy_name, f"127.0.0.1:{self.bound_port}", listen=self.listen)

    def start(self, args: list[str], role: str, epoch: int) -> Driver:
        if self.rand_seed_base is not None:
            args = [*args, "--seed-rand", str(rand_seed(self.rand_seed_base, role, epoch))]
        d = Driver.start(self.binary, args, role, epoch, self.work)
        if self.rand_seed_base is not None:
            d.rand_seed = int(args[args.index("--seed-rand") + 1])
        self.processes.append(d)
        self.starts[id(d)] = time.monotonic_ns()
        return d

    def finish(self, times: dict, exp: FaultsExperiment) -> None:
        """Wait for every process to end by itself: until + linger + grace; later is a hang."""
        deadline = (
            time.monotonic()
            + (times["until"] - time.monotonic_ns()) / 1e9
            + exp.schedule.grace_s
            + (exp.traffic.linger_ms or 0) / 1000
        )
        for d in self.processes:
            d.finish(deadline)

    def stop_all(self) -> None:
        for d in self.processes:
            d.kill()


def apply_fault(proxy: Toxiproxy, name: str, fault: Fault) -> list[str]:
    """Add the fault's toxics (both directions where asked); returns their names."""
    added = []
    for i, toxic in enumerate(fault.toxics):
        for stream in STREAMS[toxic.stream]:
            tname = f"{toxic.kind}-{i}-{stream}"
            proxy.add_toxic(name, tname, toxic.kind, stream, toxic.attributes)
            added.append(tname)
    return added


def sleep_until(t_ns: int) -> None:
    left = (t_ns - time.monotonic_ns()) / 1e9
    if left > 0:
        time.sleep(left)


def run(
    exp: FaultsExperiment,
    cell: Cell,
    binary: Path,
    proxy: Toxiproxy,
    work: Path,
    tag: str,
    rep: int,
    seed: int,
) -> dict:
    """Run the cell once; returns its record (accounting, timing, resources, processes)."""
    # The logs are appended to: a folder left by an interrupted earlier attempt would
    # add its messages to this run's.
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    fault = exp.faults[cell.fault]
    times = timeline(exp, time.monotonic_ns(), fault_stretch(exp, cell, rep, seed))
    args = driver_args(exp, cell, times)
    pair = Pair(
        binary,
        work,
        proxy,
        f"cell-{tag}",
        args=args,
        bound=bound_role(cell.pattern),
        rand_seed_base=draw_key(seed, cell, rep) if exp.traffic.seed_rand else None,
    )
    marks: dict[str, int] = {}
    try:
        pair.open(pair.proxy_name)
        sleep_until(times["fault_start"])
        marks["fault_start"] = time.monotonic_ns()
        added = pair.begin_fault(fault)
        if fault.kill:
            # The killed process reaped: its sockets are closed from here on. What
            # detection takes beyond this is the survivor's (and the proxy's) part.
            marks["peer_gone"] = time.monotonic_ns()
        sleep_until(times["fault_end"])
        pair.end_fault(fault, added)
        marks["fault_end"] = time.monotonic_ns()
        pair.finish(times, exp)
    finally:
        pair.stop_all()
        try:
            proxy.delete(pair.proxy_name)
        except Exception:  # noqa: BLE001 - it may not exist yet; the runner resets the server on errors
            pass
    return summarize(exp, cell, pair, {**times, **marks})


def summarize(exp: FaultsExperiment, cell: Cell, pair: Pair, times: dict) -> dict:
    procs = pair.processes
    sends = [d for d in procs if d.role == "send"]
    recvs = [d for d in procs if d.role == "recv"]
    fault_start, fault_end = times.get("fault_start"), times.get("fault_end")
    if cell.pattern == "REQ_REP":
        acc = accounting.reqrep(
            [read_records(d.log) for d in sends], [read_records(d.log) for d in recvs], fault_start, fault_end
        )
    else:
        killed = {d.epoch for d in sends if d.killed_by_us and not d.hung}
        acc = accounting.stream(
            [read_records(d.log) for d in sends],
            [read_records(d.log) for d in recvs],
            killed,
            fault_start,
            fault_end,
        )
    events = [(pair.starts[id(d)], read_events(d.events)) for d in procs]
    outcomes = [d.outcome() for d in procs]
    delivery = [read_records(d.log) for d in (sends if cell.pattern == "REQ_REP" else recvs)]
    timed: dict = {"detect_ms": None, "reconnect_ms": None, "resume_ms": None}
    if fault_start is not None and fault_end is not None:
        timed = {
            **timing.detect(events, fault_start, times["send_until"]),
            "reconnect_ms": timing.reconnect(events, fault_end),
            "resume_ms": timing.resume(delivery, fault_end, cell.pattern == "REQ_REP"),
        }
        if times.get("peer_gone") is not None:
            timed["peer_gone_ms"] = (times["peer_gone"] - fault_start) / 1e6
    return {
        "cell": {
            "pattern": cell.pattern,
            "security": cell.security,
            "heartbeat": cell.heartbeat,
            "fault": cell.fault,
        },
        "accounting": acc,
        "timing": timed,
        "resources": timing.resources(events, [o["summary"] for o in outcomes if "summary" in o]),
        "abort": any("signal" in o for o in outcomes),
        "hang": any(o["hung"] for o in outcomes),
        "errors": [o for o in outcomes if (o["exit"] or 0) > 0],
        "processes": outcomes,
        "times_ns": {k: v - times["spawn"] for k, v in times.items() if k != "spawn"},
    }
