"""The `[run]` table of experiment.toml: how many repetitions, how long each timed
window must be, when to stop, and the run's order and limits (experiments/README.md).

A design is either fixed (`repetitions = N`: every cell runs N times) or adaptive
(`min_repetitions`..`max_repetitions`, optionally a `time_budget_s`): after the
minimum, each configuration gets more interleaved repetitions until every
comparison in it is decided, or it reaches its cap, or the run its budget.
"""
from __future__ import annotations

from dataclasses import dataclass

from testbed.records import counted
from testbed.stats.decide import margin_for, min_samples
from testbed.sweep.toml_reader import Section

DEFAULT_REPETITIONS = 5
DEFAULT_MIN_WINDOW_S = 0.5   # the reference library's timed window per run (issue 9)
DEFAULT_CONFIDENCE = 0.95
DEFAULT_MARGIN = 0.03        # SAME: the ratio's interval lies within +/-3%
DEFAULT_LOOK_EVERY = 2       # adaptive: repetitions between two looks (decide calls)
MAX_DRIFT_TOLERANCE = 0.5    # a host speed change of 50% within one pair: beyond that, no filter
# How a block runs (sweep/arms.py): "arms" = every library and configuration of the block
# in one process pair, measured in interleaved slices; "blocks" = one process pair per
# cell, back to back; "auto" (the default) = arms where the run can (sweep/arms.py
# `choose`: a bench workload, every library loadable with dlmopen, the arms binaries
# built), else blocks, the reason recorded in the manifest.
LAYOUTS = ("auto", "arms", "blocks")
DEFAULT_SLICE_S = 0.01       # target length of a throughput slice (bench/measurements, slice-length study)
SLICE_MIN_BYTES = 32 << 20   # from 64 KiB up a slice carries at least this much payload (same study)
SLICE_BYTES_FROM = 65536
DEFAULT_ROUNDS = 20          # measured rounds per arms run: each a slice of every arm
DEFAULT_WARMUP_ROUNDS = 1


