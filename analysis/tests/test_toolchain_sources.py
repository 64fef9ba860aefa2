"""A source tree that does not hash to its pin is refused, naming both hashes."""
from __future__ import annotations

import os
import shutil

import pytest

from testbed.toolchain import pins, sources
from testbed.toolchain.progress import Progress


@pytest.fixture(scope="module")
def pinned_tree():
    # Fetches the crate on first use (cargo; crates registry), as setup does.
    return sources.libzmq_source(pins.load(), Progress(plain=True, quiet=True))


@pytest.fixture
def tree_copy(pinned_tree, tmp_path):
    copy = tmp_path / "libzmq"
    shutil.copytree(pinned_tree, copy, symlinks=True)
    return copy


@pytest.mark.slow
def test_untouched_copy_is_accepted(tree_copy):
    sources.verify_tree(tree_copy, pins.load()["libzmq"]["nar_hash"])


@pytest.mark.slow
def test_tampered_content_is_refused(tree_copy):
    target = tree_copy / "src" / "zmq.cpp"
    target.write_bytes(target.read_bytes().replace(b"zmq_has", b"zmq_hax", 1))
    expected = pins.load()["libzmq"]["nar_hash"]
    with pytest.raises(sources.SourceMismatch) as info:
        sources.verify_tree(tree_copy, expected)
    message = str(info.value)
    assert expected in message
    actual = message.split("NAR hash is ")[1].split(",")[0]
    assert actual.startswith("sha256-") and actual != expected


@pytest.mark.slow
def test_tampered_mode_is_refused(tree_copy):
    os.chmod(tree_copy / "autogen.sh", 0o644)  # executable bit is part of the hash
    with pytest.raises(sources.SourceMismatch, match="expected sha256-q2h5"):
        sources.verify_tree(tree_copy, pins.load()["libzmq"]["nar_hash"])


@pytest.mark.slow
def test_override_tree_goes_through_the_same_check(tree_copy, monkeypatch):
    (tree_copy / "EXTRA").write_text("not part of 4.3.5\n")
    monkeypatch.setenv("TESTBED_LIBZMQ_SOURCE", str(tree_copy))
    with pytest.raises(sources.SourceMismatch, match="TESTBED_LIBZMQ_SOURCE"):
        sources.libzmq_source(pins.load(), Progress(plain=True, quiet=True))


def test_tarball_hash_mismatch_is_refused(tmp_path):
    blob = tmp_path / "LATEST.tar.gz"
    blob.write_bytes(b"not libsodium")
    with pytest.raises(sources.SourceMismatch, match="expected eb9873cc"):
        sources.verify_file(blob, pins.load()["libsodium"]["sha256"], "libsodium tarball")
