"""Shared pytest setup (keep it small). `slow` marks tests that build or run real
binaries; they run by default (`-m "not slow"` skips them when iterating)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds or runs real binaries (runs by default)")