@dataclass(frozen=True)
class Design:
    min_repetitions: int
    max_repetitions: int
    time_budget_s: float | None   # None: no budget; the caps alone bound the run
    min_window_s: float           # 0: no calibration, the declared counts run as written
    confidence: float             # of the whole run's verdicts
    margin: float
    look_every: int = DEFAULT_LOOK_EVERY
    verdicts: bool = True         # false: a smoke run; repetitions as written, nothing decided
    # Set by the planner from the stats piece's adaptive_design: every look is judged
    # at look_confidence so that all looks together keep `confidence`.
    looks: int = 1
    look_confidence: float | None = None
    # Host speed reference (sweep/speedref.py): timed before and after every pair;
    # a pair whose reference moved by more than drift_tolerance is excluded from the
    # verdicts (None: recorded, never excluded).
    speed_reference: bool = True
    drift_tolerance: float | None = None
    # Calibrated runs only: uncounted round trips before the latency window, scaled
    # like the counts so that they last at least this long (0: the bench's default
    # count). A round trip that follows a throughput phase in the same processes can
    # run in a slower mode for ~0.2-0.3 s (scorecard README); a warm-up counted in
    # round trips ends at very different times at 64 B and 256 KiB.
    lat_warmup_s: float = 0.0
    # Calibrated runs only: every repetition's latency window holds at least this many
    # round trips above its p99 (lat_count >= tail_round_trips / 0.01), so the per-
    # repetition p99 the verdicts pair is not mostly sampling noise; 0: the window rule
    # alone (calibrate.py, tail_count).
    tail_round_trips: int = 0
    # The metrics the adaptive loop waits for (adaptive.METRICS names); empty: the
    # mode's default (throughput and p50 latency).
    stop_on: tuple[str, ...] = ()
    # SAME's margin for configuration comparisons (one library, two settings), where it
    # differs from `margin`: an experiment whose question is "is the default as fast as
    # a static setting" can declare the effect size it cares about (issue 32); None:
    # `margin` for every comparison.
    config_margin: float | None = None
    # How a block runs ([run].design; LAYOUTS above) and, for arms, the slices: each
    # slice lasts about slice_s (calibrated on the reference), a run measures `rounds`
    # rounds (one slice of every arm each, in a fresh random order) after
    # `warmup_rounds` unrecorded ones.
    layout: str = "auto"
    slice_s: float = DEFAULT_SLICE_S
    rounds: int = DEFAULT_ROUNDS
    warmup_rounds: int = DEFAULT_WARMUP_ROUNDS
    # Arms runs per block (blocks layout: one-arm arms runs per cell) that count the
    # syscall tracepoints (`--counters auto`) for system calls per message and bytes per
    # data call (sweep/counting.py): never timed, since the tracepoints slow every call;
    # 0: none.
    counting_runs: int = 0
    # Arms runs only: re-deal every unpinned thread to a random CPU at each round's
    # start, unpinned again before the round's clocks (bench/arms/dealer.hpp), so a
    # free-placement run averages many placements instead of carrying the one its
    # start happened to get (docs/design/2026-12-03-run-offsets.md). Pinned threads
    # (one-core, split) have one CPU to go to: there it changes nothing.
    redeal: bool = False

    def margin_for(self, kind: str) -> float:
        """SAME's margin for a comparison of this kind ("library", "config", "aa")."""
        return margin_for(kind, self.margin, self.config_margin)

    @property
    def adaptive(self) -> bool:
        return self.max_repetitions > self.min_repetitions

    def is_look(self, n: int) -> bool:
        """Is n repetitions per side a point where the verdicts are looked at?"""
        if n < self.min_repetitions:
            return False
        return n >= self.max_repetitions or (n - self.min_repetitions) % self.look_every == 0

    def as_manifest(self) -> dict:
        return {"adaptive": self.adaptive, "min_repetitions": self.min_repetitions,
                "max_repetitions": self.max_repetitions, "time_budget_s": self.time_budget_s,
                "min_window_s": self.min_window_s,
                "lat_warmup_s": self.lat_warmup_s, "confidence": self.confidence, "margin": self.margin,
                "look_every": self.look_every, "looks": self.looks, "verdicts": self.verdicts,
                "look_confidence": self.look_confidence or self.confidence,
                "speed_reference": self.speed_reference, "speed_drift_tolerance": self.drift_tolerance,
                # every configuration of a workload point runs back to back (plan.py blocks)
                "paired_configurations": True,
                **({"tail_round_trips": self.tail_round_trips} if self.tail_round_trips else {}),
                **({"stop_on": list(self.stop_on)} if self.stop_on else {}),
                **({"config_margin": self.config_margin} if self.config_margin is not None else {}),
                "layout": self.layout,
                **({"slice_s": self.slice_s, "rounds": self.rounds, "warmup_rounds": self.warmup_rounds}
                   if self.layout != "blocks" else {}),
                **({"counting_runs": self.counting_runs}
                   if self.layout != "blocks" or self.counting_runs else {}),
                **({"redeal": self.redeal} if self.layout != "blocks" else {})}

    def next_look_point(self, valid: int) -> int:
        """The first look at which more than `valid` usable pairs are judged (the
        minimum when below it), capped: the adaptive loop runs batches until the
        usable pairs reach it, so an excluded pair is replaced by another."""
        if valid < self.min_repetitions:
            return self.min_repetitions
        steps = (valid - self.min_repetitions) // self.look_every + 1
        return min(self.max_repetitions, self.min_repetitions + steps * self.look_every)


def _cpu_list_ok(text: str) -> bool:
    for part in text.split(","):
        bounds = part.split("-")
        if len(bounds) > 2 or not all(b.isdigit() for b in bounds):
            return False
    return True


def _repetitions(sec: Section) -> tuple[int, int]:
    fixed = "repetitions" in sec.table
    ranged = [k for k in ("min_repetitions", "max_repetitions") if k in sec.table]
    if fixed and ranged:
        raise sec.err(ranged[0], "given together with repetitions",
                      "either repetitions = N (fixed) or min_repetitions/max_repetitions (adaptive)")
    if fixed:
        n = sec.positive("repetitions")
        return n, n
    low = sec.positive("min_repetitions", DEFAULT_REPETITIONS)
    high = sec.positive("max_repetitions", low)
    if high < low:
        raise sec.err("max_repetitions", f"{high} is below min_repetitions {low}",
                      f"an integer >= {low}")
    return low, high


def _drift_tolerance(sec: Section, reference: bool) -> float | None:
    allowed = f"a number > 0 and < {MAX_DRIFT_TOLERANCE:g} (0.05 = the reference may move 5% within a pair)"
    value = sec.get("speed_drift_tolerance", float, None, allowed=allowed)
    if value is None:
        return None
    if not 0 < value < MAX_DRIFT_TOLERANCE:
        raise sec.err("speed_drift_tolerance", f"bad value {value!r}", allowed)
    if not reference:
        raise sec.err("speed_drift_tolerance", "given while speed_reference = false (nothing to compare)",
                      "speed_reference = true, or no speed_drift_tolerance")
    return value


def _margin(sec: Section, key: str, default: float | None) -> float | None:
    value = sec.number(key, default, minimum=0.0, above=True)
    if value is not None and value >= 0.5:
        raise sec.err(key, f"bad value {value!r}", "a number > 0 and < 0.5 (0.03 = +/-3%)")
    return value


