"""libzmq 4.3.5's own test suite as the drop-in judge: the suite's files, the outcome
of a test program, the expectation rules, the drop-in loader check, and one real run
of three tests against the libzmq baseline."""
from __future__ import annotations

import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from testbed.suites import libzmq_suite as suite
from testbed.suites import libzmq_suite_build as build
from testbed.suites import libzmq_suite_config as config
from testbed.suites import libzmq_suite_dropin as dropin
from testbed.suites import libzmq_suite_expect as expect
from testbed.suites import libzmq_suite_pyzmq as pyzmq
from testbed.suites import libzmq_suite_table as table
from testbed.suites.libzmq_suite_run import TestOutcome, classify, run_all, run_one
from testbed.suites.libzmq_suite_run import combine as run_combine
from testbed.toolchain import libraries
from testbed.toolchain.progress import Progress

QUIET = Progress(plain=True, quiet=True)


def outcome(test: str, status: str, detail: str = "d") -> TestOutcome:
    return TestOutcome(test, status, 0.1, detail)


# --- suite.toml -----------------------------------------------------------------

def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(textwrap.dedent(body))
    return path


def test_checked_in_config_names_only_tests_of_a_tree():
    loaded = config.load()
    assert loaded.timeout("test_heartbeats") > loaded.timeout("test_pair_tcp") > 0
    tree = sorted(set(loaded.never_built) | set(loaded.timeouts) - {"default"} | {"test_pair_tcp"})
    config.check_against_tree(loaded, tree)
    assert loaded.built_tests(tree) == [t for t in tree if t not in loaded.never_built]


def test_config_rejects_bad_entries_by_name(tmp_path):
    with pytest.raises(config.SuiteConfigError, match="timeouts.test_x = -1"):
        config.load(_config(tmp_path, "schema = 1\n[timeouts]\ndefault = 5\ntest_x = -1\n"))
    with pytest.raises(config.SuiteConfigError, match="never_built.test_y needs a non-empty reason"):
        config.load(_config(tmp_path, 'schema = 1\n[never_built]\ntest_y = ""\n[timeouts]\ndefault = 5\n'))
    with pytest.raises(config.SuiteConfigError, match="schema = 2"):
        config.load(_config(tmp_path, "schema = 2\n"))
    typo = 'schema = 1\n[never_built]\ntest_typo = "x"\n[timeouts]\ndefault = 5\n'
    loaded = config.load(_config(tmp_path, typo))
    with pytest.raises(config.SuiteConfigError, match="test_typo not among"):
        config.check_against_tree(loaded, ["test_pair_tcp"])


# --- how one test program ended --------------------------------------------------

UNITY_OK = ["test_a.cpp:10:test_one:PASS", "-----------------------", "2 Tests 0 Failures 0 Ignored", "OK"]


@pytest.mark.parametrize("code,lines,status,detail", [
    (0, UNITY_OK, "pass", "2 cases"),
    (0, ["3 Tests 0 Failures 3 Ignored"], "skipped", "all 3 Unity cases ignored"),
    (77, [], "skipped", "exit 77"),
    (1, ["/x/stage/tests/test_a.cpp:12:test_one:FAIL: Expected 4 Was 0", "1 Tests 1 Failures 0 Ignored"],
     "fail", "exit 1: test_a.cpp:12:test_one:FAIL: Expected 4 Was 0"),
    (0, ["1 Tests 1 Failures 0 Ignored"], "fail", "exit 0"),
    (-signal.SIGABRT, ["what():  File name too long"], "signal", "SIGABRT; what():  File name too long"),
    (None, ["test_a.cpp:9:test_one:PASS"], "timeout", "still running after 20 s; last output: test_a.cpp:9"),
])
def test_classify(code, lines, status, detail):
    result = classify("test_a", code, lines, 0.5, 20)
    assert result.status == status
    assert detail in result.detail


def _script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child of a killed group may linger as a zombie until init reaps it.
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state != "Z"


