"""Ask a built libzmq-compatible library what it supports (zmq_has), in a child
process so loading it can never disturb or crash the builder."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_PROBE = (
    "import ctypes, sys\n"
    "lib = ctypes.CDLL(sys.argv[1])\n"
    "lib.zmq_has.argtypes = [ctypes.c_char_p]\n"
    "lib.zmq_has.restype = ctypes.c_int\n"
    "print(lib.zmq_has(sys.argv[2].encode()))\n"
)


class CapabilityError(Exception):
    pass


def zmq_has(library: Path, capability: str) -> bool:
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(library), capability],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise CapabilityError(f"could not call zmq_has in {library}: {proc.stderr.strip()[-400:]}")
    return proc.stdout.strip() == "1"


def check_curve(library: Path, expected: bool, name: str) -> None:
    """The CURVE pitfall: libzmq's CMake builds WITHOUT CURVE when it cannot find
    libsodium, printing only a message. So the flavour is checked on the result."""
    actual = zmq_has(library, "curve")
    if actual != expected:
        want = "with" if expected else "without"
        got = "has" if actual else "lacks"
        hint = " (libzmq's CMake did not find libsodium?)" if expected else ""
        raise CapabilityError(
            f'{name}: {library} {got} CURVE (zmq_has("curve")={int(actual)}) '
            f"but the flavour asks for a build {want} CURVE{hint}"
        )
