"""zlink's two flavours in the library table, like the baseline's: `zlink` with CURVE
on the pinned libsodium and `zlink-nocurve` without, each checked on the built
library (zmq_has, and what a CURVE option does), never trusted from its flags."""
from __future__ import annotations

import subprocess
import sys

import pytest

from testbed.toolchain import baselines, libraries, zlink_build
from testbed.toolchain.progress import Progress

# Calls zmq_setsockopt(ZMQ_CURVE_SERVER=47, 1) on a DEALER and prints "rc errno has_curve".
_PROBE = (
    "import ctypes, sys\n"
    "lib = ctypes.CDLL(sys.argv[1], use_errno=True)\n"
    "lib.zmq_ctx_new.restype = ctypes.c_void_p\n"
    "lib.zmq_socket.restype = ctypes.c_void_p\n"
    "lib.zmq_socket.argtypes = [ctypes.c_void_p, ctypes.c_int]\n"
    "lib.zmq_setsockopt.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]\n"
    "lib.zmq_close.argtypes = [ctypes.c_void_p]\n"
    "lib.zmq_ctx_term.argtypes = [ctypes.c_void_p]\n"
    "lib.zmq_has.argtypes = [ctypes.c_char_p]\n"
    "ctx = lib.zmq_ctx_new(); s = lib.zmq_socket(ctx, 5)\n"
    "one = ctypes.c_int(1)\n"
    "rc = lib.zmq_setsockopt(s, 47, ctypes.byref(one), 4); err = ctypes.get_errno()\n"
    "lib.zmq_close(s); lib.zmq_ctx_term(ctx)\n"
    "print(rc, err, lib.zmq_has(b'curve'))\n"
)


def test_both_flavours_are_registered():
    names = libraries.registered_names()
    assert "zlink" in names and "zlink-nocurve" in names
    assert libraries.LIBRARIES["zlink"].curve is True
    assert libraries.LIBRARIES["zlink-nocurve"].curve is False


def test_flavours_differ_only_in_curve():
    on, off = libraries.LIBRARIES["zlink"], libraries.LIBRARIES["zlink-nocurve"]
    assert on.key() != off.key()
    assert [f for f in on.flags() if "CURVE" not in f] == [f for f in off.flags() if "CURVE" not in f]
    assert zlink_build.CURVE_ON in on.flags() and zlink_build.CURVE_OFF in off.flags()
    assert on.describe()["libsodium"]["sha256"] == baselines.pinned()["libsodium"]["sha256"]
    assert "libsodium" not in off.describe()


def test_curve_key_follows_the_pinned_libsodium(monkeypatch):
    import copy

    flavour = libraries.LIBRARIES["zlink"]
    base, original = flavour.key(), baselines.pinned()
    other = copy.deepcopy(original)
    other["libsodium"]["sha256"] = "0" * 64
    monkeypatch.setattr(baselines, "pinned", lambda: other)
    assert flavour.key() != base
    assert libraries.LIBRARIES["zlink-nocurve"].key() == libraries.LIBRARIES["zlink-nocurve"].key()


@pytest.mark.slow
@pytest.mark.parametrize("name,curve", [("zlink", True), ("zlink-nocurve", False)])
def test_built_flavour_does_what_it_promises(name, curve):
    built = libraries.ensure_built(name, bench=False, progress=Progress(plain=True, quiet=True))
    assert built.info["curve"] is curve
    library = built.prefix / "lib" / "libzlink.so"
    out = subprocess.run([sys.executable, "-c", _PROBE, str(library)], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    rc, err, has = (int(x) for x in out)
    assert has == int(curve)
    if curve:
        assert rc == 0
    else:
        assert (rc, err) == (-1, 95)  # ENOTSUP on Linux: never a silent NULL connection
    nm = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True).stdout
    assert "crypto_box" not in nm  # libsodium stays inside libzlink.so