def _gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_hung_test_is_killed_at_its_limit_and_its_output_survives(tmp_path):
    """A C program like the real tests: stdio-buffered output, then a hang."""
    source = tmp_path / "hang.c"
    source.write_text('#include <stdio.h>\n#include <unistd.h>\n'
                      'int main(void) { printf("test_h.cpp:1:test_first:PASS\\n"); sleep(600); return 0; }\n')
    subprocess.run([os.environ.get("CC", "cc"), str(source), "-o", str(tmp_path / "hang")], check=True)
    started = time.monotonic()
    result = run_one("test_h", tmp_path / "hang", 1.0, tmp_path / "logs")
    assert result.status == "timeout" and time.monotonic() - started < 10
    assert "test_first:PASS" in result.detail  # line-buffered: the output up to the hang survives


def test_children_left_by_a_finished_test_are_killed(tmp_path):
    marker = tmp_path / "child.pid"
    leaver = _script(tmp_path, "leaver", f"""\
        sleep 600 &
        echo $! > {marker}
        echo "1 Tests 0 Failures 0 Ignored"
        exit 0
        """)
    result = run_one("test_l", leaver, 10.0, tmp_path / "logs")
    assert result.status == "pass"
    assert _gone(int(marker.read_text()))


def test_run_all_runs_every_test_and_reports_each(tmp_path):
    ok = _script(tmp_path, "ok", 'echo "1 Tests 0 Failures 0 Ignored"\n')
    bad = _script(tmp_path, "bad", 'echo "t.cpp:3:test_x:FAIL: Expected 1 Was 2"\nexit 3\n')
    seen = []
    results = run_all({"test_ok": ok, "test_bad": bad}, lambda t: 5.0, tmp_path / "logs", jobs=2,
                      on_done=lambda o: seen.append(o.test))
    assert {t: o.status for t, o in results.items()} == {"test_ok": "pass", "test_bad": "fail"}
    assert sorted(seen) == ["test_bad", "test_ok"]


# --- the expectation file ---------------------------------------------------------

FILE = """\
schema = 1
[libraries."lib-a"]
pass = ["test_held", "test_broken"]
[libraries."lib-a".not_passing]
test_missing = { outcome = "compile-error", reason = "[api] zmq_timers_* missing", seen = "d" }
test_fixed = { outcome = "fail", reason = "[sockets] REQ missing" }
[libraries."lib-a".flaky]
test_racy = "hangs in zmq_ctx_term sometimes"
"""


def test_parse_and_dump_round_trip():
    parsed = expect.parse(FILE)
    lib = parsed.libraries["lib-a"]
    assert lib.passes == {"test_held", "test_broken"}
    assert lib.flaky == {"test_racy": "hangs in zmq_ctx_term sometimes"}
    expected = expect.NotPassing("compile-error", "[api] zmq_timers_* missing", "d")
    assert lib.not_passing["test_missing"] == expected
    assert expect.parse(expect.dump(parsed)) == parsed


@pytest.mark.parametrize("bad,message", [
    (FILE.replace('pass = ["test_held", "test_broken"]', 'pass = ["test_held", "test_fixed"]'),
     "test_fixed listed in both pass and not_passing"),
    (FILE.replace('outcome = "fail"', 'outcome = "pass"'), "outcome 'pass' is not one of"),
    (FILE.replace('reason = "[sockets] REQ missing"', 'reason = " "'), "needs a non-empty reason"),
    (FILE.replace("schema = 1", "schema = 7"), "schema = 7"),
    (FILE + "[libraries.\"lib-a\".extra]\n", "may hold only"),
    (FILE.replace('test_racy = "hangs', 'test_held = "hangs'), "test_held listed in both pass and flaky"),
])
def test_parse_rejects_with_a_message_naming_the_entry(bad, message):
    with pytest.raises(expect.ExpectationError, match=message.replace("(", r"\(").replace("[", r"\[")):
        expect.parse(bad)


def test_names_outside_the_suite_are_typos():
    with pytest.raises(expect.ExpectationError, match="test_fixed, test_racy"):
        expect.check_names(expect.parse(FILE), {"test_held", "test_broken", "test_missing"})


