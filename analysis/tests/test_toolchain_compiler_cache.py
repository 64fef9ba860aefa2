"""ccache for zlink and bench builds (toolchain/compiler_cache.py) and the copy of the
source a zlink build compiles (zlink_build.ZlinkLibrary._build_source): what makes an
unchanged file hit in the build of another revision."""
from __future__ import annotations

from testbed import paths
from testbed.toolchain import compiler_cache, zlink_build


def test_no_ccache_no_launcher(monkeypatch):
    monkeypatch.setattr(compiler_cache.shutil, "which", lambda name: None)
    assert compiler_cache.launcher_flags() == []


def test_launcher_runs_ccache_with_paths_relative_to_the_build_root(monkeypatch, tmp_path):
    monkeypatch.setattr(compiler_cache.shutil, "which", lambda name: "/usr/bin/ccache")
    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path)
    flags = compiler_cache.launcher_flags()
    launcher = (f"env;CCACHE_DIR={tmp_path / 'ccache'};CCACHE_BASEDIR={tmp_path};CCACHE_NOHASHDIR=1;"
                "/usr/bin/ccache")
    assert flags == [f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}", f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}"]


def test_a_build_compiles_a_copy_inside_its_directory_without_build_outputs(tmp_path):
    source = tmp_path / "rev" / "zlink"
    (source / "src").mkdir(parents=True)
    (source / "src" / "a.cpp").write_text("int a;\n")
    (source / "CMakeLists.txt").write_text("project(z)\n")
    (source / "build-debug").mkdir()  # a local build folder: not part of the key, not copied
    (source / "build-debug" / "big.o").write_text("x")
    work = tmp_path / "libs" / "key"
    work.mkdir(parents=True)
    copy = zlink_build.ZlinkLibrary(source=source)._build_source(work)
    assert copy == work / "zlink" and (copy / "src" / "a.cpp").read_text() == "int a;\n"
    assert not (copy / "build-debug").exists()
