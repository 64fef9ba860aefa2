#!/usr/bin/env python3
"""Writes the seed corpus for the zlink wire fuzzers (valid greetings and frames,
built from the RFC 37 grammar by hand, plus a few near-misses).

Usage: python3 make_corpus.py [OUTDIR]   (default: the corpus/ folder next to this file)
Each target's input starts with two control octets (see the fuzz_*.cpp headers).
"""
import pathlib
import struct
import sys


def frame(body: bytes, more=False, command=False, long=None) -> bytes:
    flags = (1 if more else 0) | (4 if command else 0)
    if long or (long is None and len(body) > 255):
        return bytes([flags | 2]) + struct.pack(">Q", len(body)) + body
    return bytes([flags, len(body)]) + body


def command(name: bytes, data: bytes = b"") -> bytes:
    return frame(bytes([len(name)]) + name + data, command=True)


def prop(name: bytes, value: bytes) -> bytes:
    return bytes([len(name)]) + name + struct.pack(">I", len(value)) + value


def ready(socket_type: bytes, identity=None, extra=b"") -> bytes:
    data = prop(b"Socket-Type", socket_type)
    if identity is not None:
        data += prop(b"Identity", identity)
    return command(b"READY", data + extra)


def greeting(major=3, minor=1, mechanism=b"NULL") -> bytes:
    return (b"\xff" + bytes(8) + b"\x7f" + bytes([major, minor])
            + mechanism.ljust(20, b"\0") + b"\0" + bytes(31))


TRAFFIC = [
    frame(b"hello"),
    frame(b"part1", more=True) + frame(b"") + frame(b"x" * 300),
    command(b"SUBSCRIBE", b"topic") + command(b"CANCEL", b"topic"),
    frame(b"\x01news") + frame(b"\x00news"),
    command(b"PING", b"\x00\x64ctx") + command(b"PONG", b"ctx"),
    frame(b"abc", long=True),
    frame(b"\x00" * 1000, more=True) + frame(b"end"),
]

PEERS = [
    (b"PAIR", None), (b"SUB", None), (b"XSUB", None), (b"PUB", None), (b"XPUB", None),
    (b"DEALER", b""), (b"ROUTER", b"id"), (b"REQ", b""), (b"REP", None),
]


def seeds():
    dec, hs, rt = {}, {}, {}
    for i, t in enumerate(TRAFFIC):
        dec[f"traffic_{i}"] = bytes([0xFF, 0]) + t
        dec[f"traffic_{i}_chunk3"] = bytes([2, 0]) + t
    dec["ready"] = bytes([7, 0]) + ready(b"DEALER", b"", prop(b"X-App", b"v"))
    dec["error"] = bytes([0xFF, 0]) + command(b"ERROR", b"\x03bad")
    dec["reserved_flags"] = bytes([0xFF, 0]) + b"\x08\x00"
    dec["too_large"] = bytes([0xFF, 1]) + frame(b"y" * 40)
    for n, (peer, ident) in enumerate(PEERS):
        # Octet 0 low bits = our type; pick a compatible one for each peer.
        ours = {b"PAIR": 0, b"SUB": 1, b"XSUB": 9, b"PUB": 2, b"XPUB": 10, b"DEALER": 6,
                b"ROUTER": 5, b"REQ": 6, b"REP": 5}[peer]
        stream = greeting() + ready(peer, ident) + TRAFFIC[n % len(TRAFFIC)]
        hs[f"ok_{peer.decode().lower()}"] = bytes([ours, 0xFF]) + stream
        hs[f"ok_{peer.decode().lower()}_split"] = bytes([ours, 4]) + stream
        hs[f"ready_only_{peer.decode().lower()}"] = (
            bytes([ours | 0x80, 0xFF]) + ready(peer, ident) + frame(b"m"))
    hs["zmtp30"] = bytes([0, 0xFF]) + greeting(minor=0) + ready(b"PAIR")
    hs["curve"] = bytes([0, 0xFF]) + greeting(mechanism=b"CURVE")
    hs["zmtp20"] = bytes([0, 0xFF]) + b"\xff" + bytes(8) + b"\x7f\x01\x05"
    hs["incompatible"] = bytes([0, 0xFF]) + greeting() + ready(b"PUB")
    hs["peer_error"] = bytes([0x80, 0xFF]) + command(b"ERROR", b"\x03bad")
    hs["long_ready"] = bytes([0x80, 0xFF]) + ready(b"PAIR", None, prop(b"X-Big", b"b" * 400))
    rt["small"] = bytes([16, 1]) + b"\x85hello\x00"
    rt["mixed"] = bytes([8, 7]) + b"\x82ab\x7f" + b"z" * 127 * 5 + b"\x01q"
    rt["many"] = bytes([255, 0]) + b"\x81a" * 40 + b"\x00"
    return {"decoder": dec, "decoder_splits": split_seeds(dec), "handshake": hs, "roundtrip": rt}


# decoder_splits plans: [capacity-1, in-place threshold, k, k read sizes-1].
SPLIT_PLANS = {"odd_reads": bytes([0x3F, 16, 3, 6, 0, 199]), "whole": bytes([0xFF, 255, 0])}


def split_seeds(dec):
    """The decoder's streams (its 2 control octets dropped) under each read plan,
    plus a body larger than the buffer so the in-place read path is taken."""
    out = {}
    for plan, head in SPLIT_PLANS.items():
        for name, data in dec.items():
            out[f"{name}_{plan}"] = head + data[2:]
    out["in_place_body"] = bytes([31, 8, 2, 9, 40]) + frame(b"L" * 1000, more=True) + frame(b"s")
    return out


def main() -> int:
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "corpus"
    for target, files in seeds().items():
        d = out / target
        d.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (d / name).write_bytes(data)
    print(f"seed corpus written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
