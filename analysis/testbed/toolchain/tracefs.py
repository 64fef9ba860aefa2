"""tracefs, where the syscall tracepoints' ids live (bench/arms/counters.cpp reads
/sys/kernel/tracing/events/<group>/<name>/id; perf's `syscalls:` events need it too).

Why a module: a fresh Debian host boots with tracefs unmounted, and then counting runs
count no system call at all (a 2026-12-03 security-cost run on a fresh machine: "no
tracefs id for raw_syscalls/sys_enter"). Mounting it is one root command and changes
nothing else on the host, so the testbed does it where it needs it (setup, and every
run with counting runs) instead of telling each user to."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

MOUNT_POINT = Path("/sys/kernel/tracing")
# The two places kernels put it: its own mount point, and under debugfs (older setups).
ROOTS = (MOUNT_POINT, Path("/sys/kernel/debug/tracing"))
PROBE_EVENT = "raw_syscalls/sys_enter"  # what counters.cpp asks for first


def readable(roots=ROOTS) -> bool:
    return any((root / "events" / PROBE_EVENT / "id").is_file() for root in roots)


def ensure(roots=ROOTS, mount_point: Path = MOUNT_POINT, *, is_root: bool | None = None,
           mount=subprocess.run) -> tuple[bool, str]:
    """Make the tracepoint ids readable if it can. Returns (mounted now, why not) where
    why not is "" when they are readable: already, or after mounting tracefs (root only)."""
    if readable(roots):
        return False, ""
    root_user = os.geteuid() == 0 if is_root is None else is_root
    how = f"mount -t tracefs nodev {mount_point}"
    if not root_user:
        return False, f"tracefs is not mounted and only root can mount it (run `sudo {how}`)"
    if not mount_point.is_dir():
        return False, f"{mount_point} does not exist: this kernel has no tracefs to mount"
    try:
        done = mount(how.split(), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"`{how}` could not run: {exc}"
    if done.returncode != 0:
        return False, f"`{how}` failed: {(done.stderr or done.stdout).strip() or f'exit {done.returncode}'}"
    if not readable(roots):
        return True, f"tracefs mounted at {mount_point}, but it has no {PROBE_EVENT} tracepoint"
    return True, ""
