"""Read baselines/pins.toml and check it has every key the builders rely on, so a
broken pin file fails with one line naming the missing key, not a KeyError deep in
a build."""
from __future__ import annotations

import tomllib
from pathlib import Path

from testbed import paths

PINS_FILE = paths.BASELINES_DIR / "pins.toml"

# dotted key -> expected Python type
REQUIRED: dict[str, type] = {
    "schema": int,
    "libzmq.version": str,
    "libzmq.nar_hash": str,
    "libzmq.upstream.owner": str,
    "libzmq.upstream.repo": str,
    "libzmq.upstream.tag": str,
    "libzmq.crate.name": str,
    "libzmq.crate.version": str,
    "libzmq.crate.subdir": str,
    "libsodium.version": str,
    "libsodium.sha256": str,
    "libsodium.configure_flags": list,
    "libsodium.nix_uses": str,
    "libsodium.crate.name": str,
    "libsodium.crate.version": str,
    "libsodium.crate.file": str,
    "libsodium.crate.top_dir": str,
    "zlink.cmake_flags": list,
    "zlink.curve_on": str,
    "zlink.curve_off": str,
}
FLAVOUR_KEYS: dict[str, type] = {"curve": bool, "cmake_flags": list}


class PinsError(Exception):
    pass


def _lookup(data: dict, dotted: str):
    node = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise PinsError(f"{PINS_FILE}: missing key {dotted!r}")
        node = node[part]
    return node


def validate(data: dict, source: Path = PINS_FILE) -> dict:
    for dotted, kind in REQUIRED.items():
        value = _lookup(data, dotted)
        if not isinstance(value, kind):
            raise PinsError(f"{source}: {dotted} must be a {kind.__name__}, got {type(value).__name__}")
    if not data["libzmq"]["nar_hash"].startswith("sha256-"):
        raise PinsError(f"{source}: libzmq.nar_hash must be an SRI sha256 (sha256-...)")
    flavours = data.get("flavours")
    if not isinstance(flavours, dict) or not flavours:
        raise PinsError(f"{source}: missing [flavours.\"<name>\"] tables")
    for name, flavour in flavours.items():
        for key, kind in FLAVOUR_KEYS.items():
            if not isinstance(flavour.get(key), kind):
                raise PinsError(f"{source}: flavours.{name}.{key} missing or not a {kind.__name__}")
    return data


def load(path: Path = PINS_FILE) -> dict:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise PinsError(f"pin file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise PinsError(f"{path}: not valid TOML: {exc}") from None
    return validate(data, path)
