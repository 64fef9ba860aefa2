"""The security-cost experiment's second file, handshake.toml (not found by the
shipped-experiment glob, which reads only experiment.toml): it validates in every
profile, crosses NULL and CURVE for both libraries, and dry-runs."""
from __future__ import annotations

import subprocess
import sys

import pytest

from test_sweep_support import ANALYSIS
from testbed import paths
from testbed.sweep import config, plan

HANDSHAKE = paths.EXPERIMENTS_DIR / "security-cost" / "handshake.toml"



@pytest.mark.parametrize("profile", config.PROFILE_NAMES)
def test_handshake_experiment_crosses_both_mechanisms(profile):
    exp = config.load(HANDSHAKE, profile, ["libzmq-4.3.5", "zlink"])
    cells = plan.expand(exp)
    seen = {(c.library, c.params["BENCH_SECURITY"]) for c in cells}
    assert seen == {(lib, sec) for lib in ("libzmq-4.3.5", "zlink") for sec in ("null", "curve")}
    assert all(c.transport == "tcp" for c in cells)


def test_handshake_experiment_dry_runs():
    argv = [sys.executable, "-m", "testbed.cli", "run", str(HANDSHAKE), "--profile", "quick", "--dry-run"]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ANALYSIS)
    assert proc.returncode == 0, proc.stderr
    assert "cells: 4;" in proc.stdout
