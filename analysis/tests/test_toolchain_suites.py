"""Reading runners' closing lines, and never counting 'no test ran' as a pass."""
from __future__ import annotations

from testbed.toolchain import suites


def test_parse_ctest():
    lines = ["...", "100% tests passed, 0 tests failed out of 113", "Total Test time (real) = 72 sec"]
    assert suites.parse_ctest(lines) == (113, 0)
    assert suites.parse_ctest(["90% tests passed, 1 test failed out of 10"]) == (9, 1)
    assert suites.parse_ctest(["No tests were found!!!"]) is None


def test_parse_pytest():
    line = "=========== 3 failed, 40 passed, 1 skipped, 2 errors in 2.10s ==========="
    assert suites.parse_pytest(["x", line]) == {"failed": 3, "passed": 40, "skipped": 1, "error": 2}
    assert suites.parse_pytest(["12 passed in 0.5s"]) == {"passed": 12}
    assert suites.parse_pytest(["no tests ran in 0.01s"]) == {}


def test_pytest_exit_5_is_a_failure(monkeypatch):
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (5, ["no tests ran in 0.01s"]))
    result = suites.run_pytest("nothing-matches")
    assert result.failed == 1 and result.passed == 0
    assert "no test" in result.line()


def test_ctest_without_tests_is_a_failure(monkeypatch, tmp_path):
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (0, ["No tests were found!!!"]))
    result = suites.run_ctest("zlink ctest", tmp_path, None)
    assert (result.passed, result.failed) == (0, 1)


def test_ctest_failures_are_counted(monkeypatch, tmp_path):
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (8, ["75% tests passed, 1 tests failed out of 4"]))
    result = suites.run_ctest("zlink ctest", tmp_path, None)
    assert (result.passed, result.failed) == (3, 1)