# adaptive.METRICS of the bench: the timings, and counted work of timed arms runs
# (records/counted.py); not what only counting runs count (the loop never waits for them)
STOP_ON = ("throughput", "p50_latency", "p99_latency",
           *(m for m in counted.JUDGED if m not in counted.TRACEPOINT))


def _counting_runs(sec: Section, layout: str, verdicts: bool, confidence: float) -> int:
    """[run].counting_runs: 0, or (when the run judges) enough runs for the paired test
    that judges them (their verdicts are paired per counting run, at the run's confidence)."""
    n = sec.positive("counting_runs", 0, minimum=0)
    need = min_samples(confidence, paired=True)
    if n and verdicts and n < need:
        raise sec.err("counting_runs", f"{n} pairs can never decide at confidence {confidence:g}",
                      f"0 (none) or an integer >= {need} (the paired signed-rank test needs {need} pairs)")
    return n


def _stop_on(sec: Section) -> tuple[str, ...]:
    return sec.str_list("stop_on", STOP_ON, ()) if "stop_on" in sec.table else ()


def _design(sec: Section) -> Design:
    low, high = _repetitions(sec)
    if high > low and sec.table.get("verdicts") is False:
        raise sec.err("verdicts", "false, but max_repetitions asks for adaptive repetitions (which stop "
                      "on verdicts)", "verdicts = true, or repetitions = N")
    budget = sec.number("time_budget_s", None, minimum=0.0, above=True)
    confidence = sec.number("confidence", DEFAULT_CONFIDENCE, minimum=0.5, above=True)
    if confidence >= 1:
        raise sec.err("confidence", f"bad value {confidence!r}", "a number > 0.5 and < 1")
    margin = _margin(sec, "margin", DEFAULT_MARGIN)
    config_margin = _margin(sec, "config_margin", None)
    reference = sec.get("speed_reference", bool, True)
    tolerance = _drift_tolerance(sec, reference)
    layout, verdicts = sec.choice("design", LAYOUTS, "auto"), sec.get("verdicts", bool, True)
    redeal = sec.get("redeal", bool, False)
    if redeal and layout == "blocks":
        raise sec.err("redeal", "true, but design = \"blocks\" runs no rounds to re-deal between",
                      'design = "arms" (or "auto"), or redeal = false')
    return Design(min_repetitions=low, max_repetitions=high, time_budget_s=budget,
                  min_window_s=sec.number("min_window_s", DEFAULT_MIN_WINDOW_S, minimum=0.0),
                  lat_warmup_s=sec.number("lat_warmup_s", 0.0, minimum=0.0),
                  tail_round_trips=sec.positive("tail_round_trips", 0, minimum=0),
                  stop_on=_stop_on(sec),
                  confidence=confidence, margin=margin, config_margin=config_margin,
                  look_every=sec.positive("look_every", DEFAULT_LOOK_EVERY),
                  verdicts=verdicts,
                  speed_reference=reference, drift_tolerance=tolerance,
                  layout=layout, counting_runs=_counting_runs(sec, layout, verdicts, confidence),
                  slice_s=sec.number("slice_s", DEFAULT_SLICE_S, minimum=0.0, above=True),
                  rounds=sec.positive("rounds", DEFAULT_ROUNDS),
                  warmup_rounds=sec.positive("warmup_rounds", DEFAULT_WARMUP_ROUNDS, minimum=0),
                  redeal=redeal)


def parse(sec: Section) -> dict:
    """[run] -> the Experiment fields it defines."""
    if "pin" in sec.table:
        raise sec.err("pin", "replaced by the placement axis",
                      '[sweep].placement = ["split"|"one-core"|"free"] and [run].cpus = "0,1"')
    cpus = sec.get("cpus", str, None, allowed='a CPU list like "0,1" or "2-3"')
    if cpus is not None and not _cpu_list_ok(cpus):
        raise sec.err("cpus", f"bad CPU list {cpus!r}", 'a CPU list like "0,1" or "2-3"')
    timeout = sec.number("timeout_s", 60.0, minimum=0.0, above=True)
    design = _design(sec)
    out = {
        "design": design, "repetitions": design.min_repetitions,
        "warmup_runs": sec.positive("warmup_runs", 1, minimum=0),
        "interleave": sec.get("interleave", bool, True),
        "shuffle": sec.get("shuffle", bool, True),
        "cpus": cpus, "timeout_s": timeout,
        "hyperfine_runs": sec.positive("hyperfine_runs", 10),
    }
    sec.done()
    return out
