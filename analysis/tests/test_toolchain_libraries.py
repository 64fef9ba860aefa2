"""The library table API (find_built / ensure_built / TESTBED_PREBUILT) and the
testbed-lib.json contract (docs/data-formats.md §2)."""
from __future__ import annotations

import copy
import json
import re
import subprocess

import pytest

from testbed import paths
from testbed.toolchain import baselines, bench_build, cmake, keys, libraries
from testbed.toolchain.progress import Progress

INFO_KEYS = {"name", "version", "build_id", "source_hash", "flags", "compiler", "curve", "link_name"}


def test_registered_names():
    assert libraries.registered_names()[:2] == ["libzmq-4.3.5", "libzmq-4.3.5-nocurve"]
    assert "zlink" in libraries.registered_names()


def test_unknown_library_names_the_choices():
    with pytest.raises(libraries.LibraryUnavailable, match="unknown library 'zmq9'.*libzmq-4.3.5"):
        libraries.find_built("zmq9")


def _fake_prefix(root, name):
    prefix = root / name / "prefix"
    (prefix / "lib").mkdir(parents=True)
    info = {"name": name, "version": "0", "build_id": "0" * 16, "source_hash": "sha256-x", "flags": [],
            "compiler": "cc", "curve": False, "link_name": "zmq"}
    (prefix / libraries.INFO_FILE).write_text(json.dumps(info))
    return prefix


def test_prebuilt_listing_is_used_and_nothing_built(tmp_path, monkeypatch):
    prefix = _fake_prefix(tmp_path, "libzmq-4.3.5")
    listing = tmp_path / "libs.json"
    listing.write_text(json.dumps({"libraries": {"libzmq-4.3.5": {"prefix": str(prefix),
                                                                   "bench_dir": str(tmp_path / "b")}}}))
    monkeypatch.setenv("TESTBED_PREBUILT", str(listing))
    built = libraries.ensure_built("libzmq-4.3.5")
    assert built.prefix == prefix and built.info["build_id"] == "0" * 16
    assert built.bench_binary("DEALER_ROUTER") == tmp_path / "b" / "bench_dealer_router"
    assert libraries.find_built("libzmq-4.3.5") == built
    with pytest.raises(libraries.LibraryUnavailable, match="zlink: not listed in TESTBED_PREBUILT"):
        libraries.find_built("zlink")


def test_zlink_without_cmakelists_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "ZLINK_SRC_DIR", tmp_path)
    with pytest.raises(libraries.LibraryUnavailable, match="zlink: .*CMakeLists.txt does not exist"):
        libraries.ensure_built("zlink")


def test_key_changes_with_flags_and_source(monkeypatch):
    flavour = libraries.LIBRARIES["libzmq-4.3.5"]
    base, original = flavour.key(), baselines.pinned()
    more_flags = copy.deepcopy(original)
    more_flags["flavours"]["libzmq-4.3.5"]["cmake_flags"].append("-DWITH_MILITANT=ON")
    other_source = copy.deepcopy(original)
    other_source["libzmq"]["nar_hash"] = "sha256-other"
    for changed in (more_flags, other_source):
        monkeypatch.setattr(baselines, "pinned", lambda changed=changed: changed)
        assert flavour.key() != base
    monkeypatch.setattr(baselines, "pinned", lambda: copy.deepcopy(original))
    assert flavour.key() == base  # and nothing else (no time, no randomness) goes in


def test_bench_flags_are_identical_for_every_library(monkeypatch, tmp_path):
    seen = {}

    def fake_configure(src, build, flags, progress, **kw):
        seen[flags[-2]] = flags  # keyed by BENCH_LIB_NAME
        raise RuntimeError("stop after configure")

    monkeypatch.setattr(cmake, "configure", fake_configure)
    monkeypatch.setattr(paths, "BENCH_BUILD_DIR", tmp_path)
    monkeypatch.setattr(paths, "BENCH_SRC_DIR", tmp_path / "src")
    (tmp_path / "src").mkdir()
    for name, link in (("libzmq-4.3.5", "zmq"), ("zlink", "zlink")):
        info = {"name": name, "link_name": link, "build_id": "1" * 16}
        with pytest.raises(RuntimeError):
            bench_build.ensure(tmp_path / name, info, Progress(plain=True, quiet=True))
    a, b = seen.values()
    def common(flags):
        return [f for f in flags if not f.startswith("-DBENCH_LIB_")]
    # ccache's launcher, where installed, is the same for all and no compiler flag
    launcher = [f for f in common(a) if "_COMPILER_LAUNCHER=" in f]
    assert common(a) == common(b) == bench_build.BENCH_FLAGS + launcher


@pytest.mark.slow
@pytest.mark.parametrize("name", ["libzmq-4.3.5", "libzmq-4.3.5-nocurve"])
def test_baseline_prefix_and_info(name):
    built = libraries.ensure_built(name, bench=False, progress=Progress(plain=True, quiet=True))
    assert (built.prefix / "include" / "zmq.h").is_file()
    assert (built.prefix / "lib" / "libzmq.so").exists()
    info = json.loads((built.prefix / "testbed-lib.json").read_text())
    assert INFO_KEYS <= set(info) and info == built.info
    assert re.fullmatch(r"[0-9a-f]{16}", info["build_id"]) and built.prefix.parent.name == info["build_id"]
    first_line = subprocess.run([keys.cxx_compiler(), "--version"], capture_output=True, text=True).stdout
    assert info["compiler"] == first_line.splitlines()[0].strip()
    assert info["source_hash"] == baselines.pinned()["libzmq"]["nar_hash"]
    assert info["flags"] == baselines.pinned()["flavours"][name]["cmake_flags"]
    assert libraries.find_built(name, bench=False).prefix == built.prefix


def test_tree_hash_ignores_top_level_build_folders_only(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cpp").write_text("int a;\n")
    base = keys.tree_hash(tmp_path)
    (tmp_path / "build-asan").mkdir()
    (tmp_path / "build-asan" / "a.o").write_text("obj")
    assert keys.tree_hash(tmp_path) == base
    (tmp_path / "src" / "builder.cpp").write_text("int b;\n")  # a source, despite its name
    assert keys.tree_hash(tmp_path) != base
