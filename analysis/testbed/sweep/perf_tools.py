"""The `perf-tools` workload kind: libzmq 4.3.5's own perf programs, unmodified, as a
second judge beside the testbed's bench (experiments/perf-tools/README.md).

A cell is one program pair (PUSH_PULL: local_thr + remote_thr, or inproc_thr;
REQ_REP: local_lat + remote_lat, or inproc_lat: the socket pairs those programs
use) at one transport, size and placement. The programs are compiled once against the
libzmq-4.3.5 baseline (testbed.toolchain.perf_tools_build); each run picks the
library under test with LD_LIBRARY_PATH=<library>/lib, the folder holding its
libzmq.so.5, and the loader's own trace (LD_DEBUG=libs, start-up only) must show that
library initialised in every process, or the cell fails: a stale loader decision would
otherwise measure libzmq against itself.

Two processes as libzmq's docs run them: local_* binds (the receiving side, and the
echo side of the round trips), remote_* connects once local_* listens (remote_lat's
clock starts before its first send: a connect racing the bind would time the
reconnect interval). Placement is applied from outside with taskset, whole process
(the programs cannot pin their own threads): one-core puts both on the first CPU,
split the receiving side (local_*) on one CPU and the sending side on another, free
pins nothing. inproc programs are one process: split, which needs a CPU per thread,
cannot be given to them and fails with that cause.

The programs set no socket options: every library runs at its own defaults (HWM 1000,
one IO thread). What they print is parsed by perf_tools_output; a crash, a timeout, a
non-zero exit or a malformed report fails the cell with the cause and the sweep goes on.
"""
from __future__ import annotations

import functools
import os
import shutil
import time
from pathlib import Path

from testbed.bench import command
from testbed.sweep import adaptive, execute, placement, process
from testbed.sweep import perf as perfmod
from testbed.sweep import perf_tools_output as output
from testbed.sweep.config_perf_tools import PATTERNS, PROGRAMS
from testbed.sweep.plan import Cell

KIND = "perf-tools"
BASELINE = "libzmq-4.3.5"                            # the programs are compiled against it
SONAME = "libzmq.so.5"
LISTEN_WAIT_S = 5.0
OUTPUT_TAIL_CHARS = 1000
# What each family is judged on: its own figure (the other metric has no samples).
JUDGED = {"thr": ("throughput",), "lat": ("mean_latency",)}


def family(pattern: str) -> str:
    try:
        return PROGRAMS[pattern]
    except KeyError:
        raise ValueError(f"perf-tools cells have patterns {', '.join(PATTERNS)}, not {pattern!r}") from None


# ------------------------------------------------------------ command lines

def argvs(tools: Path, cell: Cell, count: int, endpoints: command.Endpoints | None) -> dict[str, list[str]]:
    """role -> the program's argv: receiver/sender (local_*/remote_*) or inproc."""
    fam, size = family(cell.pattern), str(cell.msg_size)
    if cell.transport == "inproc":
        return {"inproc": [str(tools / f"inproc_{fam}"), size, str(count)]}
    return {"receiver": [str(tools / f"local_{fam}"), endpoints.bind, size, str(count)],
            "sender": [str(tools / f"remote_{fam}"), endpoints.connect, size, str(count)]}


def role_cpus(cell: Cell, pins: placement.Pins) -> dict[str, str | None]:
    """The CPU list each role process is confined to (None: not pinned); ValueError
    when the placement cannot be given to the cell's programs."""
    if cell.transport != "inproc":
        return {"receiver": pins.receiver, "sender": pins.sender}
    if cell.placement == "split":
        raise ValueError("split needs a CPU per side, and the unmodified inproc programs cannot pin their "
                         "two threads apart (taskset pins a whole process)")
    return {"inproc": pins.sender}


def reporter(cell: Cell) -> str:
    """The role whose output carries the figures."""
    if cell.transport == "inproc":
        return "inproc"
    return "receiver" if family(cell.pattern) == "thr" else "sender"


def pinned(argv: list[str], cpus: str | None) -> list[str]:
    return ["taskset", "-c", cpus, *argv] if cpus else list(argv)


