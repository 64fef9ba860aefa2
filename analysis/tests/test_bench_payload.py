"""The benchmark payload (bench/common/payload.*, run through its check program
`payload_check`): the bytes every message carries against an independent reading of
payload.hpp's definition, and the verifier's verdict on flipped bytes, wrong sequence
numbers and the bytes it is documented not to look at. Needs the libzmq-4.3.5 bench
build (slow)."""
from __future__ import annotations

import json
import subprocess

import pytest

MASK = (1 << 64) - 1
SAMPLE_PERIOD = 64  # payload.hpp kSamplePeriod


def word(seq: int, j: int) -> int:
    return ((seq + 1) * 0x9E3779B97F4A7C15 + j * 0xBF58476D1CE4E5B9) & MASK


def pattern_byte(seq: int, i: int) -> int:
    return (word(seq, i // 8) >> (8 * (i % 8))) & 0xFF


def tail_tag(seq: int) -> int:
    return (((seq * 0x9E3779B97F4A7C15) & MASK) >> 56) ^ 0xA5


def expected(size: int, seq: int) -> bytes:
    """Message `seq` as payload.hpp defines it, made on a buffer of 0x5A bytes."""
    if size < 8:
        return bytes(pattern_byte(seq, i) for i in range(size))
    out = bytearray([0x5A] * size)
    out[:8] = seq.to_bytes(8, "little")
    if seq % SAMPLE_PERIOD == 0:
        for i in range(8, size - 1):
            out[i] = pattern_byte(seq, i)
    if size >= 9:
        out[size - 1] = tail_tag(seq)
    return bytes(out)


@pytest.fixture(scope="module")
def payload_check(built_library):
    binary = built_library("libzmq-4.3.5").bench_dir / "payload_check"
    assert binary.is_file(), f"the bench build has no {binary.name}"

    def run(size: int, seq: int, check_seq: int | None = None, flips: tuple[int, ...] = ()) -> dict:
        argv = [str(binary), str(size), str(seq), str(seq if check_seq is None else check_seq),
                *map(str, flips)]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        return json.loads(out.stdout)

    run.binary = binary
    return run


SIZES = [1, 5, 7, 8, 9, 10, 16, 17, 23, 1000, 4099, 65536 + 13]


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("seq", [0, 1, 65, 128, (1 << 40) * SAMPLE_PERIOD])
def test_messages_carry_the_defined_bytes_and_pass(payload_check, size, seq):
    out = payload_check(size, seq)
    assert bytes.fromhex(out["bytes"]) == expected(size, seq)
    assert out["ok"] is True and out["error"] == ""
    assert out["sampled"] is (seq % SAMPLE_PERIOD == 0)


@pytest.mark.slow
@pytest.mark.parametrize("size", [65536 + 13, 4099, 17, 10])
def test_any_flipped_body_byte_of_a_sampled_message_is_named(payload_check, size):
    # word edges, the check's 512-byte block edges, unaligned tails
    spots = {8, 9, 15, 16, 511, 512, 519, 520, 4096 + 3, size - 9, size - 3, size - 2}
    for at in sorted(i for i in spots if 8 <= i <= size - 2):
        out = payload_check(size, 128, flips=(at,))
        assert out["ok"] is False and out["error"] == f"message 128: body byte {at} corrupt", at
    if size - 2 > 8:  # two flips: the first is named
        out = payload_check(size, 128, flips=(size - 2, 8))
        assert out["error"] == "message 128: body byte 8 corrupt"


@pytest.mark.slow
def test_header_tail_and_short_messages_are_checked_in_full(payload_check):
    assert payload_check(4099, 129, flips=(3,))["error"] == "expected sequence number 129, got " + str(
        129 ^ (0xFF << 24)) + " (message lost)"
    assert payload_check(4099, 129, flips=(4098,))["error"] == "message 129: last byte corrupt"
    for size in (1, 5, 7):
        for at in range(size):
            out = payload_check(size, 3, flips=(at,))
            assert out["error"] == (f"message 3: byte {at} does not match its pattern"
                                    " (lost, reordered or corrupt)")


@pytest.mark.slow
def test_wrong_sequence_numbers_fail(payload_check):
    assert payload_check(1000, 64, check_seq=65)["error"] == \
        "expected sequence number 65, got 64 (duplicate or reordered)"
    assert payload_check(1000, 64, check_seq=0)["error"] == \
        "expected sequence number 0, got 64 (message lost)"
    # a short message made for one sequence number does not pass as its neighbour
    assert payload_check(7, 64, check_seq=65)["ok"] is False


@pytest.mark.slow
def test_the_body_of_an_unsampled_message_is_not_looked_at(payload_check):
    """As payload.hpp documents: only every 64th body is filled and compared."""
    out = payload_check(4099, 129, flips=(100, 2000))
    assert out["ok"] is True and out["sampled"] is False


@pytest.mark.slow
def test_bad_arguments_exit_2(payload_check):
    for argv in ([], ["10", "1"], ["x", "1", "1"], ["10", "-1", "1"], ["10", "1", "1", "10"],
                 [str((1 << 24) + 1), "1", "1"]):
        r = subprocess.run([str(payload_check.binary), *argv], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2 and "payload_check:" in r.stderr, argv
