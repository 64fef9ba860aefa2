#!/usr/bin/env python3
"""Writes the seed corpus of the security fuzzers (plain_handshake, curve_handshake,
curve_message): commands built by hand from RFC 24/26's grammar, plus the control
octets each target's header describes.

Usage: python3 make_security_corpus.py [OUTDIR]   (default: corpus/ next to this file)
"""
import pathlib
import struct
import sys


def frame(body: bytes) -> bytes:
    if len(body) > 255:
        return b"\x06" + struct.pack(">Q", len(body)) + body
    return bytes([4, len(body)]) + body


def command(name: bytes, data: bytes = b"") -> bytes:
    return frame(bytes([len(name)]) + name + data)


def prop(name: bytes, value: bytes) -> bytes:
    return bytes([len(name)]) + name + struct.pack(">I", len(value)) + value


def short(s: bytes) -> bytes:
    return bytes([len(s)]) + s


DEALER = prop(b"Socket-Type", b"DEALER") + prop(b"Identity", b"")


def plain_seeds():
    # octet 0: bit 0 side (0 server), bits 1-3 ZAP answer, bit 7 greeting; octet 1 chunk-1; octet 2 type
    seeds = {}
    hello = command(b"HELLO", short(b"admin") + short(b"password"))
    for i, code in enumerate(["200", "300", "400", "500", "missing", "201"]):
        seeds[f"server_{code}"] = bytes([0x80 | (i << 1), 255, 5]) + hello + command(b"INITIATE", DEALER)
    seeds["server_split"] = bytes([0x80, 2, 6]) + hello + command(b"INITIATE", DEALER)
    seeds["server_bad_hello"] = bytes([0x80, 255, 5]) + command(b"HELLO", b"\x09ab")
    seeds["client_ok"] = bytes([0x81, 255, 5]) + command(b"WELCOME") + command(b"READY", DEALER)
    seeds["client_error"] = bytes([0x81, 255, 5]) + command(b"ERROR", short(b"400"))
    seeds["client_welcome_data"] = bytes([0x81, 255, 5]) + command(b"WELCOME", b"x")
    return seeds


def curve_handshake_seeds():
    # octet 0: mode (0 server raw, 1 client raw, 2 pair with corruptions), bit 7 greeting; octet 1 chunk-1
    seeds = {}
    hello = command(b"HELLO", b"\x01\x00" + bytes(72) + bytes(32) + struct.pack(">Q", 1) + bytes(80))
    seeds["server_hello_shape"] = bytes([0x80, 255]) + hello
    seeds["server_hello_v2"] = bytes([0x80, 255]) + command(b"HELLO", b"\x02\x00" + bytes(192))
    seeds["server_initiate_first"] = bytes([0x80, 255]) + command(b"INITIATE", bytes(300))
    seeds["client_welcome_shape"] = bytes([0x81, 255]) + command(b"WELCOME", bytes(160))
    seeds["client_error"] = bytes([0x81, 255]) + command(b"ERROR", short(b"500"))
    seeds["pair_clean"] = bytes([2, 255])
    seeds["pair_split"] = bytes([2, 6])
    # (direction, offset hi, offset lo, xor): client HELLO box, server WELCOME box,
    # client INITIATE cookie and box, server READY box, greeting filler.
    for name, (d, off) in {"hello": (0, 64 + 2 + 150), "welcome": (1, 64 + 2 + 60),
                           "cookie": (0, 64 + 202 + 3 + 30), "initiate": (0, 64 + 202 + 3 + 200),
                           "ready": (1, 64 + 170 + 2 + 20), "filler": (0, 40)}.items():
        seeds[f"pair_corrupt_{name}"] = bytes([2, 255, d, off >> 8, off & 0xFF, 0x40])
    return seeds


def curve_message_seeds():
    return {
        "roundtrips": bytes([0, 0, 0, 5, 0, 255, 5, 40]),
        "tamper": bytes([0, 10, 1, 20, 3, 0x80, 1, 0, 7, 2]),
        "replay": bytes([0, 4, 2, 0, 4, 2]),
        "truncate": bytes([0, 50, 3, 20, 3, 0]),
        "raw": bytes([4, 40]) + b"\x07MESSAGE" + bytes(32),
        "mixed": bytes([0, 1, 5, 1, 1, 2, 3, 1, 4, 2, 7, 9, 2, 3, 5, 0, 4, 3, 1, 2, 3]),
    }


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "corpus"
    for target, seeds in {"plain_handshake": plain_seeds(), "curve_handshake": curve_handshake_seeds(),
                          "curve_message": curve_message_seeds()}.items():
        folder = out / target
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in seeds.items():
            (folder / name).write_bytes(data)


if __name__ == "__main__":
    main()
