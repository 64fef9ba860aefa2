"""Where things live. Every path the package uses is derived here, so a layout
change is one edit and tests can point the whole package at a temporary root."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(os.environ.get("TESTBED_ROOT", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("TESTBED_BUILD_DIR", REPO_ROOT / "build"))
SOURCES_DIR = BUILD_DIR / "sources"
LIBS_DIR = BUILD_DIR / "libs"
BENCH_BUILD_DIR = BUILD_DIR / "bench"
# Tools installed by setup from the Rust crate registry (cargo install --root here).
TOOLS_DIR = BUILD_DIR / "tools"
BASELINES_DIR = REPO_ROOT / "baselines"
BENCH_SRC_DIR = REPO_ROOT / "bench"
ZLINK_SRC_DIR = REPO_ROOT / "zlink"
EXPERIMENTS_DIR = REPO_ROOT / "experiments"
RESULTS_DIR = Path(os.environ.get("TESTBED_RESULTS_DIR", REPO_ROOT / "results"))
REPORTS_DIR = REPO_ROOT / "reports"
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
SEEDS_DIR = Path(os.environ.get("TESTBED_SEEDS_DIR", REPO_ROOT.parent / "shared" / "seeds"))