RUN = {
    "test_held": outcome("test_held", "pass"),
    "test_broken": outcome("test_broken", "signal", "SIGABRT"),
    "test_missing": outcome("test_missing", "compile-error"),
    "test_fixed": outcome("test_fixed", "pass"),
    "test_racy": outcome("test_racy", "timeout"),
    "test_new": outcome("test_new", "fail", "exit 1: t.cpp:1:test_n:FAIL: Expected 1 Was 0"),
}


def test_judge_applies_the_rules():
    verdict = expect.judge("lib-a", expect.parse(FILE).libraries["lib-a"], RUN)
    assert verdict.held == ["test_held"]
    assert [o.test for o in verdict.regressions] == ["test_broken"]
    assert verdict.now_passing == ["test_fixed"]
    assert [(o.test, why) for o, why in verdict.still_not_passing] == \
        [("test_missing", "[api] zmq_timers_* missing")]
    assert [o.test for o in verdict.flaky] == ["test_racy"]
    assert [o.test for o in verdict.unlisted] == ["test_new"]
    assert (verdict.passed, verdict.failed) == (2, 2)


def test_summary_says_what_to_act_on():
    result = suite.summarise(expect.judge("lib-a", expect.parse(FILE).libraries["lib-a"], RUN), True)
    text = result.line()
    assert result.name == "libzmq-suite lib-a" and (result.passed, result.failed) == (2, 2)
    for part in ("REGRESSED: test_broken (signal: SIGABRT)", "ENDED BY A SIGNAL: test_broken",
                 "NOW PASSES: test_fixed; tighten", "NOT IN expectations.toml: test_new",
                 "flaky (not counted): test_racy timeout", "1 not expected to pass: 1 compile-error"):
        assert part in text


def test_update_moves_passes_keeps_reasons_and_leaves_flaky_alone():
    new = expect.updated(expect.parse(FILE), "lib-a", RUN).libraries["lib-a"]
    assert new.passes == {"test_held", "test_fixed"}
    assert new.not_passing["test_missing"].reason == "[api] zmq_timers_* missing"
    broken = expect.NotPassing("signal", f"{expect.TODO_PREFIX} SIGABRT", "SIGABRT")
    assert new.not_passing["test_broken"] == broken
    assert new.not_passing["test_new"].reason.startswith(f"{expect.TODO_PREFIX} exit 1: t.cpp:1")
    assert new.flaky == {"test_racy": "hangs in zmq_ctx_term sometimes"}
    assert "test_racy" not in new.passes and "test_racy" not in new.not_passing
    assert expect.judge("lib-a", new, RUN).failed == 0  # the rewritten file matches the run


def test_update_marks_a_reason_for_recheck_when_the_failure_changed():
    seen = "exit 1: t.cpp:20:test_req:FAIL: Expected Non-NULL"
    base = expect.parse(FILE.replace('reason = "[sockets] REQ missing" }',
                                     f'reason = "[sockets] REQ missing", seen = "{seen}" }}'))
    moved = outcome("test_fixed", "fail", "exit 1: t.cpp:31:test_req:FAIL: Expected Non-NULL")
    other = outcome("test_fixed", "fail", "exit 1: t.cpp:40:test_conflate:FAIL: ZMQ_CONFLATE refused")
    kept = expect.updated(base, "lib-a", {"test_fixed": moved}).libraries["lib-a"].not_passing["test_fixed"]
    assert kept.reason == "[sockets] REQ missing" and kept.seen == moved.detail  # only a line number moved
    changed = expect.updated(base, "lib-a", {"test_fixed": other})
    entry = changed.libraries["lib-a"].not_passing["test_fixed"]
    assert entry == expect.NotPassing("fail", f"{expect.RECHECK_PREFIX} [sockets] REQ missing", other.detail)
    again = expect.updated(changed, "lib-a", {"test_fixed": moved}).libraries["lib-a"]
    assert again.not_passing["test_fixed"].reason == entry.reason  # never stacked, never silently cleared
    unseen = expect.updated(expect.parse(FILE), "lib-a", {"test_fixed": other}).libraries["lib-a"]
    assert unseen.not_passing["test_fixed"].reason == "[sockets] REQ missing"  # no `seen`: nothing to compare


