"""Placement: the axis turned into pins, refused when the host has too few CPUs, and
checked against the thread affinities the bench reports."""
from __future__ import annotations

import os

import pytest

from testbed.sweep import placement
from testbed.sweep.placement import Pins, PlacementError


def test_pins_for_each_placement():
    assert placement.pins_for("split", [2, 5, 7]) == Pins(sender="2", receiver="5")
    assert placement.pins_for("one-core", [3, 4]) == Pins(sender="3", receiver="3")
    assert placement.pins_for("free", []) == Pins()


@pytest.mark.parametrize("name,cpus,needed", [("split", [0], 2), ("one-core", [], 1)])
def test_too_few_cpus_is_refused_naming_placement_and_counts(name, cpus, needed):
    with pytest.raises(ValueError) as info:
        placement.pins_for(name, cpus)
    msg = str(info.value)
    assert repr(name) in msg and f"needs {needed} CPU" in msg and f"offers {len(cpus)}" in msg


def test_usable_cpus_follow_affinity_and_refuse_foreign_cpus():
    allowed = sorted(os.sched_getaffinity(0))
    assert placement.usable_cpus() == allowed
    assert placement.usable_cpus(str(allowed[0])) == [allowed[0]]
    with pytest.raises(PlacementError) as info:
        placement.usable_cpus("4000")
    assert "4000" in str(info.value) and "may not use" in str(info.value)
    with pytest.raises(ValueError):
        placement.parse_cpu_list("0-x")
    assert placement.parse_cpu_list("0,2-4") == [0, 2, 3, 4]


def threads(**cpus):
    return [{"tid": i, "name": role, "role": role, "cpus": c} for i, (role, c) in enumerate(cpus.items())]


def test_check_threads_verifies_each_side_and_ignores_harness_threads():
    pins = Pins(sender="0", receiver="1")
    ok = placement.check_threads(pins, threads(sender="0", receiver="1", main="0-1",
                                               **{"library:sender": "0", "library:receiver": "1"}))
    assert ok == {"checked": 4, "ok": True, "mismatches": []}
    bad = placement.check_threads(pins, threads(sender="0", receiver="0-1"))
    assert bad["ok"] is False and bad["mismatches"][0]["role"] == "receiver"
    assert bad["mismatches"][0]["expected"] == "1" and bad["mismatches"][0]["actual"] == "0-1"
    assert placement.check_threads(pins, None)["ok"] is None  # unreported is not "verified"
    assert placement.check_threads(Pins(), threads(sender="0-1"))["checked"] == 0  # free: nothing asked


def test_summary_counts_verified_mismatched_and_unreported_cells():
    recs = [
        {"status": "ok", "placement": "split", "cell_id": "a", "repetition": 0,
         "placement_check": {"checked": 2, "ok": True, "mismatches": []}},
        {"status": "ok", "placement": "split", "cell_id": "b", "repetition": 0,
         "placement_check": {"checked": 2, "ok": False, "mismatches": [{"role": "sender"}]}},
        {"status": "ok", "placement": "split", "cell_id": "c", "repetition": 0,
         "placement_check": {"checked": 0, "ok": None, "mismatches": []}},
        {"status": "failed", "placement": "split", "cell_id": "d", "repetition": 0},
    ]
    s = placement.summarize(recs)["split"]
    assert (s["cells"], s["verified"], s["mismatched"], s["unreported"]) == (3, 1, 1, 1)
    assert s["examples"][0]["cell_id"] == "b"
