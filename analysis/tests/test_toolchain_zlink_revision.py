"""zlink@REV as a library (toolchain/zlink_revision.py, libraries.py): built from the
revision's zlink/ (never the working tree's), keyed by that source, its commit
carried into the library's info; bad revisions named in the error. A tiny git
repository stands in for the project; the build step is replaced by one that copies
the source it was given, so a test sees exactly which tree a build came from."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testbed import paths
from testbed.toolchain import libraries, zlink_build, zlink_revision
from testbed.toolchain.progress import Progress


def _git(repo: Path, *argv: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                           *argv], check=True, capture_output=True, text=True).stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """Commits: bare (no zlink/), one (zlink v1), two (zlink v2, tag v2), docs (zlink
    as in two); the working tree then has an uncommitted zlink edit."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    commits = {"bare": _commit(root, {"README": "x\n"}, "bare")}
    commits["one"] = _commit(root, {"zlink/CMakeLists.txt": "project(z)\n", "zlink/src/a.cpp": "v1\n"}, "one")
    commits["two"] = _commit(root, {"zlink/src/a.cpp": "v2\n"}, "two")
    _git(root, "tag", "v2")
    commits["docs"] = _commit(root, {"README": "y\n"}, "docs only")
    (root / "zlink/src/a.cpp").write_text("uncommitted\n")
    build = tmp_path / "build"
    monkeypatch.delenv("TESTBED_PREBUILT", raising=False)  # these tests build (a stand-in), never list
    monkeypatch.setattr(paths, "REPO_ROOT", root)
    monkeypatch.setattr(paths, "ZLINK_SRC_DIR", root / "zlink")
    monkeypatch.setattr(paths, "SOURCES_DIR", build / "sources")
    monkeypatch.setattr(paths, "LIBS_DIR", build / "libs")
    return commits


def _copying_build(self, work: Path, progress: Progress) -> dict:
    """Stands in for the CMake build: the 'library' is the source file it was given."""
    (work / "prefix").mkdir(parents=True)
    (work / "prefix" / "a.cpp").write_text((self.source_dir() / "src/a.cpp").read_text())
    return self.describe("0")


def test_revisions_resolve_to_full_commits_and_their_zlink_trees(repo):
    one = zlink_revision.resolve("zlink@main~2")
    two = zlink_revision.resolve("zlink@v2")
    docs = zlink_revision.resolve("zlink@main")
    assert (one.commit, two.commit, docs.commit) == (repo["one"], repo["two"], repo["docs"])
    assert one.tree != two.tree and two.tree == docs.tree  # a docs-only commit keeps zlink's tree
    assert one.origin() == {"revision": "main~2", "commit": repo["one"], "zlink_tree": one.tree}


def test_export_is_the_revision_not_the_working_tree(repo):
    one = zlink_revision.export(zlink_revision.resolve(f"zlink@{repo['one'][:10]}"))
    two = zlink_revision.export(zlink_revision.resolve("zlink@v2"))
    assert (one / "src/a.cpp").read_text() == "v1\n"
    assert (two / "src/a.cpp").read_text() == "v2\n"
    assert zlink_revision.export(zlink_revision.resolve("zlink@main")) == two  # one export per tree


def test_keys_follow_the_revision_source(repo):
    names = ("zlink@main~2", "zlink@v2", "zlink@main", "zlink")
    key = {name: libraries._recipe(name)[0].key() for name in names}
    assert key["zlink@main~2"] != key["zlink@v2"]
    assert key["zlink@v2"] == key["zlink@main"]  # same zlink tree: one build, whatever the commit
    assert key["zlink"] not in (key["zlink@v2"], key["zlink@main~2"])  # the working tree is edited
    (paths.REPO_ROOT / "zlink/src/a.cpp").write_text("v2\n")
    assert libraries._recipe("zlink")[0].key() == key["zlink@v2"]  # ...and now it is not
    nocurve = libraries._recipe("zlink-nocurve@v2")[0]
    assert nocurve.curve is False and nocurve.flags() == libraries.LIBRARIES["zlink-nocurve"].flags()
    assert libraries._recipe("zlink@v2")[0].flags() == libraries.LIBRARIES["zlink"].flags()


def test_builds_differ_by_revision_and_carry_the_commit(repo, monkeypatch):
    monkeypatch.setattr(zlink_build.ZlinkLibrary, "build", _copying_build)
    quiet = Progress(plain=True, quiet=True)
    one = libraries.ensure_built("zlink@main~2", bench=False, progress=quiet)
    two = libraries.ensure_built("zlink@v2", bench=False, progress=quiet)
    assert (one.prefix / "a.cpp").read_text() == "v1\n" and (two.prefix / "a.cpp").read_text() == "v2\n"
    assert one.name == "zlink@main~2" and one.info["revision"] == "main~2"
    assert one.info["commit"] == repo["one"]
    assert one.info["build_id"] != two.info["build_id"]
    assert one.info["source_hash"] != two.info["source_hash"]
    docs = libraries.find_built("zlink@main", bench=False)
    assert docs.prefix == two.prefix and docs.info["commit"] == repo["docs"]
    # The shared build's own record names no commit: it serves every commit with that tree.
    assert "commit" not in json.loads((two.prefix / libraries.INFO_FILE).read_text())


@pytest.mark.parametrize("name,message", [
    ("zlink@nope", r"zlink@nope: unknown revision 'nope'"),
    ("zlink@main~9", r"zlink@main~9: unknown revision 'main~9'"),
    ("zlink@", r"'zlink@': expected NAME@REV"),
    ("libzmq-4.3.5@main", r"unknown library 'libzmq-4.3.5@main'.*zlink, zlink-nocurve \+ @REV"),
])
def test_bad_names_are_named(repo, name, message):
    with pytest.raises(libraries.LibraryUnavailable, match=message):
        libraries.check_name(name)


def test_revision_without_zlink_is_refused(repo):
    with pytest.raises(libraries.LibraryUnavailable, match=r"revision 'main~3' .*has no zlink/ folder"):
        libraries.find_built("zlink@main~3")
