"""The CURVE pitfall: libzmq's CMake quietly builds without CURVE when it cannot find
libsodium. The flavour check after the build must catch that."""
from __future__ import annotations

import pytest

from testbed.toolchain import baselines, libraries, pins, sources
from testbed.toolchain.capabilities import CapabilityError, zmq_has
from testbed.toolchain.progress import Progress


@pytest.mark.slow
def test_curve_build_without_libsodium_is_caught(tmp_path):
    pin = pins.load()
    quiet = Progress(plain=True, quiet=True)
    src = sources.libzmq_source(pin, quiet)
    flags = pin["flavours"]["libzmq-4.3.5"]["cmake_flags"]  # asks for CURVE
    with pytest.raises(CapabilityError) as info:
        baselines.build_libzmq(src, tmp_path, flags, name="libzmq-4.3.5", curve=True,
                               sodium_prefix=tmp_path / "no-libsodium-here", progress=quiet)
    # Normally the zmq_has check fires; on a host with a system libsodium the check
    # that only the pinned libsodium was linked fires instead. Either way: refused.
    assert "CURVE" in str(info.value) or "pinned one" in str(info.value)
    library = tmp_path / "prefix" / "lib" / "libzmq.so"
    if library.exists() and "CURVE" in str(info.value):
        assert zmq_has(library, "curve") is False  # the build really came out without CURVE


@pytest.mark.slow
@pytest.mark.parametrize("name,curve", [("libzmq-4.3.5", True), ("libzmq-4.3.5-nocurve", False)])
def test_built_flavours_have_the_curve_they_promise(name, curve):
    built = libraries.ensure_built(name, bench=False, progress=Progress(plain=True, quiet=True))
    assert built.info["curve"] is curve
    assert zmq_has(built.prefix / "lib" / "libzmq.so", "curve") is curve
