"""Per cell: the two libraries' records side by side, the accounting summed over the
repetitions, and the testbed's verdicts (testbed.stats.decide) on the timings.

A timing verdict compares zlink's repetitions with libzmq's (lower is better): FAST,
SLOW, SAME or AMBIGUOUS as everywhere in the testbed, within the experiment's
declared timing margin. A time one library reached in every repetition and the
other in none is stated as such ("only libzmq"), since no ratio exists; fewer
repetitions with a value than the test needs is "n < k".
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import scipy.stats as sps

from testbed.stats import decide as decidemod

TIMINGS = ("detect_ms", "reconnect_ms", "resume_ms")
BAD = ("lost", "duplicated", "reordered", "corrupted", "phantom")
COUNTS = ("sent", "delivered", *BAD)
LOST_FACTOR, LOST_SLACK = 2, 20


@dataclass
class Side:
    runs: list[dict] = field(default_factory=list)

    def ok_runs(self) -> list[dict]:
        return [r for r in self.runs if r.get("error") is None]

    def total(self, key: str) -> int:
        # .get: runs recorded before a key existed (reordered_across) count 0
        return sum(r["accounting"].get(key, 0) for r in self.ok_runs())

    def runs_with(self, key: str) -> int:
        return sum(1 for r in self.ok_runs() if r["accounting"][key])

    def timing(self, key: str) -> dict[int, float]:
        return {r["repetition"]: r["timing"][key] for r in self.ok_runs() if r["timing"][key] is not None}

    def flags(self) -> dict[str, int]:
        return {
            "abort": sum(1 for r in self.runs if r.get("abort")),
            "hang": sum(1 for r in self.runs if r.get("hang")),
            "error": sum(1 for r in self.runs if r.get("error") or r.get("errors")),
        }

    def peak(self, key: str):
        values = [
            r["resources"][key] for r in self.ok_runs() if r["resources"] and r["resources"][key] is not None
        ]
        return max(values) if values else None


@dataclass
class CellSummary:
    key: str
    cell: dict
    sides: dict[str, Side]
    verdicts: dict[str, dict] = field(default_factory=dict)

    def bad(self, label: str) -> int:
        return sum(self.sides[label].total(k) for k in BAD)

    def worse_than_reference(self, reference: str, candidate: str) -> list[str]:
        """Accounting problems the candidate has in this cell that the reference never
        had in any repetition (the experiment's failure condition; reorders that were
        all across two connections are named so), losses far above
        the reference's where both lose (more than LOST_FACTOR x theirs + LOST_SLACK:
        which in-flight messages a fault takes varies run to run, a pattern that stops
        delivering does not), plus aborts, hangs and process errors."""
        ref, cand = self.sides[reference], self.sides[candidate]
        out = [k for k in BAD if cand.total(k) and not ref.total(k)]
        if "reordered" in out and cand.total("reordered_across") == cand.total("reordered"):
            out[out.index("reordered")] = "reordered, all across a reconnect"
        if "lost" not in out and cand.total("lost") > LOST_FACTOR * ref.total("lost") + LOST_SLACK:
            out.append("lost far more")
        flags = self.sides[candidate].flags()
        return out + [k for k in ("abort", "hang", "error") if flags[k]]


def group(records: list[dict]) -> dict[str, CellSummary]:
    cells: dict[str, CellSummary] = {}
    for r in records:
        summary = cells.setdefault(r["key"], CellSummary(r["key"], r["cell"], defaultdict(Side)))
        summary.sides[r["library"]].runs.append(r)
    return cells


def median(values) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None


def timing_verdict(
    ref: dict[int, float],
    cand: dict[int, float],
    *,
    margin: float,
    confidence: float,
    seed: int,
    ref_label: str,
    cand_label: str,
    runs: tuple[int, int],
) -> dict:
    if not ref and not cand:
        return {"verdict": "not seen"}
    if not cand and len(ref) == runs[0]:
        return {"verdict": f"only {ref_label}"}
    if not ref and len(cand) == runs[1]:
        return {"verdict": f"only {cand_label}"}
    need = decidemod.min_samples(confidence)
    # A zero time (delivery resumed within the same millisecond) has no logarithm: a
    # microsecond stands in for it on both sides alike.
    ref = {k: max(v, 1e-3) for k, v in ref.items()}
    cand = {k: max(v, 1e-3) for k, v in cand.items()}
    if min(len(ref), len(cand)) < need:
        return {"verdict": f"n < {need}", "n": [len(ref), len(cand)]}
    d = decidemod.decide_repetitions(
        ref, cand, higher_is_better=False, margin=margin, confidence=confidence, seed=seed
    )
    return {"verdict": d.verdict, "ratio": d.ratio, "low": d.low, "high": d.high, "n": [len(ref), len(cand)],
            "p": d.p_value}


def judge(
    cells: dict[str, CellSummary], reference: str, candidate: str, *, margin: float, confidence: float
) -> None:
    for i, (_key, summary) in enumerate(sorted(cells.items())):
        ref, cand = summary.sides[reference], summary.sides[candidate]
        for metric in TIMINGS:
            summary.verdicts[metric] = timing_verdict(
                ref.timing(metric),
                cand.timing(metric),
                margin=margin,
                confidence=confidence,
                seed=i,
                ref_label=reference,
                cand_label=candidate,
                runs=(len(ref.ok_runs()), len(cand.ok_runs())),
            )
    add_q_values(cells)


def add_q_values(cells: dict[str, CellSummary]) -> None:
    """Benjamini-Hochberg q per timing metric over the run's cells judged on an
    interval (as the sweeps' reports give it, results/compare.py): a matrix judges
    ~90-160 cells per timing, so at 0.95 confidence a few FAST or SLOW calls are
    expected by chance alone; q says which ones a false-discovery rate would keep."""
    for metric in TIMINGS:
        judged = [c.verdicts[metric] for c in cells.values() if c.verdicts[metric].get("p") is not None]
        if judged:
            qs = sps.false_discovery_control(np.clip([v["p"] for v in judged], 0, 1), method="bh")
            for v, q in zip(judged, qs):
                v["q"] = float(q)
