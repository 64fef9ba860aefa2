"""The binary drop-in check: libzmq 4.3.5's own perf tools (perf/local_thr,
remote_thr, local_lat, remote_lat of the pinned tree), compiled and linked once
against the libzmq-4.3.5 baseline, run unchanged with LD_LIBRARY_PATH pointing at a
library's lib/ folder, so the loader picks that library's libzmq.so.5 instead.

Each check is one thr or lat pair over tcp or ipc. It passes only when both
programs exit 0, print sane figures (the requested count, a positive rate or
latency), and the loader really mapped the library under test: the listener's
/proc/<pid>/maps and both programs' LD_DEBUG=libs traces must name that folder's
libzmq.so.5 (an rpath or a cached loader decision could otherwise silently test
libzmq against itself).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from testbed.suites.libzmq_suite_build import SUITE_BUILD_DIR
from testbed.suites.libzmq_suite_run import FAIL, PASS, SIGNAL, TIMEOUT, TestOutcome
from testbed.toolchain import baselines, buildcache, keys, sources
from testbed.toolchain.progress import Progress

TOOLS = ("local_thr", "remote_thr", "local_lat", "remote_lat")
SONAME = "libzmq.so.5"
MESSAGE_SIZE = 64
COUNTS = {"thr": 100_000, "lat": 2_000}
LIMIT_SECONDS = 30.0


@dataclass(frozen=True)
class Check:
    kind: str        # thr | lat
    transport: str   # tcp | ipc

    @property
    def name(self) -> str:
        return f"dropin_{self.kind}_{self.transport}"


CHECKS = tuple(Check(kind, transport) for transport in ("tcp", "ipc") for kind in ("thr", "lat"))
CHECK_NAMES = frozenset(c.name for c in CHECKS)


def provides_soname(prefix: Path) -> bool:
    return (prefix / "lib" / SONAME).exists()


def build_tools(baseline, progress: Progress) -> Path:
    """The four tools, linked against `baseline` (a LibraryBuild of libzmq-4.3.5); -> bin dir."""
    pin = baselines.pinned()
    baseline_id = baseline.info.get("build_id") or str(baseline.prefix)
    key = keys.build_key(kind="libzmq-perf-tools", source=pin["libzmq"]["nar_hash"],
                         tools=keys.toolchain_id(), baseline=baseline_id)

    def build(work: Path) -> None:
        src = sources.libzmq_source(pin, progress)
        (work / "stage" / "perf").mkdir(parents=True)
        (work / "stage" / "include").mkdir()
        shutil.copy2(baseline.prefix / "include" / "zmq.h", work / "stage" / "include" / "zmq.h")
        (work / "bin").mkdir()
        lib = baseline.prefix / "lib"
        for tool in TOOLS:
            source = work / "stage" / "perf" / f"{tool}.cpp"
            shutil.copy2(src / "perf" / f"{tool}.cpp", source)
            cmd = [keys.cxx_compiler(), "-O2", str(source), f"-L{lib}", f"-Wl,-rpath,{lib}", "-lzmq",
                   "-pthread", "-o", str(work / "bin" / tool)]
            progress.run(cmd, cwd=work, log=work / "build.log",
                         title=f"libzmq perf/{tool} (against {baseline.name})")
        (work / "done").write_text(key + "\n")

    return buildcache.cached(SUITE_BUILD_DIR / "perf-tools", key, "done", build) / "bin"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _endpoints(check: Check, scratch: Path) -> tuple[str, str]:
    if check.transport == "tcp":
        port = _free_port()
        return f"tcp://127.0.0.1:{port}", f"tcp://127.0.0.1:{port}"
    return f"ipc://{scratch}/perf.ipc", f"ipc://{scratch}/perf.ipc"


def mapped_soname(maps_text: str) -> str | None:
    """The file behind libzmq.so.5 in a /proc/<pid>/maps text, if it is mapped."""
    for line in maps_text.splitlines():
        path = line.split(maxsplit=5)[5] if len(line.split(maxsplit=5)) == 6 else ""
        if Path(path).name.startswith(SONAME):
            return path
    return None


def _wait_for_mapping(proc: subprocess.Popen, seconds: float = 5.0) -> str | None:
    """Read the listener's maps while it waits for its peer (the loader has long
    finished by then); None if it exited first (its LD_DEBUG trace still tells)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            found = mapped_soname(Path(f"/proc/{proc.pid}/maps").read_text())
        except OSError:
            return None
        if found:
            return found
        time.sleep(0.02)
    return None


_INIT = re.compile(r"calling init: (\S*libzmq\.so\.5\S*)")


def loader_inits(trace_dir: Path, role: str) -> list[str]:
    """The libzmq.so.5 paths the loader initialised, from LD_DEBUG_OUTPUT=<dir>/<role>.<pid>."""
    found = []
    for trace in sorted(trace_dir.glob(f"{role}.*")):
        found += _INIT.findall(trace.read_text(errors="replace"))
    return found


_FIGURES = {"thr": (re.compile(r"message count: (\d+)"), re.compile(r"mean throughput: (\d+) \[msg/s\]")),
            "lat": (re.compile(r"roundtrip count: (\d+)"), re.compile(r"average latency: ([0-9.]+) \[us\]"))}


