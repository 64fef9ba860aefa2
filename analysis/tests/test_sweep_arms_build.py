"""`./testbed run` builds the arms binaries before it chooses a layout (sweep/arms.py
build_bench): a clone whose sources moved since `./testbed setup` must not quietly run
blocks under `auto` because its arms binaries are out of date."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from testbed.bench import arms_binaries
from testbed.sweep import arms, run_cmd


def _exp(layout: str, kind: str = "bench", counting_runs: int = 0):
    return SimpleNamespace(kind=kind, design=SimpleNamespace(layout=layout, counting_runs=counting_runs))


@pytest.fixture
def builds(monkeypatch):
    """Each arms_dir call, with whether it was asked to build (a Progress given)."""
    calls: list[bool] = []
    monkeypatch.delenv("TESTBED_PREBUILT", raising=False)
    monkeypatch.setattr(arms_binaries, "arms_dir", lambda progress=None: calls.append(progress is not None))
    return calls


@pytest.mark.parametrize("layout", ["auto", "arms"])
def test_auto_and_arms_build_the_arms_bench(builds, layout):
    arms.build_bench(_exp(layout), warn=pytest.fail)
    assert builds == [True]


@pytest.mark.parametrize("exp", [_exp("blocks"), _exp("auto", kind="perf-tools")])
def test_blocks_and_whole_process_experiments_build_nothing(builds, exp):
    arms.build_bench(exp, warn=pytest.fail)
    assert builds == []


def test_blocks_with_counting_runs_build_the_arms_bench(builds):
    """A blocks run's counting runs are arms-bench runs (security-cost): it needs the binaries."""
    arms.build_bench(_exp("blocks", counting_runs=6), warn=pytest.fail)
    assert builds == [True]


def test_prebuilt_binaries_are_not_built(builds, monkeypatch):
    monkeypatch.setenv("TESTBED_PREBUILT", "/nonexistent/libs.json")
    arms.build_bench(_exp("auto"), warn=pytest.fail)
    assert builds == []


def test_a_failed_build_is_said_and_the_run_goes_on(monkeypatch):
    monkeypatch.delenv("TESTBED_PREBUILT", raising=False)

    def broken(progress=None):
        raise RuntimeError("cmake: no compiler")
    monkeypatch.setattr(arms_binaries, "arms_dir", broken)
    said: list[str] = []
    arms.build_bench(_exp("auto"), warn=said.append)
    assert said and "cmake: no compiler" in said[0]


@pytest.mark.parametrize("no_build, expected", [(False, 1), (True, 0)])
def test_run_builds_the_arms_bench_unless_told_not_to_build(monkeypatch, no_build, expected):
    monkeypatch.setenv("TESTBED_PREBUILT", "/nonexistent/libs.json")  # skip the system install step
    monkeypatch.setattr(run_cmd.libsmod, "resolve", lambda names, build: ({}, {}))
    called: list[object] = []
    monkeypatch.setattr(arms, "build_bench", lambda exp, warn: called.append(exp))
    exp = SimpleNamespace(libraries=[], kind="bench", design=SimpleNamespace(layout="auto"))
    run_cmd._libraries(exp, SimpleNamespace(no_build=no_build))
    assert len(called) == expected
