"""Calibration from a fake probe: the counts scale so the reference's windows last the
target with headroom, a too-short first window is probed again, scaling is capped, and
a failed probe falls back to the declared counts with the reason."""
from __future__ import annotations

import pytest

from testbed.records import store
from testbed.sweep import calibrate
from testbed.sweep.execute import Counts


def probe_at(msgs_per_sec: float, rtt_half_us: float, calls: list):
    def probe(counts: Counts) -> dict:
        calls.append(counts)
        return {"status": "ok", "wall_seconds": 0.1, "result": {
            "throughput": {"receiver_seconds": counts.count / msgs_per_sec},
            "latency": {"mean": rtt_half_us}}}
    return probe


def test_counts_scale_to_the_target_window_with_headroom():
    calls = []
    cal = calibrate.calibrate("g", "ref", Counts(100_000, 2000), 0.5, probe_at(1e6, 20.0, calls))
    assert cal.status == "calibrated" and len(calls) == 1  # 0.1 s and 0.08 s: long enough to scale from
    assert cal.count / 1e6 == pytest.approx(0.5 * calibrate.HEADROOM, rel=1e-3)
    assert cal.lat_count * 2 * 20.0 / 1e6 == pytest.approx(0.5 * calibrate.HEADROOM, rel=1e-2)
    assert cal.counts() == Counts(cal.count, cal.lat_count, calibrated=True)


def test_a_too_short_first_window_is_probed_again_and_scaling_is_capped():
    calls = []
    cal = calibrate.calibrate("g", "ref", Counts(100, 10), 0.5, probe_at(1e6, 20.0, calls))
    assert len(calls) == 2
    assert calls[1].count == 100 * calibrate.MAX_SCALE  # the first step is capped at 100x
    assert cal.count / 1e6 == pytest.approx(0.6, rel=1e-3)
    assert len(cal.probes) == 2 and cal.probes[0]["thr_window_s"] == pytest.approx(1e-4)


def test_a_failed_probe_keeps_the_declared_counts_and_says_why():
    def probe(counts):
        return {"status": "failed", "failure": "killed by signal SIGSEGV", "wall_seconds": 0.2,
                "result": None}
    cal = calibrate.calibrate("g", "ref", Counts(5000, 300), 0.5, probe)
    assert (cal.count, cal.lat_count, cal.status) == (5000, 300, "probe-failed")
    assert "SIGSEGV" in cal.reason and not cal.counts().calibrated


def test_calibrations_survive_a_torn_line(tmp_path):
    cal = calibrate.calibrate("g1", "ref", Counts(100_000, 1000), 0.5, probe_at(1e6, 20.0, []))
    calibrate.append(tmp_path, cal)
    with open(tmp_path / store.CALIBRATION_NAME, "a") as f:
        f.write('{"group": "g2", "lib')  # a kill in the middle of a write
    again = calibrate.calibrate("g3", "ref", Counts(100_000, 1000), 0.5, probe_at(2e6, 20.0, []))
    calibrate.append(tmp_path, again)
    loaded = calibrate.load(tmp_path)
    assert set(loaded) == {"g1", "g3"} and loaded["g1"] == cal and loaded["g3"].count == again.count


def test_a_timed_latency_warm_up_scales_from_the_probes_round_trip():
    calls = []
    cal = calibrate.calibrate("g", "ref", Counts(100_000, 2000), 0.5, probe_at(1e6, 20.0, calls),
                              lat_warmup_s=0.3)
    # 40 us round trips: 0.3 s x headroom of them, run by every library of the group
    assert cal.lat_warmup * 40e-6 == pytest.approx(0.3 * calibrate.HEADROOM, rel=1e-3)
    assert cal.counts().lat_warmup == cal.lat_warmup and cal.lat_warmup_s == 0.3
    assert calls[0].lat_warmup is None  # the probe itself runs the bench's default warm-up
    # without a target the bench keeps its default; a broken window cannot explode it
    plain = calibrate.calibrate("g", "ref", Counts(100_000, 2000), 0.5, probe_at(1e6, 20.0, []))
    assert plain.lat_warmup is None
    assert calibrate.warmup_round_trips(1e-12, 1000, 0.3) == calibrate.MAX_LAT_WARMUP
    assert calibrate.warmup_round_trips(None, 1000, 0.3) is None
    assert calibrate.warmup_round_trips(10.0, 1000, 0.3) == calibrate.MIN_COUNT


@pytest.mark.parametrize("rtt_half_us, expected", [
    (20.0, 10_000),     # 0.6 s holds 15,000 round trips of 40 us: the window rule already suffices
    (40.0, 10_000),     # 7,500 fit in 0.6 s: raised to 100 above the p99, 0.8 s
    (200.0, 6_000),     # 10,000 would take 4 s: held at 4 x 0.6 s (TAIL_STRETCH)
])
def test_the_latency_window_holds_enough_round_trips_above_its_p99(rtt_half_us, expected):
    cal = calibrate.calibrate("g", "ref", Counts(100_000, 2000), 0.5, probe_at(1e6, rtt_half_us, []),
                              tail_round_trips=100)
    window_rule = calibrate.calibrate("g", "ref", Counts(100_000, 2000), 0.5, probe_at(1e6, rtt_half_us, []))
    assert cal.lat_count == pytest.approx(max(window_rule.lat_count, expected), abs=1)
    assert cal.tail_round_trips == 100 and window_rule.tail_round_trips == 0
    assert cal.count == window_rule.count  # the throughput window is not the tail's business


def test_an_arms_slice_of_a_slow_pattern_shrinks_to_its_10_ms_target():
    """REQ_REP at ~12 k round trips/s: 200,000 declared messages take ~16 s; a window run
    keeps at least 1/20 of them, an arms slice scales down to its target (4d90: the
    1/20 floor made each slice 0.8 s, each run 14-25 s)."""
    class Design:
        slice_s, tail_round_trips, rounds = 0.01, 0, 20
    window = calibrate.calibrate("g", "ref", Counts(200_000, 1000), 0.01, probe_at(12_000, 40.0, []))
    assert window.count == 200_000 * calibrate.MIN_SCALE
    sliced = calibrate.calibrate_slices("g", "ref", Counts(200_000, 1000), Design, probe_at(12_000, 40.0, []),
                                        msg_size=64)
    assert sliced.count / 12_000 == pytest.approx(0.01 * calibrate.HEADROOM, rel=1e-2)
    assert sliced.count >= calibrate.MIN_COUNT
