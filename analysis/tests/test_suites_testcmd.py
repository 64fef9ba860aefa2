"""`./testbed test` closes with one `N passed, N failed` line over all suites and
fails when anything failed, including a suite that ran nothing."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import pytest

from testbed.suites import test_cmd
from testbed.suites.runners import Beside, SuiteResult, stop_pytest_beside
from testbed.toolchain import cmake, keys
from testbed.toolchain.build_all import Outcome


def _args(**kw):
    parser = argparse.ArgumentParser()
    test_cmd.add_arguments(parser)
    args = parser.parse_args([])
    for key, value in kw.items():
        setattr(args, key, value)
    return args


@pytest.fixture
def fake_suites(monkeypatch):
    monkeypatch.setattr(test_cmd.system, "missing", lambda: [])
    monkeypatch.setattr(test_cmd, "build_everything",
                        lambda *a, **k: [Outcome("libzmq-4.3.5", True, "/p"),
                                         Outcome("zlink", True, "skipped: no")])
    results = {"zlink": [SuiteResult("zlink ctest", 10, 0)], "pytest": SuiteResult("pytest", 5, 0),
               "libzmq-suite": [SuiteResult("libzmq-suite zlink", 20, 0)],
               "api-diff": SuiteResult("api-diff", 1, 0),
               "pyzmq-suite": [SuiteResult("pyzmq-suite libzmq-4.3.5 (oracle)", 3, 0),
                               SuiteResult("pyzmq-suite zlink", 3, 0)],
               "event-loops": [SuiteResult("event-loops epoll libzmq-4.3.5 (oracle)", 2, 0),
                               SuiteResult("event-loops epoll zlink", 2, 0)],
               "zlink-kernel": SuiteResult("zlink-kernel", 4, 0),
               "clang-format": SuiteResult("clang-format", 1, 0)}
    monkeypatch.setattr(test_cmd, "_zlink_suites", lambda args, selected, progress: results["zlink"])
    monkeypatch.setattr(test_cmd.libzmq_suite, "run", lambda options, progress: results["libzmq-suite"])
    monkeypatch.setattr(test_cmd, "run_pytest", lambda expr, extra=None: results["pytest"])
    monkeypatch.setattr(test_cmd, "start_pytest_beside", lambda extra=None: "beside")
    monkeypatch.setattr(test_cmd, "finish_pytest_beside", lambda side, extra=None: results["pytest"])
    monkeypatch.setattr(test_cmd, "stop_pytest_beside", lambda side: None)
    monkeypatch.setattr(test_cmd, "_api_diff", lambda: results["api-diff"])
    monkeypatch.setattr(test_cmd.pyzmq_suite, "run", lambda expr, progress: results["pyzmq-suite"])
    monkeypatch.setattr(test_cmd.event_loops, "run", lambda progress: results["event-loops"])
    monkeypatch.setattr(test_cmd.zlink_kernel, "run", lambda expr, progress: results["zlink-kernel"])
    monkeypatch.setattr(test_cmd, "run_clang_format", lambda: results["clang-format"])
    return results


def test_closing_line_sums_all_suites(fake_suites, capsys):
    assert test_cmd.main(_args()) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    # 1 build + 10 ctest + 20 libzmq suite + 6 pyzmq suite + 1 api-diff + 4 event-loops
    # + 4 zlink-kernel + 5 pytest + 1 clang-format
    assert lines[-1] == "52 passed, 0 failed"


def test_any_failure_fails_the_command(fake_suites, capsys):
    fake_suites["pytest"] = SuiteResult("pytest", 0, 1, ["pytest collected no test"])
    assert test_cmd.main(_args()) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "47 passed, 1 failed"


def test_only_narrows(fake_suites, capsys):
    assert test_cmd.main(_args(only=["pytest"])) == 0
    out = capsys.readouterr().out
    assert "zlink ctest" not in out and out.strip().splitlines()[-1] == "6 passed, 0 failed"


def test_clang_format_alone_builds_nothing_and_fails_the_command(fake_suites, monkeypatch, capsys):
    monkeypatch.setattr(test_cmd, "build_everything", lambda *a, **k: pytest.fail("built for a format check"))
    fake_suites["clang-format"] = SuiteResult("clang-format", 0, 1, ["not formatted (1 of 2 files): a.cpp"])
    assert test_cmd.main(_args(only=["clang-format"])) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "0 passed, 1 failed"


def test_api_diff_failure_fails_the_command(fake_suites, capsys):
    fake_suites["api-diff"] = SuiteResult("api-diff", 0, 1,
                                          ["api-diff: 10 answers, 1 differences, 1 unexplained"])
    assert test_cmd.main(_args(only=["api-diff"])) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "1 passed, 1 failed"


def test_fuzz_target_discovery(tmp_path):
    for name in ["zlink_fuzz_decoder", "fuzz_frame", "fuzz_decoder.cpp.o", "libzlink_fuzz.a", "confuzz_x"]:
        path = tmp_path / name
        path.write_text("")
        os.chmod(path, 0o755)
    (tmp_path / "fuzz_not_executable").write_text("")
    assert [p.name for p in test_cmd._fuzz_targets(tmp_path)] == ["fuzz_frame", "zlink_fuzz_decoder"]
    fuzz_src = tmp_path / "src"
    (fuzz_src / "corpus" / "decoder").mkdir(parents=True)
    assert test_cmd._seeds(fuzz_src, tmp_path / "zlink_fuzz_decoder") == fuzz_src / "corpus" / "decoder"


def test_suite_selection():
    assert test_cmd._selected(_args()) == {"zlink", "libzmq-suite", "pyzmq-suite", "api-diff", "event-loops",
                                           "zlink-kernel", "pytest", "clang-format"}
    assert test_cmd._selected(_args(only=["event-loops"])) == {"event-loops"}
    selected = test_cmd._selected(_args(only=["zlink"], sanitize=True, fuzz_seconds=30))
    assert selected == {"zlink", "sanitize", "fuzz"}
    assert test_cmd._selected(_args(only=["sanitize", "fuzz"])) == {"sanitize", "fuzz"}


def test_libzmq_suite_gets_the_regex_libraries_and_update_flag(fake_suites, monkeypatch):
    seen = []
    monkeypatch.setattr(test_cmd.libzmq_suite, "run", lambda options, progress: seen.append(options) or [])
    assert test_cmd.main(_args(only=["libzmq-suite"], ctest_regex="test_pair", suite_library=["zlink"],
                               update_expectations=True)) == 0
    assert seen == [test_cmd.libzmq_suite.Options(("zlink",), "test_pair", True, 1)]
    assert test_cmd.main(_args(suite_repeat=0)) == 2


def _curve_without_libsodium(monkeypatch):
    """CURVE's flags name libsodium's prefix, which curve_flags builds from the pinned
    crate (cargo): not what these tests are about, and the Nix check has no cargo."""
    monkeypatch.setattr(test_cmd.zlink_build, "curve_flags", lambda *a, **k: [test_cmd.zlink_build.CURVE_ON])


def test_tsan_suite_is_selectable_and_builds_zlink_under_thread_sanitizer(monkeypatch, tmp_path):
    _curve_without_libsodium(monkeypatch)
    assert test_cmd._selected(_args(only=["tsan"])) == {"tsan"}
    flags = test_cmd.tsan_flags(tmp_path)
    assert "-DCMAKE_BUILD_TYPE=Debug" in flags and "-DZLINK_BUILD_TESTS=ON" in flags
    assert f"-DZLINK_INTEROP_LIBZMQ_PREFIX={tmp_path}" in flags
    for var in ("CMAKE_CXX_FLAGS", "CMAKE_EXE_LINKER_FLAGS", "CMAKE_SHARED_LINKER_FLAGS"):
        assert any(f.startswith(f"-D{var}=") and "-fsanitize=thread" in f for f in flags), var
    assert not any("-fsanitize=address" in f for f in flags)
    assert test_cmd.TSAN_SUPPRESSIONS.is_file()
    options = test_cmd.TSAN_ENV["TSAN_OPTIONS"]
    assert f"suppressions={test_cmd.TSAN_SUPPRESSIONS}" in options and "halt_on_error=1" in options


def test_tsan_threads_scope_builds_and_runs_only_its_programs(monkeypatch, tmp_path):
    built, ran = {}, {}

    def build(kind, flags, progress, pick=None):
        built["targets"] = pick(["zlink_core_tests", "zlink_api_tests", "zlink_fault_peer",
                                 "zlink_engine_tests", "zlink_fault_tests", "zlink_socket_spec_tests"])
        return tmp_path

    monkeypatch.setattr(test_cmd.zlink_build, "configure_and_build", build)
    monkeypatch.setattr(test_cmd, "tests_of", lambda d, targets: ["Ypipe.Order", "Engine.Pair", "X.y+z"])
    monkeypatch.setattr(test_cmd, "run_ctest", lambda label, d, regex, env: ran.setdefault("regex", regex))
    test_cmd._zlink_ctest("tsan", "t", [], None, test_cmd.Progress(), targets=test_cmd.TSAN_THREAD_TARGETS)
    assert "zlink_api_tests" not in built["targets"] and "zlink_core_tests" in built["targets"]
    assert ran["regex"] == r"^(Ypipe\.Order|Engine\.Pair|X\.y\+z)$"
    ran.clear()
    threads = test_cmd.TSAN_THREAD_TARGETS
    test_cmd._zlink_ctest("tsan", "t", [], "Engine", test_cmd.Progress(), targets=threads)
    assert ran["regex"] == r"^(Engine\.Pair)$"
    # A filter that leaves nothing is a failure, never an empty pass.
    result = test_cmd._zlink_ctest("tsan", "t", [], "Nothing", test_cmd.Progress(),
                                   targets=test_cmd.TSAN_THREAD_TARGETS)
    assert result.failed == 1


def test_tests_of_reads_ctests_listing(monkeypatch, tmp_path):
    import json
    import subprocess

    from testbed.suites import runners as suites

    listing = {"tests": [{"name": "A.b", "command": ["/x/tests/core/zlink_core_tests", "--gtest_filter=A.b"]},
                         {"name": "C.d", "command": ["/x/tests/api/zlink_api_tests"]},
                         {"name": "zlink_core_tests_NOT_BUILT", "command": ["zlink_core_tests_NOT_BUILT"]}]}
    monkeypatch.setattr(subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, 0, json.dumps(listing), ""))
    assert suites.tests_of(tmp_path, ("zlink_core_tests",)) == ["A.b"]


def test_a_build_tree_of_another_checkout_is_rebuilt_not_reused(monkeypatch, tmp_path):
    from testbed.toolchain import zlink_build

    tree = tmp_path / "tsan"
    tree.mkdir()
    (tree / "stale.o").write_text("")
    (tree / "CMakeCache.txt").write_text(f"CMAKE_HOME_DIRECTORY:INTERNAL={tmp_path / 'elsewhere'}\n")
    zlink_build._forget_other_source(tree)
    assert not tree.exists()
    tree.mkdir()
    (tree / "CMakeCache.txt").write_text(f"CMAKE_HOME_DIRECTORY:INTERNAL={zlink_build.source_dir()}\n")
    zlink_build._forget_other_source(tree)
    assert (tree / "CMakeCache.txt").exists()


def test_pyzmq_suite_is_in_the_default_run_and_its_failures_count(fake_suites, capsys):
    fake_suites["pyzmq-suite"] = [SuiteResult("pyzmq-suite libzmq-4.3.5 (oracle)", 3, 0),
                                  SuiteResult("pyzmq-suite zlink", 2, 1, ["FAILED: tests/t.py::x"])]
    assert test_cmd.main(_args(only=["pyzmq-suite"])) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert "pyzmq-suite zlink: 2 passed, 1 failed (FAILED: tests/t.py::x)" in out
    assert out[-1] == "6 passed, 1 failed"  # 1 build + 3 + 2


def test_event_loop_and_kernel_failures_fail_the_command(fake_suites, capsys):
    fake_suites["event-loops"][1] = SuiteResult("event-loops epoll zlink", 1, 1, ["FAILED: arrival/tcp: ..."])
    assert test_cmd.main(_args(only=["event-loops"])) == 1
    fake_suites["zlink-kernel"] = SuiteResult("zlink-kernel", 0, 1, ["no kernel was verified"])
    assert test_cmd.main(_args(only=["zlink-kernel"])) == 1
    out = capsys.readouterr().out
    assert "event-loops epoll zlink: 1 passed, 1 failed" in out and "zlink-kernel: 0 passed, 1 failed" in out


def test_gcc14_suite_is_opt_in_and_counts_the_scripts_closing_line(fake_suites, monkeypatch, tmp_path,
                                                                   capsys):
    assert "gcc14" not in test_cmd._selected(_args())
    script = tmp_path / "gcc14.sh"
    monkeypatch.setattr(test_cmd.gcc14, "SCRIPT", script)
    # The regex reaches the script; its own closing line is what counts.
    script.write_text('echo "regex=$GCC14_CTEST_REGEX"; echo "1290 passed, 3 failed"; exit 1\n')
    assert test_cmd.main(_args(only=["gcc14"], ctest_regex="interop")) == 1
    out = capsys.readouterr().out
    assert "regex=interop" in out and "gcc14: 1290 passed, 3 failed" in out
    # A script that stops before its counts (the root could not be made) is a failure,
    # and so is a non-zero exit with nothing counted as failed.
    script.write_text('echo "debootstrap failed"; exit 1\n')
    assert test_cmd.main(_args(only=["gcc14"])) == 1
    assert "stopped (exit 1) before its counts" in capsys.readouterr().out
    script.write_text('echo "5 passed, 0 failed"; exit 2\n')
    assert test_cmd.main(_args(only=["gcc14"])) == 1
    assert "gcc14: 5 passed, 1 failed (nix/offline/gcc14.sh exited 2)" in capsys.readouterr().out
    script.write_text('echo "5 passed, 0 failed"\n')
    assert test_cmd.main(_args(only=["gcc14"])) == 0


def test_build_only_compiles_the_zlink_trees_and_runs_no_test(monkeypatch, tmp_path, capsys):
    """CI's background prebuild: each selected tree is configured and built (the fuzz
    tree with clang), nothing runs, no library build and no apt; one pass per tree."""
    built = []
    fuzz_exe = tmp_path / "zlink_fuzz_decoder"
    fuzz_exe.write_text("#!/bin/sh\n")
    fuzz_exe.chmod(0o755)

    def configure_and_build(kind, flags, progress, env=None, compilers=None, pick=None):
        built.append(kind)
        return tmp_path

    def never(*a, **k):
        pytest.fail("--build-only ran, installed or built something it must not")

    monkeypatch.setattr(test_cmd.zlink_build, "configure_and_build", configure_and_build)
    monkeypatch.setattr(test_cmd.zlink_build, "missing_reason", lambda: None)
    _curve_without_libsodium(monkeypatch)
    monkeypatch.setattr(test_cmd, "_interop_prefix", lambda: None)
    monkeypatch.setattr(test_cmd.system, "missing", lambda: ["clang"])
    for name in ("run_ctest", "run_fuzzer", "build_everything", "tests_of"):
        monkeypatch.setattr(test_cmd, name, never)
    monkeypatch.setattr(test_cmd.system, "ensure", never)
    args = _args(only=["sanitize", "fuzz", "tsan"], tsan_scope="threads", build_only=True)
    assert test_cmd.main(args) == 0
    assert built == ["sanitize", "tsan", "fuzz"]
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == "3 passed, 0 failed"
    assert "zlink fuzz build" in out and "no test run" in out


def test_build_only_refuses_suites_that_are_not_zlink_trees(capsys):
    assert test_cmd.main(_args(only=["sanitize", "pytest"], build_only=True)) == 2
    out = capsys.readouterr().out
    assert "--build-only goes with --only zlink / sanitize / tsan / fuzz (got pytest)" in out


def test_a_suite_that_raises_stops_the_pytest_beside(fake_suites, monkeypatch):
    """The second pytest starts before libzmq's suite; an exception must not leave it running."""
    side = subprocess.Popen(["sleep", "60"])
    monkeypatch.setattr(test_cmd, "start_pytest_beside", lambda extra=None: Beside(side, Path("x"), 0.0))
    monkeypatch.setattr(test_cmd, "stop_pytest_beside", stop_pytest_beside)

    def broken(options, progress):
        raise RuntimeError("a suite broke")

    monkeypatch.setattr(test_cmd.libzmq_suite, "run", broken)
    with pytest.raises(RuntimeError):
        test_cmd.main(_args())
    assert side.poll() is not None