def test_update_of_a_filtered_run_touches_only_what_ran():
    new = expect.updated(expect.parse(FILE), "lib-a", {"test_fixed": RUN["test_fixed"]}).libraries["lib-a"]
    assert new.passes == {"test_held", "test_broken", "test_fixed"} and "test_missing" in new.not_passing


def test_update_creates_a_library_entry():
    new = expect.updated(expect.Expectations({}), "lib-b", {"test_held": RUN["test_held"]})
    assert new.libraries["lib-b"].passes == {"test_held"}


# --- the README table ---------------------------------------------------------------

def test_readme_table_agrees_with_the_checked_in_files():
    generated = table.table(expect.load(), config.load().never_built)
    assert table.section(suite.README.read_text()) == generated, \
        "baselines/libzmq-suite/README.md is stale: " \
        "run ./testbed test --only libzmq-suite --update-expectations"


def test_table_rows_and_markers():
    text = table.table(expect.parse(FILE), {"test_pair_vmci": "VMCI"})
    assert "| test_missing | compile-error | [api] zmq_timers_* missing |" in text
    assert "| test_racy | flaky | flaky: hangs in zmq_ctx_term sometimes |" in text
    assert "- test_pair_vmci: VMCI" in text
    readme = f"intro\n{table.BEGIN}\nold\n{table.END}\ntail\n"
    assert table.replace_section(readme, "new") == f"intro\n{table.BEGIN}\nnew\n{table.END}\ntail\n"
    with pytest.raises(table.TableError, match="lacks the markers"):
        table.replace_section("no markers", "new")


# --- building -------------------------------------------------------------------------

class _FakeLibrary:
    name = "lib-a"
    prefix = Path("/opt/lib-a")
    info = {"link_name": "zlink", "build_id": "0123456789abcdef", "curve": False}


def test_ninja_files_link_each_test_against_the_library(tmp_path):
    helpers = build.helpers_ninja(tmp_path / "stage", Path("/u"), Path("/p"))
    assert "build helpers/testutil_security.o: cxx_obj" in helpers and "-DZMQ_CUSTOM_PLATFORM_HPP" in helpers
    tests = build.tests_ninja(tmp_path / "stage", Path("/u"), Path("/p"), _FakeLibrary(),
                              ["unity", "testutil"], ["test_pair_tcp"])
    assert "build helpers/libtestutil.a: archive helpers/unity.o helpers/testutil.o" in tests
    assert "-L/opt/lib-a/lib -Wl,-rpath,/opt/lib-a/lib -lzlink" in tests
    assert f"build bin/test_pair_tcp: test_exe {tmp_path}/stage/tests/test_pair_tcp.cpp" in tests


def test_compile_errors_name_the_first_error_and_a_broken_helper(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "test_ok").write_text("")
    stage = f"{tmp_path}/stage/tests/"
    (tmp_path / "logs" / "test_bad.log").write_text(
        f"In file included from x\n{stage}test_bad.cpp:5:3: error: 'zmq_timers_new' was not declared\n")
    logs = tmp_path / "logs"
    (logs / "test_link.log").write_text("ld: t.o: undefined reference to `setup_testutil_security'\n")
    (logs / "testutil_security.log").write_text(f"{stage}testutil_security.hpp:104:3: error: x\n")
    errors = build._compile_errors(tmp_path, ["test_ok", "test_bad", "test_link"], ["testutil_security"])
    assert errors["test_bad"] == "test_bad.cpp:5:3: error: 'zmq_timers_new' was not declared"
    assert "helper testutil_security did not compile: testutil_security.hpp:104:3" in errors["test_link"]
    assert "test_ok" not in errors


# --- the drop-in loader check -----------------------------------------------------------

def test_maps_and_loader_traces_name_the_library(tmp_path):
    maps = ("7f00-7f10 r-xp 00000000 08:01 12 /opt/zl/lib/libzmq.so.5.2.5\n"
            "7f20-7f30 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n")
    assert dropin.mapped_soname(maps) == "/opt/zl/lib/libzmq.so.5.2.5"
    assert dropin.mapped_soname("7f20-7f30 r-xp 00000000 08:01 13 /usr/lib/libc.so.6\n") is None
    (tmp_path / "ld-local.123").write_text("   123:\tcalling init: /opt/zl/lib/libzmq.so.5\n")
    assert dropin.loader_inits(tmp_path, "ld-local") == ["/opt/zl/lib/libzmq.so.5"]


