"""Shared pytest setup (keep it small). `slow` marks tests that build or run real
binaries; they run by default (`-m "not slow"` skips them when iterating)."""

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds or runs real binaries (runs by default)")


@pytest.fixture(scope="session")
def built_library():
    """A function: registered library name -> that library built with its bench
    binaries. A test that needs a library fails (never skips) when it cannot be built:
    these tests exist to run the real builds."""
    from testbed.toolchain.libraries import LibraryUnavailable, ensure_built

    def build(name):
        try:
            return ensure_built(name)
        except LibraryUnavailable as exc:
            pytest.fail(f"{name} and its bench binaries are needed: {exc}")

    return build