@pytest.mark.parametrize("tree", ["sanitize", "tsan"])
def test_the_sanitizer_trees_compile_with_line_tables_and_asserts(monkeypatch, tmp_path, tree):
    """What CMake really puts on a compile line of the ASan/UBSan and TSan trees: its
    Debug type adds its own -g after CMAKE_CXX_FLAGS, so only the last -g option counts;
    it must be SANITIZER_DEBUG_INFO (-g1: the stacks a report shows, a fifth less
    compiling than -g), with the sanitizer on and NDEBUG never defined (asserts stay)."""
    _curve_without_libsodium(monkeypatch)
    flags = (test_cmd.zlink_build.sanitize_flags(None) if tree == "sanitize"
             else test_cmd.tsan_flags(None))
    keep = ("-DCMAKE_BUILD_TYPE=", "-DCMAKE_C_FLAGS", "-DCMAKE_CXX_FLAGS")
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\nproject(p CXX)\n"
                                        "add_library(p STATIC p.cpp)\n")
    (src / "p.cpp").write_text("int p() { return 1; }\n")
    subprocess.run(["cmake", "-S", str(src), "-B", str(tmp_path / "b"), *cmake.generator(),
                    "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", f"-DCMAKE_CXX_COMPILER={keys.cxx_compiler()}",
                    *[f for f in flags if f.startswith(keep)]],
                   check=True, capture_output=True)
    [entry] = json.loads((tmp_path / "b" / "compile_commands.json").read_text())
    args = entry["command"].split()
    assert [a for a in args if a.startswith("-g")][-1] == test_cmd.zlink_build.SANITIZER_DEBUG_INFO == "-g1"
    assert ("-fsanitize=thread" if tree == "tsan" else "-fsanitize=address,undefined") in args
    assert not any(a.startswith("-DNDEBUG") for a in args)
