"""The latency histogram: the bench's C++ (bench/common/histogram.*, run through its
check program `histogram_check`) against exact percentiles and against the reader in
testbed.bench.latency_histogram; merging; malformed input. The C++ tests need the
libzmq-4.3.5 bench build (slow); the reader's run on hand-made histograms."""
from __future__ import annotations

import json
import math
import random
import subprocess

import pytest

from testbed.bench import latency_histogram as lh

QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}
BOUND = 1 / 128  # a bucket's midpoint is within 1/2^7 of every value in it (histogram.hpp)


def exact(values: list[int], q: float) -> int:
    """Nearest rank, as the bench's percentile_sorted."""
    ordered = sorted(values)
    return ordered[min(max(1, math.ceil(q * len(ordered))), len(ordered)) - 1]


def samples(shape: str, n: int = 20_000) -> list[int]:
    rng = random.Random(f"histogram/{shape}")
    if shape == "lognormal":      # a round trip's usual shape: ~13 us, a long right tail
        return [int(rng.lognormvariate(9.5, 0.5)) for _ in range(n)]
    if shape == "bimodal":        # two modes a decade apart (a fast and a slow path)
        return [int(rng.gauss(8_000, 300) if rng.random() < 0.9 else rng.gauss(90_000, 5_000))
                for _ in range(n)]
    if shape == "heavy":          # Pareto tail: p999 far beyond p99
        return [int(5_000 * rng.paretovariate(1.5)) for _ in range(n)]
    return [rng.randrange(0, 300) for _ in range(n)]  # "small": the exact buckets and the first octaves


def check(binary, values: list[int], pieces: int = 1) -> dict:
    out = subprocess.run([str(binary), str(pieces)], input="\n".join(map(str, values)) + "\n",
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def histogram_check(built_library):
    binary = built_library("libzmq-4.3.5").bench_dir / "histogram_check"
    assert binary.is_file(), f"the bench build has no {binary.name}"
    return binary


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["lognormal", "bimodal", "heavy", "small"])
def test_percentiles_are_within_the_error_bound_of_the_exact_ones(histogram_check, shape):
    values = samples(shape)
    out = check(histogram_check, values)
    whole = lh.decode(out["whole"])
    assert whole.total == len(values) and out["decode_round_trip"] is True
    for name, q in QUANTILES.items():
        truth = exact(values, q)
        assert abs(out["percentiles"][name] - truth) <= BOUND * truth, (shape, name, truth)
        # the reader finds the same bucket as the C++ side
        assert whole.percentile(q) == out["percentiles"][name]
    # the reader lays buckets out as the C++ side does, value by value
    assert lh.to_json(lh.from_values(values), measure="given") == out["whole"]


@pytest.mark.slow
def test_pieces_merge_to_the_whole(histogram_check):
    values = samples("bimodal") + [0, 1, 127, 128, 129, 255, 256, (1 << 40) + 5]  # edges; one past the layout
    out = check(histogram_check, values, pieces=7)
    assert out["merged"]["counts"] == out["whole"]["counts"] and out["merged"]["total"] == len(values)
    pieces = [lh.decode({**out["whole"], "counts": p, "total": None}) for p in out["pieces"]]
    assert sum(p.total for p in pieces) == len(values)
    assert lh.merge(pieces) == lh.decode(out["whole"])


@pytest.mark.slow
def test_bad_input_exits_2(histogram_check):
    for argv, text in (([], ""), (["0"], ""), (["1"], "-5\n"), (["1"], "12x\n")):
        r = subprocess.run([str(histogram_check), *argv], input=text, capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2 and "histogram_check:" in r.stderr


def test_reader_bound_and_merge_without_the_binary():
    values = samples("lognormal", 5_000)
    h = lh.from_values(values)
    for q in QUANTILES.values():
        assert abs(h.percentile(q) - exact(values, q)) <= BOUND * exact(values, q)
    halves = [lh.from_values(values[::2]), lh.from_values(values[1::2])]
    assert lh.merge(halves) == h
    assert lh.decode(lh.to_json(h)) == h
    assert math.isnan(lh.from_values([]).percentile(0.99))


@pytest.mark.parametrize("data, fragment", [
    ({"sub_bucket_bits": 7, "max_bits": 40, "counts": [3, 0]}, "non-zero"),
    ({"sub_bucket_bits": 7, "max_bits": 40, "counts": [-3000]}, "buckets"),
    ({"sub_bucket_bits": 7, "max_bits": 40, "counts": [1, 2], "total": 4}, "total"),
    ({"sub_bucket_bits": 7, "counts": [1]}, "lacks"),
    ({"sub_bucket_bits": 9, "max_bits": 4, "counts": [1]}, "layout"),
])
def test_malformed_histograms_are_refused(data, fragment):
    with pytest.raises(lh.HistogramError, match=fragment):
        lh.decode(data)


def test_layouts_must_agree_to_merge():
    with pytest.raises(lh.HistogramError, match="layouts"):
        lh.merge([lh.from_values([1, 2]), lh.from_values([1, 2], sub_bucket_bits=8)])