def sane_figures(kind: str, output: str, count: int) -> str | None:
    """The figure as text ('123456 msg/s', '45.6 us') if the report is sane, else None."""
    count_re, figure_re = _FIGURES[kind]
    counted, figure = count_re.search(output), figure_re.search(output)
    if not counted or not figure or int(counted.group(1)) != count or float(figure.group(1)) <= 0:
        return None
    return f"{figure.group(1)} {'msg/s' if kind == 'thr' else 'us'}"


@dataclass
class _Pair:
    """The two processes of one check and what they printed."""
    local: subprocess.Popen
    remote: subprocess.Popen | None
    mapped: str | None
    codes: tuple[int | None, int | None] = (None, None)
    outputs: tuple[str, str] = ("", "")


def _env(prefix: Path, trace: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT")}
    return {**env, "LD_LIBRARY_PATH": str(prefix / "lib"), "LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(trace)}


def _spawn(cmd: list[str], env: dict, out: Path, cwd: Path) -> subprocess.Popen:
    with open(out, "wb") as sink:
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def _finish(procs: list[subprocess.Popen], deadline: float) -> list[int | None]:
    """Wait for each until the shared deadline (cut short once one has failed: its
    peer would wait forever); then kill every group (leftovers too)."""
    codes: list[int | None] = []
    for proc in procs:
        try:
            codes.append(proc.wait(timeout=max(0.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            codes.append(None)
        if codes[-1] not in (0, None):
            deadline = time.monotonic() + 1.0
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    return codes


def _run_pair(check: Check, tools: Path, prefix: Path, scratch: Path) -> _Pair:
    bind, connect = _endpoints(check, scratch)
    count, size = str(COUNTS[check.kind]), str(MESSAGE_SIZE)
    deadline = time.monotonic() + LIMIT_SECONDS
    local = _spawn([str(tools / f"local_{check.kind}"), bind, size, count],
                   _env(prefix, scratch / "ld-local"), scratch / "local.out", scratch)
    pair = _Pair(local, None, _wait_for_mapping(local))
    pair.remote = _spawn([str(tools / f"remote_{check.kind}"), connect, size, count],
                         _env(prefix, scratch / "ld-remote"), scratch / "remote.out", scratch)
    local_code, remote_code = _finish([local, pair.remote], deadline)
    pair.codes = (local_code, remote_code)
    read = [(scratch / f"{role}.out").read_text(errors="replace") for role in ("local", "remote")]
    pair.outputs = (read[0], read[1])
    return pair


def _loaded(pair: _Pair, scratch: Path) -> set[str]:
    paths = loader_inits(scratch, "ld-local") + loader_inits(scratch, "ld-remote")
    if pair.mapped:
        paths.append(pair.mapped)
    return {os.path.realpath(p) for p in paths}


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else "no output"


def judge_pair(check: Check, pair: _Pair, loaded: set[str], expected: str, seconds: float) -> TestOutcome:
    """One check's outcome from what the two processes did and what the loader mapped."""
    codes = pair.codes
    # Another library loaded is the check's first finding, finished or not: libzmq
    # 4.3.5's own thr pair over ipc sometimes never finishes on a loaded host
    # (local_thr waiting, remote_thr gone with exit 0: 2 of 63 and 2 of 80 tries at
    # load ~4, also when remote_thr waited for the ipc socket file), and such a hang
    # must not hide which library was loaded.
    if loaded and loaded != {expected}:
        return TestOutcome(check.name, FAIL, seconds, f"loaded {', '.join(sorted(loaded))}, not {expected}")
    if None in codes:
        return TestOutcome(check.name, TIMEOUT, seconds, f"not finished after {LIMIT_SECONDS:g} s; "
                                                         f"local: {_last_line(pair.outputs[0])}")
    if not loaded:
        return TestOutcome(check.name, FAIL, seconds,
                           f"cannot tell which {SONAME} was loaded (no maps, no trace)")
    for role, code, output in zip(("local", "remote"), codes, pair.outputs):
        program = f"{role}_{check.kind}"
        if code < 0:
            return TestOutcome(check.name, SIGNAL, seconds, f"{program}: {signal.Signals(-code).name}")
        if code != 0:
            detail = f"{program} exit {code}: {_last_line(output)} (with {expected})"
            return TestOutcome(check.name, FAIL, seconds, detail)
    reporter = pair.outputs[0] if check.kind == "thr" else pair.outputs[1]
    figure = sane_figures(check.kind, reporter, COUNTS[check.kind])
    if figure is None:
        return TestOutcome(check.name, FAIL, seconds, f"implausible report: {_last_line(reporter)}")
    return TestOutcome(check.name, PASS, seconds, f"{expected} loaded by both; {figure}")


def run_check(check: Check, tools: Path, prefix: Path, work: Path) -> TestOutcome:
    work.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"{check.name}.", dir=work))
    started = time.monotonic()
    pair = _run_pair(check, tools, prefix, scratch)
    outcome = judge_pair(check, pair, _loaded(pair, scratch), os.path.realpath(prefix / "lib" / SONAME),
                         time.monotonic() - started)
    shutil.rmtree(scratch, ignore_errors=True)
    return outcome
