"""The CURVE pitfall: libzmq's CMake quietly builds without CURVE when it cannot find
libsodium. The configure-time check must catch that before compiling, and the check
on the built library anything configure did not say."""
from __future__ import annotations

import pytest

from testbed.toolchain import baselines, libraries, pins, sources
from testbed.toolchain.capabilities import CapabilityError, check_curve, zmq_has
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
    # Normally configure leaves CURVE out; on a host with a system libsodium the check
    # that only the pinned libsodium is used fires instead. Either way: refused at
    # configure time, before anything is compiled.
    assert "configured without CURVE" in str(info.value) or "pinned one" in str(info.value)
    assert not (tmp_path / "prefix" / "lib" / "libzmq.so").exists()


def test_a_built_library_without_the_curve_it_promises_is_refused():
    """The check on what was built (after the configure-time one): the nocurve flavour's
    library, judged as if it had promised CURVE, and the other way round."""
    for name, promised in (("libzmq-4.3.5-nocurve", True), ("libzmq-4.3.5", False)):
        built = libraries.ensure_built(name, bench=False, progress=Progress(plain=True, quiet=True))
        with pytest.raises(CapabilityError) as info:
            check_curve(built.prefix / "lib" / "libzmq.so", promised, name)
        assert f"{'lacks' if promised else 'has'} CURVE" in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("name,curve", [("libzmq-4.3.5", True), ("libzmq-4.3.5-nocurve", False)])
def test_built_flavours_have_the_curve_they_promise(name, curve):
    built = libraries.ensure_built(name, bench=False, progress=Progress(plain=True, quiet=True))
    assert built.info["curve"] is curve
    assert zmq_has(built.prefix / "lib" / "libzmq.so", "curve") is curve
