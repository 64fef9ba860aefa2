"""The settings header reads the arms bench's records too: it states `hwm_requested`
(-1 when the bench set no HWM), not `hwm`; the header once said "HWM  (the default is
1000)" for batch-sweep run 9ed5."""
from __future__ import annotations

from testbed.results import run_settings


def _record(hwm_requested: int) -> dict:
    settings = {"hwm_requested": hwm_requested, "sndbuf": -1, "rcvbuf": -1, "io_threads": 2,
                "security": "null"}
    return {"status": "ok", "library": "zlink", "placement": "one-core", "result": {"settings": settings}}


def test_an_arms_record_without_an_hwm_set_is_at_the_default():
    line = run_settings.line({"libraries": run_settings.from_records([_record(-1)]), "declared": {}})
    assert line.startswith(f"HWM {run_settings.DEFAULT_HWM} (the default)"), line


def test_an_arms_record_that_set_an_hwm_says_which():
    line = run_settings.line({"libraries": run_settings.from_records([_record(0)]), "declared": {}})
    assert line.startswith("HWM 0 ("), line