def library_env(params: dict, lib_dir: Path, trace: Path) -> dict[str, str]:
    env = execute.cell_env(params)
    for name in ("LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT"):
        env.pop(name, None)
    return {**env, "LD_LIBRARY_PATH": str(lib_dir), "LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(trace)}


# ------------------------------------------------------------ what the host says

def loader_inits(trace_dir: Path, role: str) -> set[str]:
    """Real paths of the libzmq.so.5 the loader initialised in a role's processes."""
    found = set()
    for trace in trace_dir.glob(f"{role}.*"):
        for line in trace.read_text(errors="replace").splitlines():
            if "calling init:" in line and SONAME in line:
                found.add(os.path.realpath(line.split("calling init:", 1)[1].strip()))
    return found


def listening(endpoint: str) -> bool:
    """Is the bind side of `endpoint` there yet (an ipc socket file, a tcp LISTEN entry)?"""
    scheme, _, where = endpoint.partition("://")
    if scheme == "ipc":
        return os.path.exists(where)
    port = f"{int(where.rsplit(':', 1)[1]):04X}"
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(f[1].endswith(":" + port) and f[3] == "0A" for f in (ln.split() for ln in lines) if len(f) > 3)


def wait_listening(proc: process.Proc, endpoint: str, seconds: float = LISTEN_WAIT_S) -> float:
    """Seconds waited until the receiver listens (or exits, or `seconds` pass)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds and proc.poll() is None and not listening(endpoint):
        time.sleep(0.005)
    return round(time.monotonic() - t0, 4)


def threads_of(pid: int, role: str) -> list[dict]:
    """Each thread's CPU list, as the bench reports it (placement.check_threads reads it)."""
    out = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        try:
            status = dict(ln.split(":", 1) for ln in (task / "status").read_text().splitlines() if ":" in ln)
        except OSError:
            continue
        out.append({"tid": int(task.name), "name": status.get("Name", "").strip(), "role": role,
                    "cpus": status.get("Cpus_allowed_list", "").strip()})
    return out


def _exec_done(proc: process.Proc, program: str, seconds: float = 1.0) -> None:
    """Wait until taskset has exec'd the program (its affinity is then the program's)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds and proc.poll() is None:
        try:
            if Path(f"/proc/{proc.popen.pid}/comm").read_text().strip() == program[:15]:
                return
        except OSError:
            return
        time.sleep(0.001)


# ------------------------------------------------------------ one cell

@functools.cache
def tools_dir() -> Path:
    """The programs' bin folder (built once per process, cached on disk by key)."""
    from testbed.toolchain import libraries
    from testbed.toolchain.perf_tools_build import build_tools
    from testbed.toolchain.progress import Progress
    progress = Progress()
    return build_tools(libraries.ensure_built(BASELINE, bench=False, progress=progress), progress)


@functools.cache
def library_dir(name: str) -> Path:
    from testbed.toolchain import libraries
    return libraries.find_built(name, bench=False).prefix / "lib"


def _role_failure(role: str, out: process.Outcome, program: str) -> str | None:
    status, failure = _status(out)
    if status == "ok":
        return None
    said = _last_line(out.stdout + "\n" + out.stderr)
    return f"{role} ({program}): {failure}" + (f"; it printed: {said}" if said else "")


def _status(out: process.Outcome) -> tuple[str, str]:
    if out.code is None:
        return "timeout", ("killed after the other process of this cell failed" if out.killed == "peer failed"
                           else "cell timeout (no exit within [run].timeout_s; killed)")
    if out.code < 0:
        return "failed", f"killed by signal {_signal_name(-out.code)}"
    if out.code != 0:
        return "failed", f"exit {out.code}"
    return "ok", ""


def _signal_name(number: int) -> str:
    import signal
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][-400:] if lines else ""


def judge_outputs(cell: Cell, count: int, outs: dict[str, process.Outcome], programs: dict[str, str],
                  loaded: dict[str, set[str]], expected: str) -> tuple[str, str, dict | None]:
    """(status, failure, result) of one cell from what its processes did."""
    problems = [p for role, out in outs.items() if (p := _role_failure(role, out, programs[role]))]
    if problems:
        status = "timeout" if all(_status(o)[0] in ("timeout", "ok") for o in outs.values()) else "failed"
        return status, "; ".join(problems), None
    for role, paths in loaded.items():
        if paths != {expected}:
            seen = ", ".join(sorted(paths)) or f"no {SONAME} in the loader trace"
            return "failed", f"{role} ({programs[role]}) loaded {seen}, not {expected}", None
    report = outs[reporter(cell)].stdout
    try:
        return "ok", "", output.parse(family(cell.pattern), report, cell.msg_size, count)
    except output.MalformedOutput as exc:
        return "failed", f"malformed output of {programs[reporter(cell)]}: {exc}; it printed: " \
                         f"{_last_line(report) or 'nothing'}", None


def run_cell(att: execute.Attempt, rt: execute.Runtime, counts: execute.Counts | None = None) -> dict:
    """One attempt of a perf-tools cell, as one result line (never raises for a bad run)."""
    counts, cell, started = counts or execute.declared_counts(att.cell), att.cell, execute.now()
    try:
        cpus = role_cpus(cell, placement.pins_for(cell.placement, rt.cpus))
    except ValueError as exc:
        return execute._unrunnable(att, counts, started, f"placement: {exc}")
    try:
        tools, lib_dir = tools_dir(), library_dir(cell.library_name)
    except Exception as exc:  # noqa: BLE001 - a missing build fails the cell, not the sweep
        why = f"perf tools: {type(exc).__name__}: {str(exc)[:300]}"
        return execute._unrunnable(att, counts, started, why)
    if not (lib_dir / SONAME).exists():
        why = f"{cell.library_name} provides no {SONAME} in {lib_dir}"
        return execute._unrunnable(att, counts, started, why)
    count = counts.count if family(cell.pattern) == "thr" else counts.lat_count
    scratch = rt.workdir / f"tools-{cell.cell_id}-{att.repetition}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        rec = _run(cell, rt, count, argvs(tools, cell, count, _endpoints(cell)), lib_dir, cpus, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {**execute.base_record(att, counts), **rec, "started_at": started}


