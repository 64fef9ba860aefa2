"""Fetch and verify the pinned baseline sources.

The libzmq tree and the libsodium tarball both come from crates (the registry this
machine can reach), fetched by cargo itself in a throwaway project under
build/sources/. `TESTBED_LIBZMQ_SOURCE=<dir>` may name a tree obtained another way
(e.g. the upstream tag); it must pass the same NAR hash check.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from testbed import paths
from testbed.toolchain.nar import nar_hash
from testbed.toolchain.progress import Progress


class SourceMismatch(Exception):
    """A source does not hash to its pin; the message names expected and actual."""


class FetchFailed(Exception):
    pass


def verify_tree(tree: Path, expected: str, what: str = "source tree") -> None:
    actual = nar_hash(tree)
    if actual != expected:
        raise SourceMismatch(
            f"{what} {tree} refused: NAR hash is {actual}, expected {expected} (baselines/pins.toml)"
        )


def verify_file(path: Path, expected_hex: str, what: str = "file") -> None:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    if digest.hexdigest() != expected_hex:
        raise SourceMismatch(
            f"{what} {path} refused: sha256 is {digest.hexdigest()}, "
            f"expected {expected_hex} (baselines/pins.toml)"
        )


def _fetch_project(pins: dict) -> Path:
    """The throwaway cargo project whose only job is to make cargo fetch the crates."""
    project = paths.SOURCES_DIR / "cargo-fetch"
    (project / "src").mkdir(parents=True, exist_ok=True)
    (project / "src" / "lib.rs").write_text("")
    deps = "\n".join(
        f'{crate["name"]} = "={crate["version"]}"'
        for crate in (pins["libzmq"]["crate"], pins["libsodium"]["crate"])
    )
    manifest = (
        "# Written by ./testbed setup: exists only so cargo fetches the pinned crates.\n"
        '[package]\nname = "testbed-source-fetch"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        f"[dependencies]\n{deps}\n"
    )
    target = project / "Cargo.toml"
    if not target.exists() or target.read_text() != manifest:
        target.write_text(manifest)
    return project


_crates_seen: dict[str, Path] = {}  # one cargo fetch per process is enough


def crate_dirs(pins: dict, progress: Progress) -> dict[str, Path]:
    """name -> unpacked crate folder, as cargo unpacked it in its registry cache."""
    wanted = {pins["libzmq"]["crate"]["name"], pins["libsodium"]["crate"]["name"]}
    if wanted <= _crates_seen.keys() and all(_crates_seen[n].is_dir() for n in wanted):
        return dict(_crates_seen)
    if shutil.which("cargo") is None:
        raise FetchFailed("cargo is needed to fetch the pinned crates and was not found on PATH")
    project = _fetch_project(pins)
    progress.run(["cargo", "fetch", "--quiet"], cwd=project, log=paths.SOURCES_DIR / "cargo-fetch.log",
                 title="cargo fetch (pinned crates)")
    meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--offline", "--quiet"],
                          cwd=project, capture_output=True, text=True)
    if meta.returncode != 0:
        raise FetchFailed(f"cargo metadata failed in {project}: {meta.stderr.strip()[-500:]}")
    found = {pkg["name"]: Path(pkg["manifest_path"]).parent
             for pkg in json.loads(meta.stdout)["packages"] if pkg["name"] in wanted}
    missing = wanted - found.keys()
    if missing:
        raise FetchFailed(f"cargo did not resolve crate(s) {sorted(missing)} in {project}")
    _crates_seen.update(found)
    return found


def _copy_tree(src: Path, dest: Path) -> None:
    """Copy preserving symlinks and modes (the executable bit is part of the hash)."""
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(src, partial, symlinks=True)
    shutil.rmtree(dest, ignore_errors=True)
    partial.rename(dest)


def libzmq_source(pins: dict, progress: Progress) -> Path:
    """A verified libzmq tree under build/sources/ (fetched on first use)."""
    expected = pins["libzmq"]["nar_hash"]
    override = os.environ.get("TESTBED_LIBZMQ_SOURCE")
    if override:
        tree = Path(override)
        verify_tree(tree, expected, "libzmq source (TESTBED_LIBZMQ_SOURCE)")
        return tree
    tree = paths.SOURCES_DIR / f"libzmq-{pins['libzmq']['version']}"
    if tree.is_dir():
        try:
            verify_tree(tree, expected, "libzmq source")
            return tree
        except SourceMismatch as exc:
            progress.say(f"    {exc}; fetching it again")
    crate = crate_dirs(pins, progress)[pins["libzmq"]["crate"]["name"]]
    origin = crate / pins["libzmq"]["crate"]["subdir"]
    # Check the registry copy before copying, so a bad crate is reported as such.
    verify_tree(origin, expected, f"libzmq source from crate {crate.name}")
    _copy_tree(origin, tree)
    verify_tree(tree, expected, "libzmq source")
    progress.say(f"    libzmq source verified: {expected}")
    return tree


def libsodium_source(pins: dict, progress: Progress) -> Path:
    """The unpacked, verified libsodium tree (the tarball is checked before unpacking)."""
    sodium = pins["libsodium"]
    tree = paths.SOURCES_DIR / f"libsodium-{sodium['version']}"
    stamp = tree.with_name(tree.name + ".sha256")
    if tree.is_dir() and stamp.is_file() and stamp.read_text().strip() == sodium["sha256"]:
        return tree
    crate = crate_dirs(pins, progress)[sodium["crate"]["name"]]
    tarball = crate / sodium["crate"]["file"]
    verify_file(tarball, sodium["sha256"], "libsodium tarball")
    unpack = paths.SOURCES_DIR / f"libsodium-{sodium['version']}.unpack"
    shutil.rmtree(unpack, ignore_errors=True)
    unpack.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        # The tarball's hash was checked above. Extraction filters exist only from
        # Python 3.11.4 (Debian bookworm ships 3.11.2), so use one when there is one.
        if hasattr(tarfile, "tar_filter"):
            archive.extractall(unpack, filter="tar")
        else:
            archive.extractall(unpack)
    top = unpack / sodium["crate"]["top_dir"]
    if not (top / "configure").is_file():
        raise FetchFailed(f"{tarball}: no {sodium['crate']['top_dir']}/configure inside")
    shutil.rmtree(tree, ignore_errors=True)
    top.rename(tree)
    shutil.rmtree(unpack, ignore_errors=True)
    stamp.write_text(sodium["sha256"] + "\n")
    progress.say(f"    libsodium {sodium['version']} tarball verified: sha256 {sodium['sha256'][:16]}...")
    return tree
