"""Shared pytest setup (keep it small). `slow` marks tests that build or run real
binaries; they run by default (`-m "not slow"` skips them when iterating)."""

import os

import pytest

# Every run samples other work on the host for half a second at its start and end;
# the suite starts hundreds of runs, so it samples for 20 ms (test_hostload.py tests
# the sampler with its own windows).
os.environ.setdefault("TESTBED_HOSTLOAD_WINDOW_S", "0.02")
# Likewise the host speed reference, timed before and after every pair on every bench
# CPU: a tenth of its work (a few ms instead of ~90 ms a measurement, which was about a
# third of a fake-bench run's time). The manifest records the rounds used.
os.environ.setdefault("TESTBED_SPEEDREF_ROUNDS", "10")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds or runs real binaries (runs by default)")
    config.addinivalue_line("markers", "beside: long, and nothing it checks is a speed at risk "
                            "under load: `./testbed test` runs these in a second pytest under "
                            "SCHED_IDLE beside the rest (suites/runners.py)")
    config.addinivalue_line("markers", "after_the_rest: a `beside` test that times something: "
                            "it runs last and measures once the rest has ended "
                            "(tests/after_the_rest.py)")


def pytest_collection_modifyitems(items):
    # The tests marked after_the_rest wait for the rest of the tests to end: last, so the
    # other `beside` tests are not held up behind the wait. A stable sort: the order
    # among the others stays pytest's.
    items.sort(key=lambda item: item.get_closest_marker("after_the_rest") is not None)


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
