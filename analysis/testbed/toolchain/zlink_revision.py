"""zlink at another revision as a library: `zlink@REV` (or `zlink-nocurve@REV`), REV
anything git resolves to a commit (a hash, tag, branch, `main~3`, `HEAD~1`).

The source is `git archive COMMIT -- zlink`, exported once per zlink tree into
build/sources/zlink-trees/<tree id>/zlink. It is built by the same ZlinkLibrary
recipe as the working tree's zlink: the flags come from baselines/pins.toml, the key
from the exported tree's NAR hash. So a revision whose zlink/ equals the working
tree's is the same build, and revisions that differ in zlink/ are different builds.
The commit is not part of the build (many commits share one zlink tree); it is
recorded beside it (`origin()`), in the library's info and so in the run manifest.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from testbed import paths
from testbed.toolchain import buildcache

SEPARATOR = "@"
ZLINK_DIR = "zlink"  # the folder of the repository that holds zlink
EXPORT_MARKER = ".testbed-exported"


class RevisionError(ValueError):
    """A `NAME@REV` that cannot be used: names the input and what is wrong."""


@dataclass(frozen=True)
class Revision:
    name: str      # as asked for, e.g. "zlink@main~3"
    flavour: str   # the registered library it is a revision of ("zlink", "zlink-nocurve")
    revision: str  # REV as written
    commit: str    # the full commit id REV resolved to
    tree: str      # git's id of COMMIT:zlink (equal trees share one export and one build)

    def origin(self) -> dict:
        """What the library's info and the run manifest record about where it came from."""
        return {"revision": self.revision, "commit": self.commit, "zlink_tree": self.tree}


def split(name: str) -> tuple[str, str] | None:
    """"zlink@main~3" -> ("zlink", "main~3"); a name without SEPARATOR -> None."""
    if SEPARATOR not in name:
        return None
    flavour, revision = name.split(SEPARATOR, 1)
    return flavour, revision


def _git(repo: Path, *argv: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(repo), *argv], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise RevisionError(f"git is needed to build zlink at a revision: {exc}") from None


def resolve(name: str, repo: Path | None = None) -> Revision:
    """Resolve `FLAVOUR@REV` in the repository (default: the testbed's own checkout)."""
    repo = repo or paths.REPO_ROOT
    parts = split(name)
    if parts is None or not parts[1]:
        raise RevisionError(f"{name!r}: expected NAME{SEPARATOR}REV with REV a commit, tag or branch")
    flavour, revision = parts
    found = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}")
    if found.returncode != 0:
        raise RevisionError(f"{name}: unknown revision {revision!r} in {repo} "
                            "(expected a commit, tag or branch git can resolve there)")
    commit = found.stdout.strip()
    tree = _git(repo, "rev-parse", "--verify", "--quiet", f"{commit}:{ZLINK_DIR}")
    kind = _git(repo, "cat-file", "-t", tree.stdout.strip()) if tree.returncode == 0 else None
    if kind is None or kind.stdout.strip() != "tree":
        raise RevisionError(f"{name}: revision {revision!r} (commit {commit[:12]}) has no {ZLINK_DIR}/ "
                            "folder, so there is no zlink to build")
    return Revision(name, flavour, revision, commit, tree.stdout.strip())


def export(rev: Revision, repo: Path | None = None) -> Path:
    """The revision's zlink/ as a plain tree (cached per zlink tree id)."""
    repo = repo or paths.REPO_ROOT

    def unpack(work: Path) -> None:
        archive = subprocess.Popen(["git", "-C", str(repo), "archive", "--format=tar", rev.commit, "--",
                                    ZLINK_DIR], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        untar = subprocess.run(["tar", "-x", "-C", str(work)], stdin=archive.stdout, capture_output=True,
                               timeout=300)
        archive.stdout.close()
        error = archive.stderr.read().decode(errors="replace").strip()
        if archive.wait(timeout=60) != 0 or untar.returncode != 0:
            raise RevisionError(f"{rev.name}: git archive {rev.commit[:12]} -- {ZLINK_DIR} | tar -x failed: "
                                f"{error or untar.stderr.decode(errors='replace').strip()}")
        (work / EXPORT_MARKER).write_text(f"{rev.tree}\n")

    root = paths.SOURCES_DIR / "zlink-trees"
    return buildcache.cached(root, rev.tree, EXPORT_MARKER, unpack) / ZLINK_DIR
