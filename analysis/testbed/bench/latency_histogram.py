"""The bench's latency histogram (bench/common/histogram.hpp) read back: decode the
compact counts of a result's `latency.histogram`, merge histograms, read percentiles.

Log-linear, as the C++ side lays it out: values below 2^sub_bucket_bits (ns) get a
bucket each; above, each power-of-two range is cut into 2^(sub_bucket_bits - 1) equal
buckets, so a bucket's midpoint is within 1/2^sub_bucket_bits (0.78% at 7) of every
value in it. Histograms with the same layout add bucket by bucket: the round trips of
several windows, or of a cell's repetitions, merge without the raw samples.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


class HistogramError(ValueError):
    """A histogram that cannot be read (malformed counts, or layouts that differ)."""


@dataclass(frozen=True)
class Histogram:
    sub_bucket_bits: int
    max_bits: int
    counts: tuple[int, ...]      # bucket counts from bucket 0, trailing empty buckets dropped
    unit: str = "ns"

    @property
    def total(self) -> int:
        return sum(self.counts)

    def lowest(self, index: int) -> int:
        linear, half = 1 << self.sub_bucket_bits, 1 << (self.sub_bucket_bits - 1)
        if index < linear:
            return index
        j = index - linear
        return (j % half + half) << (j // half + 1)

    def width(self, index: int) -> int:
        linear, half = 1 << self.sub_bucket_bits, 1 << (self.sub_bucket_bits - 1)
        return 1 if index < linear else 1 << ((index - linear) // half + 1)

    def representative(self, index: int) -> float:
        return self.lowest(index) + (self.width(index) - 1) / 2

    def percentile(self, q: float) -> float:
        """Nearest rank over all counted values (as the bench's exact percentiles),
        read as the midpoint of the bucket holding that rank; nan when empty."""
        total = self.total
        if total == 0:
            return math.nan
        rank = min(max(1, math.ceil(q * total)), total)  # the C++ side computes it alike
        seen = 0
        for i, n in enumerate(self.counts):
            seen += n
            if seen >= rank:
                return self.representative(i)
        raise AssertionError("unreachable: the counts sum to total")


def buckets(sub_bucket_bits: int, max_bits: int) -> int:
    linear = 1 << sub_bucket_bits
    return linear + (max_bits - sub_bucket_bits) * (linear // 2)


def decode(data: dict) -> Histogram:
    """A result's `latency.histogram` object -> Histogram; HistogramError if malformed."""
    try:
        bits, max_bits, encoded = int(data["sub_bucket_bits"]), int(data["max_bits"]), data["counts"]
    except (KeyError, TypeError, ValueError) as exc:
        raise HistogramError(f"histogram lacks sub_bucket_bits/max_bits/counts: {exc}") from None
    if not 1 <= bits < max_bits <= 64 or not isinstance(encoded, list):
        raise HistogramError(f"histogram layout {bits}/{max_bits} or counts {type(encoded).__name__} "
                             "not usable")
    counts: list[int] = []
    for n in encoded:
        if not isinstance(n, int) or isinstance(n, bool) or n == 0:
            raise HistogramError(f"histogram count {n!r}: expected a non-zero integer")
        counts.extend([0] * -n if n < 0 else [n])
    if len(counts) > buckets(bits, max_bits):
        raise HistogramError(f"histogram has {len(counts)} buckets, the layout {buckets(bits, max_bits)}")
    while counts and counts[-1] == 0:
        counts.pop()
    total = data.get("total")
    if total is not None and total != sum(counts):
        raise HistogramError(f"histogram total {total} != the sum of its counts {sum(counts)}")
    return Histogram(bits, max_bits, tuple(counts), str(data.get("unit", "ns")))


def merge(histograms: list[Histogram]) -> Histogram:
    """Bucket-by-bucket sum; the layouts must agree."""
    if not histograms:
        raise HistogramError("nothing to merge")
    first = histograms[0]
    for h in histograms[1:]:
        if (h.sub_bucket_bits, h.max_bits, h.unit) != (first.sub_bucket_bits, first.max_bits, first.unit):
            raise HistogramError("histograms with different layouts cannot be merged")
    width = max(len(h.counts) for h in histograms)
    summed = [sum(h.counts[i] for h in histograms if i < len(h.counts)) for i in range(width)]
    while summed and summed[-1] == 0:
        summed.pop()
    return Histogram(first.sub_bucket_bits, first.max_bits, tuple(summed), first.unit)


def index_of(value: int, sub_bucket_bits: int = 7, max_bits: int = 40) -> int:
    """The bucket the C++ side counts `value` in (values beyond the layout: the last)."""
    value = min(int(value), (1 << max_bits) - 1)
    linear, half = 1 << sub_bucket_bits, 1 << (sub_bucket_bits - 1)
    if value < linear:
        return value
    shift = value.bit_length() - sub_bucket_bits
    return linear + (shift - 1) * half + ((value >> shift) - half)


def from_values(values, sub_bucket_bits: int = 7, max_bits: int = 40) -> Histogram:
    """Count integer values (ns) as the bench does: for test factories and fakes."""
    counts = [0] * buckets(sub_bucket_bits, max_bits)
    for v in values:
        counts[index_of(v, sub_bucket_bits, max_bits)] += 1
    while counts and counts[-1] == 0:
        counts.pop()
    return Histogram(sub_bucket_bits, max_bits, tuple(counts))


def to_json(h: Histogram, measure: str = "rtt/2") -> dict:
    """The bench's `latency.histogram` object: a negative count -k stands for k empty buckets."""
    encoded: list[int] = []
    for n in h.counts:
        if n:
            encoded.append(n)
        elif encoded and encoded[-1] < 0:
            encoded[-1] -= 1
        else:
            encoded.append(-1)
    return {"unit": h.unit, "measure": measure, "sub_bucket_bits": h.sub_bucket_bits, "max_bits": h.max_bits,
            "total": h.total, "counts": encoded}


def of_result(result: dict | None) -> Histogram | None:
    """The latency histogram of a bench result, None where it has none (results from
    before 2026-11-27, perf-tools and startup runs)."""
    data = ((result or {}).get("latency") or {}).get("histogram")
    return decode(data) if isinstance(data, dict) else None
