"""Choosing a notebook kernel's pyzmq (`./testbed test --only zlink-kernel`): the
environment's settings are checked, the kernel's path puts only the chosen `zmq`
first, and a kernel is accepted only when its memory map shows the expected
libzmq (here checked on this test process, which maps the environment's pyzmq)."""
from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
import zmq

from testbed.toolchain import notebook_kernel as nk


def test_no_choice_without_the_variable_and_clear_errors_for_half_a_choice(tmp_path):
    assert nk.from_environ({}) is None
    with pytest.raises(ValueError, match=nk.LIBZMQ_ENV):
        nk.from_environ({nk.ZMQ_ENV: str(tmp_path)})
    with pytest.raises(ValueError, match="not a zmq package"):
        nk.from_environ({nk.ZMQ_ENV: str(tmp_path), nk.LIBZMQ_ENV: "/x/libzmq.so.5"})


def test_the_kernel_path_starts_with_the_chosen_zmq_only(tmp_path):
    package = tmp_path / "venv" / "zmq"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    choice = nk.from_environ({nk.ZMQ_ENV: str(package), nk.LIBZMQ_ENV: "/opt/zlink/lib/libzmq.so.5"})
    env = nk.kernel_env(choice, {"PYTHONPATH": "/repo/analysis"}, tmp_path)
    shim, rest = env["PYTHONPATH"].split(os.pathsep)
    assert rest == "/repo/analysis" and os.listdir(shim) == ["zmq"]
    assert os.path.realpath(os.path.join(shim, "zmq")) == str(package.resolve())
    assert env["LD_LIBRARY_PATH"] == "/opt/zlink/lib"


def _kernel(pid: int):
    return SimpleNamespace(provisioner=SimpleNamespace(process=SimpleNamespace(pid=pid)))


def test_a_kernel_is_accepted_only_on_the_libzmq_it_maps(tmp_path):
    assert zmq.zmq_version()  # this process runs the environment's pyzmq and its libzmq
    mapped = nk.mapped_libzmq(os.getpid())
    assert len(mapped) == 1
    log = tmp_path / "kernels.log"
    nk.verify(nk.KernelPyzmq(tmp_path, Path(mapped[0]), log), _kernel(os.getpid()))
    assert log.read_text() == f"{os.getpid()}\t{mapped[0]}\n"
    other = nk.KernelPyzmq(tmp_path, Path("/opt/zlink/lib/libzmq.so.5.2.5"))
    with pytest.raises(nk.KernelLibraryMismatch, match="not /opt/zlink/lib/libzmq.so.5.2.5"):
        nk.verify(other, _kernel(os.getpid()))
    with pytest.raises(nk.KernelLibraryMismatch, match="no local process"):
        nk.verify(other, SimpleNamespace(provisioner=None))


def test_the_hook_keeps_a_mismatch_for_after_the_run(tmp_path):
    wrong = nk.KernelPyzmq(tmp_path, Path("/opt/zlink/lib/libzmq.so.5.2.5"))
    check = nk.Check(wrong, _kernel(os.getpid()))
    check.raise_mismatch()  # nothing checked yet: nothing to raise here
    with pytest.raises(nk.KernelLibraryMismatch, match="never checked"):
        check.raise_unverified()
    check(notebook=None)  # as nbclient calls it: must not raise inside nbclient
    with pytest.raises(nk.KernelLibraryMismatch, match="maps"):
        check.raise_mismatch()
