"""Reading runners' closing lines, and never counting 'no test ran' as a pass."""
from __future__ import annotations

import os
import shlex
import sys
import time

import pytest

from testbed.suites import runners as suites


def test_parse_ctest():
    lines = ["...", "100% tests passed, 0 tests failed out of 113", "Total Test time (real) = 72 sec"]
    assert suites.parse_ctest(lines) == (113, 0)
    assert suites.parse_ctest(["90% tests passed, 1 test failed out of 10"]) == (9, 1)
    assert suites.parse_ctest(["No tests were found!!!"]) is None


def test_a_skipped_ctest_test_is_named_and_not_counted_as_passed(tmp_path, monkeypatch):
    """ctest puts a GTEST_SKIP among its 'tests passed'; the suite's count must not."""
    lines = ["2/2 Test #2: A.Skips ..........................***Skipped   0.00 sec", "",
             "100% tests passed, 0 tests failed out of 2", "", "Total Test time (real) =   0.00 sec", "",
             "The following tests did not run:", "\t  2 - A.Skips (Skipped)"]
    assert suites.ctest_not_run(lines) == ["A.Skips (Skipped)"]
    assert suites.ctest_not_run(lines[:3]) == []
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (0, lines))
    result = suites.run_ctest("zlink ctest", tmp_path, None)
    assert (result.passed, result.failed) == (1, 0)
    assert result.notes == ["1 skipped, not counted as passed: A.Skips (Skipped)"]


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


def test_ctest_summary_names_the_failed_tests(monkeypatch, tmp_path):
    lines = ["98% tests passed, 2 tests failed out of 90", "", "Total Test time (real) = 72 sec", "",
             "The following tests FAILED:",
             "\t 12 - interop.security.curve.rotation.ipc.zlink_server-libzmq_client (Failed)",
             "\t 40 - api.poll (Timeout)",
             "Errors while running CTest"]
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (8, lines))
    result = suites.run_ctest("zlink ctest", tmp_path, None)
    assert (result.passed, result.failed) == (88, 2)
    assert "FAILED interop.security.curve.rotation.ipc.zlink_server-libzmq_client (Failed)" in result.line()
    assert "FAILED api.poll (Timeout)" in result.line()


def test_ctest_summary_says_why_a_test_aborted(monkeypatch, tmp_path):
    lines = ["    Start 12: Race.Close",
             "12/90 Test #12: Race.Close .......Subprocess aborted***Exception:   2.31 sec",
             "[ RUN      ] Race.Close",
             "/src/tests/core/race_test.cpp:41: Failure",
             "Expected: (b) != (nullptr), actual: NULL vs (nullptr)",
             "round 13: Too many open files",
             "terminate called without an active exception",
             "    Start 13: Other.Test",
             "89% tests passed, 1 tests failed out of 90",
             "The following tests FAILED:", "\t 12 - Race.Close (Subprocess aborted)"]
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (8, lines))
    line = suites.run_ctest("zlink ctest", tmp_path, None).line()
    assert "FAILED Race.Close (Subprocess aborted): race_test.cpp:41: Failure" in line
    assert "Too many open files" in line and "Other.Test" not in line


def test_pytest_summary_names_the_failed_tests(monkeypatch):
    lines = ["FAILED tests/test_a.py::test_one - AssertionError", "1 failed, 3 passed in 0.2s"]
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (1, lines))
    result = suites.run_pytest(None)
    assert (result.passed, result.failed) == (3, 1)
    assert "FAILED tests/test_a.py::test_one - AssertionError" in result.line()


_POPEN = suites.subprocess.Popen  # the real one, before any test patches it


def _beside(monkeypatch, tmp_path, main: tuple, side_log: str, side_code: int):
    """run_pytest_beside with the main pytest faked and the side one a shell command
    that writes `side_log` and exits `side_code` (the side's log is read, not streamed)."""
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: main)
    monkeypatch.setattr(suites.paths, "REPO_ROOT", tmp_path)
    (tmp_path / "analysis").mkdir(exist_ok=True)
    script = f"printf '%s' {shlex.quote(side_log)}; exit {side_code}"
    monkeypatch.setattr(suites.subprocess, "Popen",
                        lambda cmd, **kw: _POPEN(["sh", "-c", script], **kw))
    return suites.run_pytest_beside()


def test_the_tests_beside_are_counted_with_the_rest(monkeypatch, tmp_path):
    result = _beside(monkeypatch, tmp_path, (0, ["40 passed, 3 deselected in 9s"]), "3 passed in 5s\n", 0)
    assert (result.passed, result.failed) == (43, 0)
    result = _beside(monkeypatch, tmp_path, (0, ["40 passed in 9s"]),
                     "FAILED tests/test_b.py::test_long - AssertionError\n1 failed, 2 passed in 5s\n", 1)
    assert (result.passed, result.failed) == (42, 1)
    assert "FAILED tests/test_b.py::test_long - AssertionError" in result.line()


def test_a_pytest_beside_that_ran_nothing_or_died_is_a_failure(monkeypatch, tmp_path):
    result = _beside(monkeypatch, tmp_path, (0, ["40 passed in 9s"]), "no tests ran in 0.01s\n", 5)
    assert (result.passed, result.failed) == (40, 1) and "ran no test" in result.line()
    result = _beside(monkeypatch, tmp_path, (0, ["40 passed in 9s"]), "Segmentation fault\n", 139)
    assert (result.passed, result.failed) == (40, 1)


