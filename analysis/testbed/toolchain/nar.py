"""NAR (Nix ARchive) serialisation and its sha256, so a source tree can be checked
against the same hash Nix uses (`nix hash path --type sha256`) on hosts without Nix.

The format (from the Nix thesis, ch. 5.2.1): every token is a string written as a
little-endian u64 length, the bytes, and zero padding to a multiple of 8. A file is
"(" type regular [executable ""] contents <bytes> ")"; a symlink is
"(" type symlink target <path> ")"; a directory lists its entries sorted by name,
each as entry ( name <n> node <node> ). Only the executable bit of modes survives,
and timestamps and owners are not recorded at all: that is why one hash can pin a
tree however it was unpacked.
"""
from __future__ import annotations

import base64
import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

_CHUNK = 1 << 20


def _token(sink: Callable[[bytes], None], data: bytes) -> None:
    sink(len(data).to_bytes(8, "little"))
    sink(data)
    if len(data) % 8:
        sink(b"\0" * (8 - len(data) % 8))


def _file_contents(sink: Callable[[bytes], None], path: Path, size: int) -> None:
    # Streamed so a large file never sits in memory whole.
    sink(size.to_bytes(8, "little"))
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            sink(chunk)
    if size % 8:
        sink(b"\0" * (8 - size % 8))


def _node(sink: Callable[[bytes], None], path: Path, skip: Callable[[Path], bool]) -> None:
    info = os.lstat(path)
    _token(sink, b"(")
    _token(sink, b"type")
    if stat.S_ISLNK(info.st_mode):
        _token(sink, b"symlink")
        _token(sink, b"target")
        _token(sink, os.fsencode(os.readlink(path)))
    elif stat.S_ISREG(info.st_mode):
        _token(sink, b"regular")
        if info.st_mode & stat.S_IXUSR:
            _token(sink, b"executable")
            _token(sink, b"")
        _token(sink, b"contents")
        _file_contents(sink, path, info.st_size)
    elif stat.S_ISDIR(info.st_mode):
        _token(sink, b"directory")
        # Nix sorts entry names as byte strings.
        for name in sorted(os.listdir(path), key=os.fsencode):
            child = path / name
            if skip(child):
                continue
            _token(sink, b"entry")
            _token(sink, b"(")
            _token(sink, b"name")
            _token(sink, os.fsencode(name))
            _token(sink, b"node")
            _node(sink, child, skip)
            _token(sink, b")")
    else:
        raise ValueError(f"{path}: NAR can only hold files, directories and symlinks")
    _token(sink, b")")


def serialise(path: Path, sink: Callable[[bytes], None], skip: Callable[[Path], bool] | None = None) -> None:
    """Write the NAR of `path` to `sink`; `skip(child)` drops entries (used to hash a
    working tree without its build folders; a pinned source is never hashed with it)."""
    _token(sink, b"nix-archive-1")
    _node(sink, Path(path), skip or (lambda _p: False))


def nar_hash(path: Path, skip: Callable[[Path], bool] | None = None) -> str:
    """SRI form, as `nix hash path --type sha256` prints it: sha256-<base64>."""
    digest = hashlib.sha256()
    serialise(path, digest.update, skip)
    return "sha256-" + base64.b64encode(digest.digest()).decode("ascii")