def test_sane_figures():
    report = "message size: 64 [B]\nmessage count: 100\nmean throughput: 5000 [msg/s]\n"
    assert dropin.sane_figures("thr", report, 100) == "5000 msg/s"
    assert dropin.sane_figures("thr", report, 200) is None
    assert dropin.sane_figures("thr", report.replace("5000", "0"), 100) is None
    assert dropin.sane_figures("lat", "roundtrip count: 10\naverage latency: 45.5 [us]\n", 10) == "45.5 us"


def _pair(codes, outputs=("", "")):
    pair = dropin._Pair(local=None, remote=None, mapped=None)
    pair.codes, pair.outputs = codes, outputs
    return pair


@pytest.mark.parametrize("codes,loaded,status,detail", [
    ((0, 0), {"/other/libzmq.so.5.2.5"}, "fail", "loaded /other/libzmq.so.5.2.5, not /zl/libzmq.so.5.2.5"),
    ((0, 0), set(), "fail", "cannot tell"),
    ((None, 0), {"/zl/libzmq.so.5.2.5"}, "timeout", "not finished"),
    ((None, 0), {"/other/libzmq.so.5.2.5"}, "fail", "loaded /other/libzmq.so.5.2.5, not"),
    ((255, 0), {"/zl/libzmq.so.5.2.5"}, "fail", "local_thr exit 255: error in zmq_socket"),
    ((0, -signal.SIGSEGV), {"/zl/libzmq.so.5.2.5"}, "signal", "remote_thr: SIGSEGV"),
    ((0, 0), {"/zl/libzmq.so.5.2.5"}, "pass", "/zl/libzmq.so.5.2.5 loaded by both; 9000 msg/s"),
])
def test_judge_pair(codes, loaded, status, detail):
    output = f"message count: {dropin.COUNTS['thr']}\nmean throughput: 9000 [msg/s]\n"
    if codes[0] == 255:
        output = "error in zmq_socket: Invalid argument\n"
    result = dropin.judge_pair(dropin.Check("thr", "tcp"), _pair(codes, (output, "")), loaded,
                               "/zl/libzmq.so.5.2.5", 1.0)
    assert (result.test, result.status) == ("dropin_thr_tcp", status)
    assert detail in result.detail


# --- pyzmq from source ----------------------------------------------------------------------

def test_pyzmq_check_applies_to_libraries_with_a_libzmq_soname_only(tmp_path):
    class Lib:
        prefix, info = tmp_path, {"link_name": "zlink"}
    assert not pyzmq.wanted(Lib())
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / dropin.SONAME).write_text("")
    assert pyzmq.wanted(Lib())
    Lib.info = {"link_name": "zmq"}  # a libzmq baseline itself: the perf tools are its control
    assert not pyzmq.wanted(Lib())


GOOD = "pyzmq=27.1.0 libzmq=4.3.5\nroundtrip=tcp\nroundtrip=ipc\nmapped=/zl/libzmq.so.5.2.5\nterminated=yes\n"


@pytest.mark.parametrize("code,output,status,detail", [
    (0, GOOD, "pass", "pyzmq 27.1.0 on /zl/libzmq.so.5.2.5 (zmq_version 4.3.5)"),
    (0, GOOD.replace("/zl/", "/other/"), "fail", "mapped /other/libzmq.so.5.2.5, not /zl/libzmq.so.5.2.5"),
    (1, "ImportError: undefined symbol: zmq_curve_keypair\n", "fail", "exit 1: ImportError: undefined"),
    (None, "pyzmq=27.1.0 libzmq=4.3.5\nroundtrip=tcp\n", "timeout", "last: roundtrip=tcp"),
    (-11, "", "signal", "signal 11"),
])
def test_pyzmq_judge(code, output, status, detail):
    result = pyzmq.judge(code, output, "/zl/libzmq.so.5.2.5", 1.0)
    assert (result.test, result.status) == ("pyzmq_pair", status)
    assert detail in result.detail


