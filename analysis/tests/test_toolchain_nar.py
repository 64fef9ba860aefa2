"""NAR hashing: must agree with Nix byte for byte, since the pinned libzmq hash is
Nix's and the Nix path pins the same source by it."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from testbed.toolchain.nar import nar_hash, serialise

# `nix hash path --type sha256` of the tree made by make_tree(), computed once with
# nix 2.8.0 and pinned so the check holds on hosts without nix.
KNOWN_TREE_HASH = "sha256-pi/ISI25hU9jxz0ZQno+T/OpNvhOQOGJmcIACP2ZAYw="


def make_tree(root: Path) -> Path:
    """Covers each NAR node kind and the padding cases: empty file, length 8, odd
    length, executable bit, symlink, nested and empty directories, name sorting."""
    tree = root / "tree"
    (tree / "sub" / "deeper").mkdir(parents=True)
    (tree / "empty-dir").mkdir()
    (tree / "empty.txt").write_bytes(b"")
    (tree / "eight.bin").write_bytes(b"12345678")
    (tree / "odd.txt").write_bytes(b"hello, nar\n")
    (tree / "B-upper-sorts-first").write_bytes(b"B")
    (tree / "sub" / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    os.chmod(tree / "sub" / "run.sh", 0o755)
    (tree / "sub" / "deeper" / "data").write_bytes(bytes(range(256)) * 3)
    os.symlink("sub/run.sh", tree / "link")
    for path in [tree, *tree.rglob("*")]:
        if not path.is_symlink():
            os.utime(path, (1_000_000, 1_000_000))  # times must not matter; fix them anyway
    return tree


def nix_hash(path: Path) -> str:
    out = subprocess.run(["nix", "--extra-experimental-features", "nix-command", "hash", "path", "--type",
                          "sha256", str(path)], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_known_tree_matches_pinned_nix_hash(tmp_path):
    assert nar_hash(make_tree(tmp_path)) == KNOWN_TREE_HASH


@pytest.mark.skipif(shutil.which("nix") is None, reason="nix not installed: pinned hash still checked above")
def test_known_tree_matches_live_nix(tmp_path):
    tree = make_tree(tmp_path)
    assert nar_hash(tree) == nix_hash(tree)


def test_hash_sees_content_mode_and_link_changes(tmp_path):
    tree = make_tree(tmp_path)
    base = nar_hash(tree)
    os.chmod(tree / "sub" / "run.sh", 0o644)
    assert nar_hash(tree) != base
    os.chmod(tree / "sub" / "run.sh", 0o755)
    assert nar_hash(tree) == base
    (tree / "link").unlink()
    os.symlink("odd.txt", tree / "link")
    assert nar_hash(tree) != base


def test_hash_ignores_timestamps(tmp_path):
    tree = make_tree(tmp_path)
    base = nar_hash(tree)
    os.utime(tree / "odd.txt", (2_000_000, 2_000_000))
    assert nar_hash(tree) == base


def test_single_file_bytes():
    # A regular file "ab": every token is u64 length + bytes + zero padding to 8.
    def tok(data: bytes) -> bytes:
        return len(data).to_bytes(8, "little") + data + b"\0" * (-len(data) % 8)

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f"
        path.write_bytes(b"ab")
        chunks: list[bytes] = []
        serialise(path, chunks.append)
    expected = b"".join(
        tok(t) for t in [b"nix-archive-1", b"(", b"type", b"regular", b"contents", b"ab", b")"]
    )
    assert b"".join(chunks) == expected


def test_skip_predicate_drops_entries(tmp_path):
    tree = make_tree(tmp_path)
    base = nar_hash(tree)
    (tree / "build").mkdir()
    (tree / "build" / "junk.o").write_bytes(b"x")
    assert nar_hash(tree) != base
    assert nar_hash(tree, lambda p: p.name == "build") == base
