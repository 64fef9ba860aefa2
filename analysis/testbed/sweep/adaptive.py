"""Adaptive repetitions: after the design's minimum, each configuration gets one more
interleaved batch at a time (A B, then B A, ...) until every comparison in it is
decided, it reaches `max_repetitions`, or the run reaches `time_budget_s`.

A comparison is one candidate library against the reference on one metric
(throughput, p50 latency); `testbed.results.decide.decide_repetitions` (the stats piece)
gives its verdict, FAST/SLOW/SAME when decided, AMBIGUOUS when not. Each look is judged
by the same rule the report applies afterwards: repetition i of the candidate paired
with repetition i of the reference (they ran back to back) once there are enough pairs,
so the loop stops on the test that will be published, and the plan of looks is
calibrated for that paired test. Everything here is derived
from the result lines, so a resumed run picks up exactly where it stopped.
"""
from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from testbed.sweep.config_run import Design
from testbed.sweep.plan import Cell

# name, (result section, key), higher is better
METRICS = {"throughput": (("throughput", "msgs_per_sec"), True),
           "p50_latency": (("latency", "p50"), False),
           "mean_latency": (("latency", "mean"), False)}  # kind perf-tools: libzmq's programs print a mean
UNDECIDED = "AMBIGUOUS"
FAILURE_LIMIT = 3   # failed attempts of one library in one configuration before it stops trying


class DesignError(ValueError):
    """A design that can never reach a decision; names the key to change."""


def load_decide() -> Decider:
    """The stats piece's functions; ImportError says what is missing."""
    module = importlib.import_module("testbed.results.decide")
    return Decider(module.decide_repetitions, module.min_samples, module.adaptive_design)


@dataclass(frozen=True)
class Decider:
    # decide(reference, candidate, *, higher_is_better, margin, confidence, seed), each side
    # a {repetition index: value} map: paired where enough indices are shared
    decide: Callable
    min_samples: Callable     # min_samples(confidence) -> n per side
    # adaptive_design(cap, batch, confidence, paired) -> start, looks, look_confidence
    adaptive_design: Callable


def metrics_for(mode: str, kind: str) -> tuple[str, ...]:
    if kind != "bench":
        return ()
    return {"thr": ("throughput",), "lat": ("p50_latency",), "both": ("throughput", "p50_latency")}[mode]


def metric_value(result: dict | None, metric: str) -> float | None:
    (section, key), _ = METRICS[metric]
    value = ((result or {}).get(section) or {}).get(key)
    return float(value) if isinstance(value, (int, float)) else None


def checked_design(design: Design, decider: Decider, where: str) -> tuple[Design, str]:
    """The design the loop runs. Fixed: one look at N, raised to min_samples if below.
    Adaptive: the stats piece's plan of looks (its start may raise the minimum; every
    look is judged at look_confidence so that all looks together keep `confidence`);
    a cap too small for one decisive look is refused naming the key."""
    if not design.adaptive:
        needed = decider.min_samples(design.confidence)
        if design.min_repetitions >= needed:
            return replace(design, look_confidence=design.confidence), ""
        note = (f"repetitions raised from {design.min_repetitions} to {needed}: fewer samples per library "
                f"can never reach a decision at confidence {design.confidence:g}")
        return replace(design, min_repetitions=needed, max_repetitions=needed,
                       look_confidence=design.confidence), note
    try:
        plan = decider.adaptive_design(design.max_repetitions, design.look_every,
                                       confidence=design.confidence, paired=True)
    except ValueError as exc:
        raise DesignError(f"{where}: run.max_repetitions: {exc}; allowed: a larger cap "
                          f"(or a smaller look_every)") from None
    start = max(design.min_repetitions, plan.start)
    note = "" if start == design.min_repetitions else (
        f"min_repetitions raised from {design.min_repetitions} to {start}: the first look needs that many "
        f"samples at the per-look confidence {plan.look_confidence:.4g} ({plan.looks} looks share "
        f"1 - {design.confidence:g})")
    planned = replace(design, min_repetitions=start, looks=plan.looks, look_confidence=plan.look_confidence)
    return planned, note


