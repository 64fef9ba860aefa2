"""Calibrated run length: before a configuration's first measured run, one probe run
of the reference library (declared counts) measures how long its timed windows last;
the counts are then scaled so that each window lasts at least `[run].min_window_s`
(with headroom), and every library of the configuration runs those same counts.
With `[run].lat_warmup_s`, the uncounted round trips before the latency window are
scaled the same way, from the probe's mean round trip, so that the warm-up lasts at
least that long whatever the message size.

With `[run].tail_round_trips` (T), the latency window is also long enough for a
stable p99: at least T round trips above it, lat_count >= T / (1 - 0.99). The rule:
the p99 of n samples is the (n/100)-th largest, and its sampling error shrinks as the
round trips above it grow; with an exponential tail its relative standard error is
about 1 / (ln(100) x sqrt(T)): 7% at T = 10 (1000 round trips), 2.2% at T = 100, under
the 3% SAME margin, 0.7% at 1000. The tail rule never stretches a latency window
beyond TAIL_STRETCH x the window target (a slow round trip cannot explode a run).

Cheap by design: one probe, a second only when the first window was too short to
scale from reliably, and the scale is capped. Short windows were a noise source
(median 51 ms in side-by-side, minimum 9 ms); a 0.5 s window costs ~1 s per run.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from testbed.records import run_writer
from testbed.sweep.config_run import SLICE_BYTES_FROM, SLICE_MIN_BYTES
from testbed.sweep.execute import Counts

HEADROOM = 1.2        # aim 20% above the minimum: run-to-run spread must not dip below it
MAX_SCALE = 100.0     # never more than 100x the declared count (a broken probe cannot explode a run)
MIN_SCALE = 0.05      # nor less than 1/20 of it (a window run; an arms slice may shrink further:
                      # its 10 ms target is ~1/50 of the windows the declared counts were sized for,
                      # and a floor at 1/20 made REQ_REP's 64 B slices last 0.8 s, not 10 ms:
                      # 14-25 s per run, a tenth of scorecard 4d90's budget on 6 of its 150 blocks)
SLICE_MIN_SCALE = 1e-4
RELIABLE_FRACTION = 0.1  # a window under 10% of the target is re-probed before scaling
MIN_COUNT = 100
MAX_LAT_WARMUP = 1_000_000  # round trips: a broken probe (a ~0 s window) cannot explode a run
TAIL_QUANTILE = 0.99  # the tail the latency window is sized for (p99)
TAIL_STRETCH = 4.0    # the tail rule makes a latency window at most 4x min_window_s (x HEADROOM)


@dataclass
class Calibration:
    group: str
    library: str                 # whose probe set the counts (the reference, if available)
    count: int
    lat_count: int
    status: str                  # calibrated | declared (calibration off / not applicable) | probe-failed
    reason: str = ""
    target_window_s: float = 0.0
    probes: list[dict] = field(default_factory=list)
    lat_warmup: int | None = None  # None: the bench's default warm-up count
    lat_warmup_s: float = 0.0      # the warm-up target it was scaled to (0: none)
    tail_round_trips: int = 0      # round trips above the p99 the latency window was sized for (0: none)

    def counts(self) -> Counts:
        return Counts(self.count, self.lat_count, calibrated=self.status == "calibrated",
                      lat_warmup=self.lat_warmup)


def windows(result: dict | None, lat_count: int) -> tuple[float | None, float | None]:
    """(throughput window, latency window) in seconds from a bench result. The latency
    window is mean(RTT/2) x 2 x round trips: the bench times no total for it."""
    if not result:
        return None, None
    thr = (result.get("throughput") or {}).get("receiver_seconds")
    lat = result.get("latency") or {}
    mean = lat.get("mean")
    lat_s = mean * 2 * lat_count / 1e6 if mean is not None else None
    return thr, lat_s


def scaled(count: int, window: float | None, target: float, min_scale: float = MIN_SCALE) -> int:
    if not window or window <= 0:
        return count
    factor = min(MAX_SCALE, max(min_scale, target * HEADROOM / window))
    return max(MIN_COUNT, math.ceil(count * factor))


def tail_count(lat_count: int, lat_window_s: float | None, probe_lat_count: int, target_s: float,
               tail_round_trips: int) -> int:
    """`lat_count` raised so that `tail_round_trips` round trips lie above the p99, but
    never to a window longer than TAIL_STRETCH x target (x HEADROOM) at the probe's
    round trip; unchanged without a tail target or a latency window to scale from."""
    if tail_round_trips <= 0 or not lat_window_s or lat_window_s <= 0 or probe_lat_count <= 0:
        return lat_count
    wanted = math.ceil(tail_round_trips / (1 - TAIL_QUANTILE) - 1e-9)
    per_round_trip = lat_window_s / probe_lat_count
    longest = max(lat_count, math.floor(TAIL_STRETCH * target_s * HEADROOM / per_round_trip))
    return max(lat_count, min(wanted, longest))


def warmup_round_trips(lat_window_s: float | None, lat_count: int, target_s: float) -> int | None:
    """Round trips that last `target_s` x HEADROOM at the probe's mean round trip (None:
    no target, or no latency window to scale from)."""
    if target_s <= 0 or not lat_window_s or lat_window_s <= 0 or lat_count <= 0:
        return None
    per_round_trip = lat_window_s / lat_count
    return min(MAX_LAT_WARMUP, max(MIN_COUNT, math.ceil(target_s * HEADROOM / per_round_trip)))


def calibrate(group: str, library: str, declared: Counts, min_window_s: float,
              probe: Callable[[Counts], dict], lat_warmup_s: float = 0.0,
              tail_round_trips: int = 0, min_scale: float = MIN_SCALE) -> Calibration:
    """Probe with `declared` counts (twice at most) and scale them; `probe` runs the
    reference library's cell with the given counts and returns its result record."""
    cal = Calibration(group, library, declared.count, declared.lat_count, "calibrated",
                      target_window_s=min_window_s, lat_warmup_s=lat_warmup_s,
                      tail_round_trips=tail_round_trips)
    counts = declared
    for _ in range(2):
        rec = probe(counts)
        thr_s, lat_s = windows(rec.get("result"), counts.lat_count)
        cal.probes.append({"count": counts.count, "lat_count": counts.lat_count, "status": rec["status"],
                           "thr_window_s": thr_s, "lat_window_s": lat_s,
                           "wall_seconds": rec.get("wall_seconds", 0.0), "failure": rec.get("failure", "")})
        if rec["status"] != "ok":
            cal.status, cal.reason = "probe-failed", f"probe failed: {rec.get('failure', '')}"
            return cal
        cal.count = scaled(counts.count, thr_s, min_window_s, min_scale)
        cal.lat_count = tail_count(scaled(counts.lat_count, lat_s, min_window_s, min_scale), lat_s,
                                   counts.lat_count, min_window_s, tail_round_trips)
        cal.lat_warmup = warmup_round_trips(lat_s, counts.lat_count, lat_warmup_s)
        short = [w for w in (thr_s, lat_s) if w is not None and w < min_window_s * RELIABLE_FRACTION]
        if not short:
            break
        counts = Counts(cal.count, cal.lat_count)
    return cal


