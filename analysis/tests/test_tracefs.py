"""tracefs (toolchain/tracefs.py): the syscall tracepoints' ids readable, mounting tracefs
where the host has it unmounted (a fresh Debian boot does), or a reason that names the fix."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from testbed.toolchain import tracefs


def tracepoint_tree(root: Path) -> None:
    (root / "events" / tracefs.PROBE_EVENT).mkdir(parents=True)
    (root / "events" / tracefs.PROBE_EVENT / "id").write_text("21\n")


class FakeMount:
    """Stands in for `mount`: records the command and, like the kernel, fills the
    mount point (or fails with the kernel's message)."""

    def __init__(self, point: Path, fail: str = ""):
        self.point, self.fail, self.calls = point, fail, []

    def __call__(self, argv, **_):
        self.calls.append(argv)
        if self.fail:
            return subprocess.CompletedProcess(argv, 32, "", self.fail)
        tracepoint_tree(self.point)
        return subprocess.CompletedProcess(argv, 0, "", "")


def test_readable_ids_need_no_mount(tmp_path):
    tracepoint_tree(tmp_path / "debug")
    mount = FakeMount(tmp_path / "tracing")
    assert tracefs.ensure((tmp_path / "tracing", tmp_path / "debug"), tmp_path / "tracing",
                          is_root=True, mount=mount) == (False, "")
    assert mount.calls == []


def test_root_mounts_tracefs_where_it_is_missing(tmp_path):
    point = tmp_path / "tracing"
    point.mkdir()
    mount = FakeMount(point)
    assert tracefs.ensure((point,), point, is_root=True, mount=mount) == (True, "")
    assert mount.calls == [["mount", "-t", "tracefs", "nodev", str(point)]]


def test_a_failed_mount_says_the_command_and_the_kernels_answer(tmp_path):
    point = tmp_path / "tracing"
    point.mkdir()
    mounted, why = tracefs.ensure((point,), point, is_root=True,
                                  mount=FakeMount(point, fail="mount: permission denied"))
    assert not mounted and f"mount -t tracefs nodev {point}" in why and "permission denied" in why


def test_without_root_the_reason_names_the_command_and_nothing_runs(tmp_path):
    point = tmp_path / "tracing"
    point.mkdir()
    mount = FakeMount(point)
    mounted, why = tracefs.ensure((point,), point, is_root=False, mount=mount)
    assert not mounted and "sudo mount -t tracefs" in why and mount.calls == []


def test_no_mount_point_means_no_tracefs_in_this_kernel(tmp_path):
    mounted, why = tracefs.ensure((tmp_path / "none",), tmp_path / "none", is_root=True,
                                  mount=FakeMount(tmp_path / "none"))
    assert not mounted and "does not exist" in why


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting tracefs needs root (CI runs as root)")
def test_on_this_host_the_syscall_tracepoint_ids_are_readable_after_ensure():
    """The real thing: what the counting runs need, on the host the tests run on."""
    mounted, why = tracefs.ensure()
    assert why == "" and tracefs.readable()