@dataclass
class Group:
    """One configuration: its cells (one per library) and where its repetitions stand."""
    group: str
    cells: list[Cell]
    stop_reason: str | None = None
    decisions: list[dict] = field(default_factory=list)

    def batch(self, rep: int, runnable: set[str]) -> list[tuple[Cell, int]]:
        """Repetition `rep` of every available library, rotated: A B, then B A, ..."""
        cells = [c for c in self.cells if c.library_name in runnable]
        if not cells:
            return []
        k = rep % len(cells)
        return [(c, rep) for c in cells[k:] + cells[:k]]


def reps_done(group: Group, done: set, runnable: set[str]) -> int:
    """How many leading repetitions every available library of the group has finished."""
    ids = [c.cell_id for c in group.cells if c.library_name in runnable]
    n = 0
    while ids and all((cid, n) in done for cid in ids):
        n += 1
    return n


def failures(group: Group, records: list[dict]) -> int:
    ids = {c.cell_id for c in group.cells}
    per_cell: dict[str, int] = {}
    for r in records:
        if r["cell_id"] in ids and r.get("status") != "ok" and r.get("repetition", 0) >= 0:
            per_cell[r["cell_id"]] = per_cell.get(r["cell_id"], 0) + 1
    return max(per_cell.values(), default=0)


def samples(group: Group, records: list[dict], metric: str,
            excluded: set | frozenset = frozenset()) -> dict[str, dict[int, float]]:
    """library label -> {repetition: value of `metric`} over its ok repetitions (latest
    attempt wins); the repetition index is what pairs the two sides of a comparison.
    Pairs in `excluded` ((group, repetition) marked host-drift) are left out."""
    ids = {c.cell_id: c.library for c in group.cells}
    latest: dict[tuple, dict] = {}
    for r in records:
        rep = r.get("repetition", -1)
        if r["cell_id"] in ids and rep >= 0 and (group.group, rep) not in excluded:
            latest[(r["cell_id"], r["repetition"])] = r
    out: dict[str, dict[int, float]] = {label: {} for label in ids.values()}
    for (cid, rep), r in sorted(latest.items(), key=lambda kv: kv[0][1]):
        value = metric_value(r.get("result"), metric) if r.get("status") == "ok" else None
        if value is not None:
            out[ids[cid]][rep] = value
    return out


class Judge:
    """Calls decide() for every comparison of a group; a comparison with fewer samples
    than the test needs is undecided without asking."""

    def __init__(self, decider: Decider, design: Design, reference: str, metrics):
        self.decide, self.design = decider.decide, design
        self.confidence = design.look_confidence or design.confidence
        self.min_samples = decider.min_samples(self.confidence)
        self.reference, self.metrics = reference, metrics

    def judge(self, group: Group, records: list[dict], excluded: set | frozenset = frozenset()) -> list[dict]:
        out = []
        for metric in self.metrics:
            values = samples(group, records, metric, excluded)
            ref = values.get(self.reference, {})
            for label, cand in values.items():
                if label != self.reference:
                    out.append(self._one(group.group, metric, label, ref, cand))
        return out

    def _one(self, group: str, metric: str, label: str,
             ref: dict[int, float], cand: dict[int, float]) -> dict:
        base = {"candidate": label, "reference": self.reference, "metric": metric,
                "n_reference": len(ref), "n_candidate": len(cand)}
        if min(len(ref), len(cand)) < self.min_samples:
            return {**base, "verdict": UNDECIDED, "why": f"fewer than {self.min_samples} samples"}
        seed = int(hashlib.sha256(f"{group}/{metric}/{label}".encode()).hexdigest()[:8], 16)
        try:
            d = self.decide(ref, cand, higher_is_better=METRICS[metric][1], margin=self.design.margin,
                            confidence=self.confidence, seed=seed)
        except ValueError as exc:  # too few samples for unequal sizes, or an unusable value
            return {**base, "verdict": UNDECIDED, "why": str(exc)}
        fields = ("verdict", "ratio", "low", "high", "p_value", "mde", "method")
        return {**base, "confidence": self.confidence, **{k: getattr(d, k, None) for k in fields}}


def all_decided(decisions: list[dict]) -> bool:
    return bool(decisions) and all(d["verdict"] != UNDECIDED for d in decisions)