# --- real runs (slow) ---------------------------------------------------------------------

def test_fixed_address_pattern_finds_the_tests_that_need_the_host_lock():
    assert suite.FIXED_ADDRESS.search('zmq_connect (from, "tcp://localhost:5556")')
    assert suite.FIXED_ADDRESS.search("zmq_bind (sb, ENDPOINT_0)")
    assert not suite.FIXED_ADDRESS.search('bind_loopback_ipv4 (sb, endpoint, len); "tcp://127.0.0.1:55550"')


@pytest.mark.slow
def test_three_real_tests_pass_against_libzmq():
    options = suite.Options(("libzmq-4.3.5",), "^(test_pair_inproc|test_atomics|dropin_thr_tcp)$")
    [result] = suite.run(options, QUIET)
    assert (result.name, result.passed, result.failed) == ("libzmq-suite libzmq-4.3.5", 3, 0), result.line()
    assert not suite._plan(options, QUIET).exclusive  # none of the three uses a fixed port: no host lock


@pytest.mark.slow
def test_dropin_check_fails_when_the_loader_picks_another_library(tmp_path, monkeypatch):
    """Without LD_LIBRARY_PATH the tools' rpath wins: the check must say so, not pass."""
    baseline = libraries.ensure_built("libzmq-4.3.5", bench=False, progress=QUIET)
    tools = dropin.build_tools(baseline, QUIET)
    decoy = tmp_path / "decoy"
    (decoy / "lib").mkdir(parents=True)
    (decoy / "lib" / dropin.SONAME).write_bytes((baseline.prefix / "lib" / dropin.SONAME).read_bytes())
    plain = dropin._env
    monkeypatch.setattr(dropin, "_env", lambda prefix, trace: {
        k: v for k, v in plain(prefix, trace).items() if k != "LD_LIBRARY_PATH"})
    result = dropin.run_check(dropin.Check("thr", "ipc"), tools, decoy, tmp_path / "work")
    assert result.status == "fail" and f"not {decoy / 'lib' / dropin.SONAME}" in result.detail, result
    assert str(baseline.prefix) in result.detail


# --- repeated runs ---------------------------------------------------------------------------

def test_combine_repeated_runs():
    ok, hang = outcome("test_x", "pass", "3 cases"), outcome("test_x", "timeout", "still running after 20 s")
    assert run_combine([ok, ok, ok]).status == "pass" and run_combine([ok, ok, ok]).passes == 3
    mixed = run_combine([ok, hang, ok])
    assert (mixed.status, mixed.runs, mixed.passes, mixed.mixed) == ("timeout", 3, 2, True)
    assert mixed.detail == "passed 2 of 3 runs; otherwise still running after 20 s"
    never = run_combine([hang, hang])
    assert (never.status, never.passes, never.mixed, never.detail) == ("timeout", 0, False, hang.detail)


def test_mixed_results_are_reported_and_moved_to_flaky_by_an_update():
    failed = outcome("test_fixed", "fail", "exit 1: t.cpp:9:c:FAIL")
    mixed = run_combine([outcome("test_fixed", "pass"), failed])
    held_once = run_combine([outcome("test_held", "fail", "exit 1"), outcome("test_held", "pass")])
    runs = {"test_fixed": mixed, "test_held": held_once}
    verdict = expect.judge("lib-a", expect.parse(FILE).libraries["lib-a"], runs)
    assert [o.test for o in verdict.sometimes] == ["test_fixed"] and verdict.now_passing == []
    assert [o.test for o in verdict.regressions] == ["test_held"]  # an expected pass must pass every run
    assert "PASSES SOMETIMES (mark flaky): test_fixed 1 of 2" in suite.summarise(verdict, True).line()
    new = expect.updated(expect.parse(FILE), "lib-a", runs).libraries["lib-a"]
    assert new.flaky["test_fixed"] == f"{expect.TODO_PREFIX} passed 1 of 2 runs; otherwise {failed.detail}"
    assert "test_fixed" not in new.not_passing and "test_held" in new.flaky and "test_held" not in new.passes