def test_a_test_beside_is_told_when_the_rest_has_ended(monkeypatch, tmp_path):
    """The file named in REST_DONE_ENV appears only once the rest has ended; a beside
    test waiting on it (here a shell loop) ends after that."""
    done = tmp_path / "build" / "pytest-beside.rest-done"
    done.parent.mkdir()
    done.touch()  # an earlier run's: must not count for this one

    def rest(*args, **kwargs):
        assert not done.exists(), "told the rest had ended while it ran"
        return 0, ["40 passed in 9s"]

    monkeypatch.setattr(suites, "_stream", rest)
    monkeypatch.setattr(suites.paths, "REPO_ROOT", tmp_path)
    (tmp_path / "analysis").mkdir()
    told = f'[ -e "${suites.REST_DONE_ENV}" ]'
    script = (f"for i in $(seq 200); do {told} && break; sleep 0.05; done; "
              f'if {told}; then echo "3 passed in 1s"; else echo "1 failed in 1s"; fi')
    monkeypatch.setattr(suites.subprocess, "Popen", lambda cmd, **kw: _POPEN(["sh", "-c", script], **kw))
    result = suites.run_pytest_beside()
    assert (result.passed, result.failed) == (43, 0), result.line()
    assert done.exists()


def test_a_timed_test_beside_waits_for_the_rest(monkeypatch, tmp_path):
    import threading

    from after_the_rest import wait_for_the_rest

    monkeypatch.delenv(suites.REST_DONE_ENV, raising=False)
    assert wait_for_the_rest() == "not run beside the rest: measuring at once"
    done = tmp_path / "rest-done"
    monkeypatch.setenv(suites.REST_DONE_ENV, str(done))
    assert "measuring anyway" in wait_for_the_rest(limit_s=0.2, poll_s=0.05)
    threading.Timer(0.3, done.touch).start()
    started = time.monotonic()
    assert wait_for_the_rest(poll_s=0.05).startswith("waited")
    assert time.monotonic() - started >= 0.3


def test_the_long_tests_carry_the_marker():
    """The three long tests CI's time was measured on run beside (runners.BESIDE)."""
    files = ["tests/test_results_report.py", "tests/test_bisect_slowdown.py",
             "tests/test_sweep_slurm_cluster.py"]
    listed = suites.subprocess.run(
        [sys.executable, "-m", "pytest", *files, "-q", "--collect-only", "-m", suites.BESIDE],
        cwd=suites.paths.REPO_ROOT / "analysis", capture_output=True, text=True).stdout
    for name in ("test_committed_published_reports_rebuild_without_seeds",
                 "test_bisect_names_the_slowed_commit",
                 "test_quick_batch_sweep_over_two_array_tasks_merges_into_one_report"):
        assert f"::{name}" in listed, listed
    assert "test_the_summary_states_the_median_within_cell_spread" not in listed
    # The one that times (after_the_rest) comes last, so the wait holds nothing up.
    ids = [line for line in listed.splitlines() if "::" in line]
    assert ids[-1].endswith("::test_bisect_names_the_slowed_commit"), ids


def test_api_diff_passes_only_on_exit_0_with_its_summary(monkeypatch, tmp_path):
    ok = "api-diff: 22160 answers, 9462 differences, 0 unexplained, 0 stale explanations"
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (0, ["...", ok]))
    result = suites.run_api_diff(tmp_path, tmp_path)
    assert (result.passed, result.failed) == (1, 0) and ok in result.line()
    bad = "api-diff: 22160 answers, 9463 differences, 1 unexplained, 0 stale explanations"
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (1, ["UNEXPLAINED get/0/94: ...", bad]))
    result = suites.run_api_diff(tmp_path, tmp_path)
    assert (result.passed, result.failed) == (0, 1)
    monkeypatch.setattr(suites, "_stream", lambda *a, **k: (0, []))  # exit 0 yet no summary: not a pass
    assert suites.run_api_diff(tmp_path, tmp_path).failed == 1


def test_a_pytest_beside_leaves_sched_idle_with_its_children():
    """Once the rest of pytest is done the beside run, and what it started, take the
    caller's class; a caller itself under SCHED_IDLE changes nothing."""
    if not hasattr(os, "SCHED_IDLE"):
        pytest.skip("no SCHED_IDLE on this platform")
    proc = suites.subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30; wait"], preexec_fn=suites._idle)
    try:
        deadline = time.monotonic() + 10
        while len(suites._descendants(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        tree = [proc.pid, *suites._descendants(proc.pid)]
        assert len(tree) == 3 and {os.sched_getscheduler(p) for p in tree} == {os.SCHED_IDLE}
        assert suites._unidle(proc.pid, os.SCHED_IDLE) == 0
        assert suites._unidle(proc.pid, os.SCHED_OTHER) == 3
        assert {os.sched_getscheduler(p) for p in tree} == {os.SCHED_OTHER}
    finally:
        proc.kill()
        proc.wait()

