"""A notebook kernel on a chosen pyzmq build (`./testbed test --only zlink-kernel`):
Jupyter is a real application of libzmq (the kernel serves its shell, iopub,
control and heartbeat channels over pyzmq), so executing the project's notebooks
through a kernel whose pyzmq is compiled against zlink tests zlink as users meet it.

Chosen through the environment, so the notebook tests run unchanged on it:
  TESTBED_KERNEL_ZMQ     the `zmq` package folder of a pyzmq build (it goes first on
                         the kernel's PYTHONPATH, ahead of the environment's own pyzmq)
  TESTBED_KERNEL_LIBZMQ  the libzmq.so.5 that build must run on (its folder goes first
                         on LD_LIBRARY_PATH); once the kernel answers, its
                         /proc/PID/maps must show exactly this file, else the
                         execution fails: a loader path gone wrong would otherwise
                         run the notebooks on the bundled libzmq under zlink's name
  TESTBED_KERNEL_LOG     optional: one line per verified kernel is appended here, so
                         the caller can count that the check ran
Only the kernel changes; the client side (nbclient) keeps the environment's pyzmq."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ZMQ_ENV, LIBZMQ_ENV, LOG_ENV = "TESTBED_KERNEL_ZMQ", "TESTBED_KERNEL_LIBZMQ", "TESTBED_KERNEL_LOG"


class KernelLibraryMismatch(RuntimeError):
    """The kernel process runs on another libzmq.so.5 than the one asked for."""


@dataclass(frozen=True)
class KernelPyzmq:
    zmq_package: Path
    libzmq: Path
    log: Path | None = None


def from_environ(environ=os.environ) -> KernelPyzmq | None:
    if not environ.get(ZMQ_ENV):
        return None
    if not environ.get(LIBZMQ_ENV):
        raise ValueError(f"{ZMQ_ENV} is set but {LIBZMQ_ENV} (the libzmq.so.5 to expect) is not")
    package = Path(environ[ZMQ_ENV]).resolve()  # the kernel runs in another folder
    if not (package / "__init__.py").is_file():
        raise ValueError(f"{ZMQ_ENV}={package} is not a zmq package folder")
    log = Path(environ[LOG_ENV]) if environ.get(LOG_ENV) else None
    return KernelPyzmq(package, Path(os.path.realpath(environ[LIBZMQ_ENV])), log)


def kernel_env(choice: KernelPyzmq, env: dict, scratch: Path) -> dict:
    """`env` for a kernel that imports choice's zmq: a folder holding only a link to
    that package (not the whole build venv, whose other packages would shadow the
    environment's) goes first on PYTHONPATH."""
    shim = scratch / "kernel-pyzmq"
    shim.mkdir(exist_ok=True)
    (shim / "zmq").symlink_to(choice.zmq_package, target_is_directory=True)

    def first(name: str, entry: str) -> str:
        return os.pathsep.join([entry] + ([env[name]] if env.get(name) else []))

    return dict(env, PYTHONPATH=first("PYTHONPATH", str(shim)),
                LD_LIBRARY_PATH=first("LD_LIBRARY_PATH", str(choice.libzmq.parent)))


def mapped_libzmq(pid: int) -> list[str]:
    """The libzmq.so.5 files process `pid` has mapped (the bundled wheel's copy is
    named libzmq-<hash>.so..., so it shows up as a mismatch too)."""
    words = Path(f"/proc/{pid}/maps").read_text().split()
    return sorted({w for w in words if "/" in w and os.path.basename(w).startswith(("libzmq.so", "libzmq-"))})


def verify(choice: KernelPyzmq, km) -> None:
    """Raise unless the running kernel of `km` maps exactly choice's libzmq.so.5."""
    process = getattr(km.provisioner, "process", None) if km.provisioner else None
    if process is None:
        raise KernelLibraryMismatch("the kernel has no local process to inspect")
    found = mapped_libzmq(process.pid)
    if found != [str(choice.libzmq)]:
        raise KernelLibraryMismatch(f"kernel pid {process.pid} maps {found or 'no libzmq'}, "
                                    f"not {choice.libzmq}")
    if choice.log is not None:
        with open(choice.log, "a") as sink:
            sink.write(f"{process.pid}\t{found[0]}\n")


class Check:
    """nbclient's on_notebook_start hook: verify() once the kernel answers. A mismatch
    is kept and raised by raise_mismatch() after the run, not from inside the hook,
    where an exception leaves nbclient's exit handler to hang on the dead kernel."""

    def __init__(self, choice: KernelPyzmq, km):
        self.choice, self.km = choice, km
        self.verified = False
        self.error: KernelLibraryMismatch | None = None

    def __call__(self, notebook=None) -> None:
        try:
            verify(self.choice, self.km)
            self.verified = True
        except KernelLibraryMismatch as exc:
            self.error = exc

    def raise_mismatch(self) -> None:
        if self.error is not None:
            raise self.error

    def raise_unverified(self) -> None:
        """After a run that otherwise succeeded: the hook must have run."""
        if not self.verified:
            raise KernelLibraryMismatch("the kernel's libzmq was never checked")
