"""Where a cell's threads run: the placement axis turned into CPU pins, and the check
that the bench's threads really ran there.

Placement is the main source of noise on small hosts (FACTS: unpinned PAIR tcp 64 B is
bimodal with CV ~40%; pinned, 2-3%), so it is declared per cell, translated into pins,
and verified afterwards from the bench's own report of every thread's affinity:

- split:    the sending side (its thread and its context's IO threads) on one CPU, the
            receiving side on another; needs 2 usable CPUs.
- one-core: everything on one CPU (a CPU-efficiency regime); needs 1.
- free:     no pinning (the scheduler decides; results may be bimodal).

The bench applies the pins (--pin-sender/--pin-receiver): in one process each side's
thread and its context's IO threads; a role process pins itself whole to its side's
CPUs before any library thread exists.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from testbed.bench import command

SIDES = ("sender", "receiver")


class PlacementError(ValueError):
    """This host cannot give the placement a cell asks for."""


@dataclass(frozen=True)
class Pins:
    """CPU lists (taskset syntax) for each side; None = not pinned."""
    sender: str | None = None
    receiver: str | None = None

    def for_side(self, side: str) -> str | None:
        return self.sender if side == "sender" else self.receiver

    def as_dict(self) -> dict:
        return {"sender": self.sender, "receiver": self.receiver}


def parse_cpu_list(text: str) -> list[int]:
    """"0,2-3" -> [0, 2, 3]; ValueError naming the text when it is not a CPU list."""
    cpus: set[int] = set()
    for part in text.split(","):
        bounds = part.strip().split("-")
        if len(bounds) > 2 or not all(b.isdigit() for b in bounds):
            raise ValueError(f"bad CPU list {text!r} (expected e.g. \"0,2-3\")")
        low, high = int(bounds[0]), int(bounds[-1])
        cpus.update(range(low, high + 1))
    return sorted(cpus)


def usable_cpus(declared: str | None = None) -> list[int]:
    """CPUs placements may use: this process's affinity, narrowed to `declared` ([run].cpus)."""
    allowed = sorted(os.sched_getaffinity(0))
    if declared is None:
        return allowed
    wanted = parse_cpu_list(declared)
    outside = [c for c in wanted if c not in allowed]
    if outside:
        raise PlacementError(f"[run].cpus = {declared!r} names CPUs {outside} this process may not use "
                             f"(allowed: {allowed})")
    return wanted


def pins_for(placement: str, cpus: list[int]) -> Pins:
    """The pins of `placement` on `cpus` (testbed.bench.command.placement_pins, the one
    place that maps a placement to CPUs); ValueError naming it when there are too few."""
    pins = command.placement_pins(placement, cpus)
    return Pins(sender=pins["pin_sender"], receiver=pins["pin_receiver"])


def side_of(thread_role: str) -> str | None:
    """Bench thread roles: sender, receiver, library:<side>, and harness threads
    (main, watchdog, control, library) that belong to no side."""
    base = thread_role.split(":", 1)[-1] if thread_role.startswith("library:") else thread_role
    return base if base in SIDES else None


def check_threads(pins: Pins, threads: list[dict] | None) -> dict:
    """Did every thread of a pinned side run where it was asked? `threads` is the
    bench's list ({"tid", "name", "role", "cpus"}), joined over both role processes."""
    if not threads:
        return {"checked": 0, "ok": None, "mismatches": [], "reason": "the bench reported no threads"}
    mismatches, checked = [], 0
    for t in threads:
        side = side_of(str(t.get("role", "")))
        want = pins.for_side(side) if side else None
        if want is None:
            continue
        checked += 1
        try:
            actual = parse_cpu_list(str(t.get("cpus", "")))
        except ValueError:
            actual = None
        if actual != parse_cpu_list(want):
            mismatches.append({"tid": t.get("tid"), "name": t.get("name"), "role": t.get("role"),
                               "expected": want, "actual": t.get("cpus")})
    return {"checked": checked, "ok": not mismatches, "mismatches": mismatches}


def summarize(records: list[dict]) -> dict:
    """Manifest summary: per placement, how many ok cells had every pinned thread where
    asked, and the first mismatches."""
    out: dict[str, dict] = {}
    for r in records:
        if r.get("status") != "ok" or "placement" not in r:
            continue
        entry = out.setdefault(r["placement"], {"cells": 0, "threads_checked": 0, "verified": 0,
                                                "mismatched": 0, "unreported": 0, "examples": []})
        check = r.get("placement_check") or {}
        entry["cells"] += 1
        entry["threads_checked"] += check.get("checked", 0)
        if check.get("ok") is None:
            entry["unreported"] += r["placement"] != "free"
        elif check["ok"]:
            entry["verified"] += 1
        else:
            entry["mismatched"] += 1
            if len(entry["examples"]) < 5:
                entry["examples"].append({"cell_id": r["cell_id"], "repetition": r["repetition"],
                                          "mismatches": check["mismatches"][:3]})
    return out
