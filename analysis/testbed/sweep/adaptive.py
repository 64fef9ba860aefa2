"""Adaptive repetitions: after the design's minimum, each block gets one more
interleaved batch at a time (plan.block_order) until every comparison in it is
decided, it reaches `max_repetitions`, or the run reaches `time_budget_s`.

A comparison is one candidate library against the reference library in one
configuration, or one configuration against the no-override one for one library, on
one metric (throughput, p50 latency; p99 latency where [run].stop_on names it); all
cells of a block (a workload point's libraries and configurations) run back to back,
so both kinds are paired;
`testbed.stats.decide.decide_repetitions` (the stats piece) gives its verdict,
FAST/SLOW/SAME when decided, AMBIGUOUS when not. Each look is judged
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

from testbed.records import configs, counted
from testbed.sweep.config_run import Design
from testbed.sweep.plan import Cell, block_order

# name, (result section, key), higher is better
METRICS = {"throughput": (("throughput", "msgs_per_sec"), True),
           "p50_latency": (("latency", "p50"), False),
           "p99_latency": (("latency", "p99"), False),  # per repetition: the run's own p99
           "mean_latency": (("latency", "mean"), False),  # kind perf-tools: libzmq's programs print a mean
           # counted work per message of arms runs (records/counted.py), by its tidy name
           **{m.name: (("counted", m.name), m.higher_is_better) for m in counted.METRICS}}
UNDECIDED = "AMBIGUOUS"
FAILURE_LIMIT = 3   # failed attempts of one library in one configuration before it stops trying


class DesignError(ValueError):
    """A design that can never reach a decision; names the key to change."""


def load_decide() -> Decider:
    """The stats piece's functions; ImportError says what is missing."""
    module = importlib.import_module("testbed.stats.decide")
    return Decider(module.decide_repetitions, module.min_samples, module.adaptive_design)


@dataclass(frozen=True)
class Decider:
    # decide(reference, candidate, *, higher_is_better, margin, confidence, seed), each side
    # a {repetition index: value} map: paired where enough indices are shared
    decide: Callable
    min_samples: Callable     # min_samples(confidence) -> n per side
    # adaptive_design(cap, batch, confidence, paired) -> start, looks, look_confidence
    adaptive_design: Callable


def metrics_for(mode: str, kind: str, stop_on: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What the loop judges and waits for: `stop_on` ([run].stop_on) where given, else
    throughput and p50 latency; only what the mode measures."""
    if kind != "bench":
        return ()
    measured = {"thr": ("throughput", *counted.JUDGED), "lat": ("p50_latency", "p99_latency"),
                "both": ("throughput", "p50_latency", "p99_latency", *counted.JUDGED)}[mode]
    wanted = stop_on or ("throughput", "p50_latency")
    return tuple(m for m in wanted if m in measured)


def metric_value(result: dict | None, metric: str) -> float | None:
    if metric in counted.BY_NAME:
        return counted.value(result, metric)
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
    """One block: its cells (every library in every configuration of one workload
    point) and where its repetitions stand. `group` is the block id."""
    group: str
    cells: list[Cell]
    stop_reason: str | None = None
    decisions: list[dict] = field(default_factory=list)

    def batch(self, rep: int, runnable: set[str]) -> list[tuple[Cell, int]]:
        """Repetition `rep` of every available cell, in the block's balanced order."""
        cells = [c for c in self.cells if c.library_name in runnable]
        return [(c, rep) for c in block_order(cells, rep)] if cells else []


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
    """cell id -> {repetition: value of `metric`} over its ok repetitions (latest
    attempt wins); the repetition index is what pairs the two sides of a comparison.
    Repetitions in `excluded` ((block, repetition) marked host-drift) are left out."""
    ids = {c.cell_id for c in group.cells}
    latest: dict[tuple, dict] = {}
    for r in records:
        rep = r.get("repetition", -1)
        if r["cell_id"] in ids and rep >= 0 and (group.group, rep) not in excluded:
            latest[(r["cell_id"], r["repetition"])] = r
    out: dict[str, dict[int, float]] = {cid: {} for cid in ids}
    for (cid, rep), r in sorted(latest.items(), key=lambda kv: kv[0][1]):
        value = metric_value(r.get("result"), metric) if r.get("status") == "ok" else None
        if value is not None:
            out[cid][rep] = value
    return out


def reference_config(cells: list[Cell]) -> str | None:
    """The 'no override' configuration of a block (records.configs, the rule the
    report's comparisons apply too)."""
    sets: dict[str, frozenset] = {}
    for c in cells:
        sets.setdefault(c.config, configs.overrides(c.params.items()))
    return configs.reference_config(sets)


def comparisons(cells: list[Cell], reference: str) -> list[tuple[str, Cell, Cell]]:
    """(kind, candidate, reference) of one block: each library against the reference
    library in every configuration, and each configuration against the no-override one
    for every library. All of them ran back to back at every repetition: all paired."""
    by = {(c.config, c.library): c for c in cells}
    out = []
    for c in cells:
        ref = by.get((c.config, reference))
        if c.library != reference and ref is not None:
            out.append(("library", c, ref))
    ref_cfg = reference_config(cells)
    for c in cells:
        ref = by.get((ref_cfg, c.library))
        if ref_cfg is not None and c.config != ref_cfg and ref is not None:
            out.append(("config", c, ref))
    return out


class Judge:
    """Calls decide() for every comparison of a block; a comparison with fewer samples
    than the test needs is undecided without asking."""

    def __init__(self, decider: Decider, design: Design, reference: str, metrics):
        self.decide, self.design = decider.decide, design
        self.confidence = design.look_confidence or design.confidence
        self.min_samples = decider.min_samples(self.confidence)
        self.reference, self.metrics = reference, metrics

    def judge(self, group: Group, records: list[dict], excluded: set | frozenset = frozenset()) -> list[dict]:
        out = []
        pairs = comparisons(group.cells, self.reference)
        for metric in self.metrics:
            values = samples(group, records, metric, excluded)
            for kind, cand, ref in pairs:
                out.append(self._one(kind, cand, ref, metric, values[ref.cell_id], values[cand.cell_id]))
        return out

    def _one(self, kind: str, cand: Cell, ref: Cell, metric: str,
             ref_values: dict[int, float], cand_values: dict[int, float]) -> dict:
        label, against = (cand.library, ref.library) if kind == "library" else (cand.config, ref.config)
        base = {"kind": kind, "candidate": label, "reference": against, "metric": metric,
                "config": cand.config, "library": cand.library,
                "n_reference": len(ref_values), "n_candidate": len(cand_values)}
        if min(len(ref_values), len(cand_values)) < self.min_samples:
            return {**base, "verdict": UNDECIDED, "why": f"fewer than {self.min_samples} samples"}
        # The seed names the comparison as the report does not need to: MDE only.
        seed = int(hashlib.sha256(f"{cand.group}/{metric}/{kind}/{ref.cell_id}".encode()).hexdigest()[:8], 16)
        try:
            d = self.decide(ref_values, cand_values, higher_is_better=METRICS[metric][1],
                            margin=self.design.margin_for(kind), confidence=self.confidence, seed=seed)
        except ValueError as exc:  # too few samples for unequal sizes, or an unusable value
            return {**base, "verdict": UNDECIDED, "why": str(exc)}
        fields = ("verdict", "ratio", "low", "high", "p_value", "mde", "method")
        return {**base, "confidence": self.confidence, **{k: getattr(d, k, None) for k in fields}}


def all_decided(decisions: list[dict]) -> bool:
    return bool(decisions) and all(d["verdict"] != UNDECIDED for d in decisions)