def _endpoints(cell: Cell) -> command.Endpoints | None:
    return None if cell.transport == "inproc" else command.local_endpoints(cell.transport)


def _start(roles: dict[str, list[str]], programs: dict[str, str], env: dict, scratch: Path, cpus: dict,
           read_pins: bool):
    """Start the roles, the receiver first and the sender once it listens; -> (procs,
    seconds waited for the listener, the pinned threads read back from /proc)."""
    names = list(roles)
    first = process.Proc(roles[names[0]], env[names[0]], scratch)
    if names == ["inproc"]:
        return [first], None, []
    waited = wait_listening(first, _bind_of(roles["receiver"]))
    threads = threads_of(first.popen.pid, "receiver") if read_pins and cpus["receiver"] else []
    second = process.Proc(roles["sender"], env["sender"], scratch)
    if read_pins and cpus["sender"]:
        _exec_done(second, programs["sender"])
        threads += threads_of(second.popen.pid, "sender")
    return [first, second], waited, threads


def _bind_of(argv: list[str]) -> str:
    return next(a for a in argv if "://" in a)


def _run(cell: Cell, rt: execute.Runtime, count: int, programs_argv: dict[str, list[str]], lib_dir: Path,
         cpus: dict, scratch: Path) -> dict:
    roles = list(programs_argv)
    programs = {r: Path(programs_argv[r][0]).name for r in roles}
    perf_files = {r: scratch / f"perf-{r}.csv" for r in roles}
    full = {r: [*rt.perf.prefix(perf_files[r]), *pinned(programs_argv[r], cpus[r])] for r in roles}
    env = {r: library_env(cell.params, lib_dir, scratch / r) for r in roles}
    # Under perf stat the pid read back would be perf's, not the program's.
    procs, waited, threads = _start(full, programs, env, scratch, cpus, read_pins=not rt.perf.available)
    outs = dict(zip(roles, process.supervise(procs, rt.exp.timeout_s), strict=True))
    for r in roles:
        execute._signal_under_perf(outs[r], rt, rt.local, programs_argv[r][0])
    loaded = {r: loader_inits(scratch, r) for r in roles}
    status, failure, result = judge_outputs(cell, count, outs, programs, loaded,
                                            os.path.realpath(lib_dir / SONAME))
    per_role = {r: {"program": programs[r], "exit_code": outs[r].code, "killed": outs[r].killed or None,
                    "wall_seconds": round(outs[r].seconds, 4), "loaded": sorted(loaded[r]),
                    "stdout_tail": outs[r].stdout[-OUTPUT_TAIL_CHARS:], "perf": rt.perf.read(perf_files[r]),
                    "cpus": cpus[r]} for r in roles}
    pins = placement.Pins(sender=cpus.get("sender", cpus.get("inproc")),
                          receiver=cpus.get("receiver", cpus.get("inproc")))
    tail = execute.STDERR_TAIL_CHARS // 2
    code = next((o.code for o in outs.values() if o.code), None if failure else 0)
    return {"status": status, "exit_code": code,
            "stderr_tail": "\n".join(f"[{r}] {outs[r].stderr[-tail:]}" for r in roles),
            "wall_seconds": round(max(o.seconds for o in outs.values()), 4), "result": result,
            "perf": perfmod.combined([per_role[r]["perf"] for r in roles]), "failure": failure,
            "command": {r: full[r] for r in roles}, "pins": pins.as_dict(), "roles": per_role,
            "placement_check": _pin_check(pins, threads, cpus), "listen_wait_s": waited,
            "library_dir": str(lib_dir), "tool_count": count}


def _pin_check(pins: placement.Pins, threads: list[dict], cpus: dict) -> dict:
    if threads:
        return placement.check_threads(pins, threads)
    why = "inproc: taskset pins the one process; not read back" if any(cpus.values()) else "not pinned"
    return {"checked": 0, "ok": None, "mismatches": [], "reason": why}


# ------------------------------------------------------------ verdicts

class Judge(adaptive.Judge):
    """The adaptive judge, asked only about the metric each program family prints:
    throughput for PUSH_PULL (thr programs), the mean latency for REQ_REP (lat)."""

    def judge(self, group, records, excluded=frozenset()) -> list[dict]:
        everything, self.metrics = self.metrics, JUDGED[family(group.cells[0].pattern)]
        try:
            return super().judge(group, records, excluded)
        finally:
            self.metrics = everything


def judge_for(decider, design, reference: str) -> Judge:
    return Judge(decider, design, reference, ("throughput", "mean_latency"))
