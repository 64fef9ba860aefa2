"""The analysis package passes its own lint: `ruff check` with the configuration in
analysis/pyproject.toml ([tool.ruff]), so `./testbed test` catches a new long line,
an unused import or an unsorted import block as it is written."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ANALYSIS = Path(__file__).resolve().parents[1]


def test_ruff_passes_on_analysis():
    # ruff is a declared dev dependency (pyproject [project.optional-dependencies]);
    # its absence is a broken environment, not a reason to skip.
    assert importlib.util.find_spec("ruff") is not None, "ruff missing: ./testbed installs analysis[dev]"
    argv = [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."]
    proc = subprocess.run(argv, cwd=ANALYSIS, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ruff check failed:\n{proc.stdout}{proc.stderr}"
