"""Facts about the host a run measures on: kernel, CPU, cores, governor, tools, git.

Host facts are read where the kernel exposes them; what cannot be read is recorded
as null rather than guessed.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from testbed import paths
from testbed.toolchain.system import CARGO_TOOLS, tool_path


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cmd(argv: list[str]) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0] if text else None


def cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def turbo() -> str | None:
    no_turbo = _read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo is not None:
        return "off" if no_turbo == "1" else "on"
    boost = _read("/sys/devices/system/cpu/cpufreq/boost")
    if boost is not None:
        return "on" if boost == "1" else "off"
    return None


def loopback_settings() -> dict:
    """The host settings behind two-mode loopback round trips (docs/profiling
    2026-12-04-ipc-split-modes.md, 2026-12-05-tcp-pacing-modes.md): the TCP congestion
    control (bbr paces loopback segments with a timer), and the idle policy (a vCPU that
    halts at once, guest_halt_poll_ns 0, costs a wake-up from halt). None where the
    kernel has no such file."""
    return {
        "tcp_congestion_control": _read("/proc/sys/net/ipv4/tcp_congestion_control"),
        "default_qdisc": _read("/proc/sys/net/core/default_qdisc"),
        "cpuidle_driver": _read("/sys/devices/system/cpu/cpuidle/current_driver"),
        "cpuidle_governor": _read("/sys/devices/system/cpu/cpuidle/current_governor_ro")
        or _read("/sys/devices/system/cpu/cpuidle/current_governor"),
        "guest_halt_poll_ns": _read("/sys/module/haltpoll/parameters/guest_halt_poll_ns"),
    }


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def host() -> dict:
    return {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "cores_allowed": len(os.sched_getaffinity(0)),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "turbo": turbo(),
        "perf_event_paranoid": _read("/proc/sys/kernel/perf_event_paranoid"),
        "memory_kb": next((int(line.split()[1]) for line in (_read("/proc/meminfo") or "").splitlines()
                           if line.startswith("MemTotal")), None),
        "loopback": loopback_settings(),
        "load_before": load_average(),
        "load_after": None,
    }


def git_state() -> dict:
    root = str(paths.REPO_ROOT)
    commit = _cmd(["git", "-C", root, "rev-parse", "HEAD"])
    status = None
    if commit:
        proc = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                              capture_output=True, text=True)
        status = proc.stdout.strip() if proc.returncode == 0 else None
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def _inferno_version() -> str | None:
    # inferno-flamegraph has no --version; setup installs the pinned one into build/tools.
    path = tool_path("inferno-flamegraph")
    pinned = next(t.version for t in CARGO_TOOLS if t.crate == "inferno")
    if not path:
        return None
    return f"inferno {pinned} (build/tools)" if str(paths.TOOLS_DIR) in path else f"inferno at {path}"


def tool_versions() -> dict:
    return {
        "python": sys.version.split()[0],
        "perf": _cmd(["perf", "--version"]),
        "hyperfine": _cmd(["hyperfine", "--version"]),
        "taskset": _cmd(["taskset", "--version"]),
        "inferno": _inferno_version(),
        "gcc": _cmd(["gcc", "--version"]),
        "cmake": _cmd(["cmake", "--version"]),
    }
