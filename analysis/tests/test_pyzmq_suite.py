"""The pyzmq suite's judge and files, from small hand-written JUnit and TOML (never a
live run): oracle semantics, node ids, and clear errors for malformed files."""
from __future__ import annotations

import pytest

from testbed.suites import pyzmq_suite_config as config_mod
from testbed.suites import pyzmq_suite_judge as judge_mod
from testbed.suites.pyzmq_suite_judge import ERROR, FAIL, PASS, SKIPPED

JUNIT = """<?xml version="1.0"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_socket.TestSocket" name="test_int_sockopts" time="0.1"/>
<testcase classname="test_future.TestFutureSocket" name="test_close_all_fds" time="0.1">
  <failure message="AssertionError: socket left open">trace</failure></testcase>
<testcase classname="tests.test_asyncio" name="test_poll[tcp]" time="0.1">
  <skipped message="needs draft"/></testcase>
<testcase classname="tests.test_log.TestPubLog" name="test_root_topic" time="0.1">
  <failure message="boom"/></testcase>
<testcase classname="tests.test_log.TestPubLog" name="test_root_topic" time="0.1">
  <error message="teardown"/></testcase>
</testsuite></testsuites>"""


def test_junit_gives_pytest_node_ids_and_keeps_the_worse_of_call_and_teardown():
    outcomes = judge_mod.read_junit(JUNIT)
    assert outcomes == {
        "tests/test_socket.py::TestSocket::test_int_sockopts": (PASS, ""),
        "tests/test_future.py::TestFutureSocket::test_close_all_fds":
            (FAIL, "AssertionError: socket left open"),
        "tests/test_asyncio.py::test_poll[tcp]": (SKIPPED, "needs draft"),
        "tests/test_log.py::TestPubLog::test_root_topic": (FAIL, "boom"),
    }


def _outcomes(**tests):
    return {f"tests/t.py::{name}": (status, "") for name, status in tests.items()}


def test_a_test_the_oracle_passes_and_zlink_fails_is_a_failure_unless_listed():
    oracle = _outcomes(a=PASS, b=PASS, c=PASS)
    zlink = _outcomes(a=PASS, b=FAIL, c=ERROR)
    judged = judge_mod.judge("zlink", oracle, zlink, {"tests/t.py::c": "known: reason"})
    assert judged.passed == ["tests/t.py::a"]
    assert [test for test, _ in judged.failed] == ["tests/t.py::b"]
    assert judged.listed == [("tests/t.py::c", "known: reason")]


def test_skips_must_match_and_a_lost_test_fails():
    oracle = _outcomes(a=SKIPPED, b=SKIPPED, c=SKIPPED, d=PASS)
    zlink = _outcomes(a=SKIPPED, b=PASS, c=FAIL)
    judged = judge_mod.judge("zlink", oracle, zlink, {})
    assert judged.skipped_both == ["tests/t.py::a"]
    assert judged.skip_differs == ["tests/t.py::b"]
    assert [test for test, _ in judged.failed] == ["tests/t.py::c", "tests/t.py::d"]


def test_a_listed_difference_that_passes_is_reported_and_oracle_failures_are_left_to_the_oracle():
    oracle = _outcomes(a=PASS, b=FAIL)
    zlink = _outcomes(a=PASS, b=FAIL)
    judged = judge_mod.judge("zlink", oracle, zlink, {"tests/t.py::a": "was broken"})
    assert judged.now_passing == ["tests/t.py::a"] and not judged.failed
    own = judge_mod.judge_oracle("libzmq", oracle, {})
    assert own.passed == ["tests/t.py::a"] and [t for t, _ in own.failed] == ["tests/t.py::b"]
    listed = judge_mod.judge_oracle("libzmq", oracle, {"tests/t.py::b": "why"}).listed
    assert listed == [("tests/t.py::b", "why")]


def test_flaky_tests_are_reported_never_counted():
    oracle = _outcomes(a=FAIL, b=PASS)
    zlink = _outcomes(a=PASS, b=FAIL)
    flaky = frozenset({"tests/t.py::a", "tests/t.py::b"})
    judged = judge_mod.judge("zlink", oracle, zlink, {}, flaky)
    assert not judged.failed and not judged.passed
    assert judged.flaky == [("tests/t.py::a", PASS), ("tests/t.py::b", FAIL)]
    own = judge_mod.judge_oracle("libzmq", oracle, {}, flaky)
    assert not own.failed and own.flaky == [("tests/t.py::a", FAIL), ("tests/t.py::b", PASS)]


SUITE = """schema = 1
[pyzmq]
version = "27.1.0"
sha256 = "{sha}"
test_requirements = ["pytest==9.2.0"]
[run]
test_timeout_seconds = 60
run_timeout_seconds = 900
libraries = ["libzmq-4.3.5", "zlink"]
oracle = "libzmq-4.3.5"
[deselect]
[isolated]
"""


def test_the_committed_files_load():
    config = config_mod.load_config()
    assert config.oracle in config.libraries
    config_mod.load_expectations(config)


def test_malformed_files_name_the_key(tmp_path):
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(sha="ab"))
    with pytest.raises(config_mod.PyzmqSuiteError, match=r"\[pyzmq\]: sha256 must be 64"):
        config_mod.load_config(path)
    path.write_text(SUITE.format(sha="a" * 64).replace('"pytest==9.2.0"', '"pytest"'))
    with pytest.raises(config_mod.PyzmqSuiteError, match="pinned"):
        config_mod.load_config(path)
    path.write_text(SUITE.format(sha="a" * 64))
    config = config_mod.load_config(path)
    expect = tmp_path / "expectations.toml"
    expect.write_text('schema = 1\n[differences."zlink"]\n"test_x" = "why"\n')
    with pytest.raises(config_mod.PyzmqSuiteError, match="not a pytest node id"):
        config_mod.load_expectations(config, expect)
    expect.write_text('schema = 1\n[differences."zlink"]\n"tests/t.py::x" = ""\n')
    with pytest.raises(config_mod.PyzmqSuiteError, match="non-empty"):
        config_mod.load_expectations(config, expect)


def test_an_sdist_with_another_hash_is_refused(tmp_path):
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(sha="a" * 64))
    sdist = tmp_path / "pyzmq-27.1.0.tar.gz"
    sdist.write_bytes(b"not the sdist")
    with pytest.raises(config_mod.PyzmqSuiteError, match="refusing"):
        config_mod.check_sdist(config_mod.load_config(path), sdist)


def test_a_failed_build_fails_the_suite_and_names_the_library_and_step(monkeypatch):
    from testbed.suites import pyzmq_suite
    from testbed.toolchain.progress import CommandFailed, Progress

    def fail(name, config, progress):
        raise CommandFailed(f"pyzmq: build against {name} failed (exit 1, 3.0 s); "
                            "full log: /x/build.log\ntail")

    monkeypatch.setattr(pyzmq_suite, "_prepare", fail)
    [result] = pyzmq_suite.run(None, Progress())
    assert (result.name, result.passed, result.failed) == ("pyzmq-suite libzmq-4.3.5", 0, 1)
    assert result.notes == ["pyzmq 27.1.0 build against libzmq-4.3.5 failed: pyzmq: build against "
                            "libzmq-4.3.5 failed (exit 1, 3.0 s); full log: /x/build.log"]