def calibrate_slices(group: str, library: str, declared: Counts, design, probe: Callable[[Counts], dict],
                     msg_size: int = 0) -> Calibration:
    """Counts of one arms slice (sweep/arms.py): the same probe of the reference, scaled
    so that a slice lasts about `design.slice_s`, and from SLICE_BYTES_FROM up carries at
    least SLICE_MIN_BYTES of payload (bench/measurements: the slice-length study). The
    tail rule sizes a run's latency slices together (its p99 is read from their merged
    histogram): rounds x lat_count >= tail_round_trips / 0.01, each slice at most
    TAIL_STRETCH x the slice target."""
    cal = calibrate(group, library, declared, design.slice_s, probe, min_scale=SLICE_MIN_SCALE)
    cal.lat_warmup = None  # each slice's warm-up is the arms bench's own (a tenth of its round trips)
    if msg_size >= SLICE_BYTES_FROM:  # shorter slices measure the burst into empty socket buffers
        cal.count = max(cal.count, math.ceil(SLICE_MIN_BYTES / msg_size))
    if cal.status != "calibrated" or not design.tail_round_trips:
        return cal
    probe_ok = cal.probes[-1]
    lat_s, lat_n = probe_ok.get("lat_window_s"), probe_ok.get("lat_count") or 0
    per_slice = math.ceil(design.tail_round_trips / (1 - TAIL_QUANTILE) / max(1, design.rounds) - 1e-9)
    if lat_s and lat_s > 0 and lat_n > 0:
        longest = math.floor(TAIL_STRETCH * design.slice_s * HEADROOM / (lat_s / lat_n))
        cal.lat_count = max(cal.lat_count, min(per_slice, longest))
    cal.tail_round_trips = design.tail_round_trips
    return cal


def not_calibrated(group: str, library: str, declared: Counts, reason: str) -> Calibration:
    return Calibration(group, library, declared.count, declared.lat_count, "declared", reason)


def load(run_dir: Path) -> dict[str, Calibration]:
    """group -> its calibration, from earlier sessions of this run (a torn last line,
    left by a kill, is ignored: that group is calibrated again)."""
    return {data["group"]: Calibration(**data) for data in run_writer.lines(run_dir, "calibration")}


def append(run_dir: Path, cal: Calibration) -> None:
    run_writer.append(run_dir, "calibration", asdict(cal))
