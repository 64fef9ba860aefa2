"""The clang-format suite of `./testbed test` fails on a misformatted tracked C++
file and names it, and passes once the file is formatted (a tiny git repository
with the project's own .clang-format stands in for the checkout)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testbed import paths
from testbed.suites import runners as suites

ROOT_CONFIG = Path(__file__).resolve().parents[2] / ".clang-format"
GOOD = "int add(int a, int b) { return a + b; }\n"  # LLVM: short functions on one line


@pytest.fixture
def repo(tmp_path, monkeypatch):
    if not (Path(sys.executable).parent / "clang-format").exists():
        pytest.fail("clang-format missing: ./testbed installs analysis[dev]")
    shutil.copy(ROOT_CONFIG, tmp_path / ".clang-format")
    (tmp_path / "good.cpp").write_text(GOOD)
    (tmp_path / "bad.cpp").write_text("int  sub(int a,int b){return a-b;}\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    return tmp_path


def test_fails_naming_the_misformatted_file(repo):
    result = suites.run_clang_format()
    assert (result.passed, result.failed) == (0, 1)
    assert "bad.cpp" in result.notes[0] and "good.cpp" not in result.notes[0]


def test_passes_when_every_file_is_formatted(repo):
    (repo / "bad.cpp").write_text("int sub(int a, int b) { return a - b; }\n")
    result = suites.run_clang_format()
    assert (result.passed, result.failed) == (1, 0), result.notes
