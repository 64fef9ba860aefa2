"""baselines/pins.toml: complete, consistent, and read the same by Nix."""
from __future__ import annotations

import json
import shutil
import subprocess
import tomllib

import pytest

from testbed.toolchain import pins


def test_pins_parse_and_have_every_key():
    data = pins.load()
    for dotted in pins.REQUIRED:
        node = data
        for part in dotted.split("."):
            node = node[part]
    assert data["libzmq"]["version"] == "4.3.5"
    assert data["libzmq"]["nar_hash"] == "sha256-q2h5y0Asad+fGB9haO4Vg7a1ffO2JSb7czzlhmT3VmI="
    assert set(data["flavours"]) == {"libzmq-4.3.5", "libzmq-4.3.5-nocurve"}
    assert len(data["libsodium"]["sha256"]) == 64


def test_flavours_differ_only_in_curve():
    flavours = pins.load()["flavours"]
    curve, plain = flavours["libzmq-4.3.5"], flavours["libzmq-4.3.5-nocurve"]
    assert curve["curve"] is True and plain["curve"] is False
    assert "-DENABLE_CURVE=ON" in curve["cmake_flags"] and "-DWITH_LIBSODIUM=ON" in curve["cmake_flags"]
    assert "-DENABLE_CURVE=OFF" in plain["cmake_flags"] and "-DWITH_LIBSODIUM=OFF" in plain["cmake_flags"]
    curve_only = {"-DENABLE_CURVE=ON", "-DWITH_LIBSODIUM=ON"}
    plain_only = {"-DENABLE_CURVE=OFF", "-DWITH_LIBSODIUM=OFF"}
    assert set(curve["cmake_flags"]) - curve_only == set(plain["cmake_flags"]) - plain_only
    for flags in (curve["cmake_flags"], plain["cmake_flags"]):
        assert "-DCMAKE_BUILD_TYPE=Release" in flags and "-DENABLE_DRAFTS=OFF" in flags


def test_missing_key_is_named(tmp_path):
    text = pins.PINS_FILE.read_text().replace('nar_hash = "sha256-', 'narhash = "sha256-', 1)
    broken = tmp_path / "pins.toml"
    broken.write_text(text)
    with pytest.raises(pins.PinsError, match="libzmq.nar_hash"):
        pins.load(broken)


def test_flavour_without_flags_is_refused(tmp_path):
    data = tomllib.loads(pins.PINS_FILE.read_text())
    del data["flavours"]["libzmq-4.3.5"]["cmake_flags"]
    with pytest.raises(pins.PinsError, match="cmake_flags"):
        pins.validate(data)


@pytest.mark.skipif(shutil.which("nix-instantiate") is None, reason="nix not installed")
def test_nix_reads_the_same_pins():
    expr = f"builtins.fromTOML (builtins.readFile {pins.PINS_FILE})"
    out = subprocess.run(["nix-instantiate", "--eval", "--strict", "--json", "-E", expr],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == pins.load()
