"""sweep/hostinfo.py's loopback settings (the host facts behind two-mode loopback round
trips) and the report's run-table row that states them."""
from __future__ import annotations

from pathlib import Path

from testbed.records.manifest import RunManifest
from testbed.results import run_table
from testbed.sweep import hostinfo

KEYS = {"tcp_congestion_control", "default_qdisc", "cpuidle_driver", "cpuidle_governor", "guest_halt_poll_ns"}


def test_the_loopback_settings_are_read_from_the_kernel_or_null():
    got = hostinfo.loopback_settings()
    assert set(got) == KEYS and hostinfo.host()["loopback"].keys() == KEYS
    proc = Path("/proc/sys/net/ipv4/tcp_congestion_control")
    assert got["tcp_congestion_control"] == (proc.read_text().strip() if proc.exists() else None)
    halt = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
    assert got["guest_halt_poll_ns"] == (halt.read_text().strip() if halt.exists() else None)


def _manifest(host: dict) -> RunManifest:
    return RunManifest.read({"schema": "testbed.manifest/2", "run_id": "r", "experiment": "e", "host": host})


def test_the_run_table_states_them_when_the_run_recorded_them():
    lb = {"tcp_congestion_control": "bbr", "default_qdisc": "fq", "cpuidle_driver": "haltpoll",
          "cpuidle_governor": "haltpoll", "guest_halt_poll_ns": "0"}
    rows = dict(run_table.brief(_manifest({"cores": 2, "loopback": lb})))
    assert rows["loopback latency settings"] == \
        "tcp congestion control bbr (qdisc fq), idle haltpoll/haltpoll, guest halt poll 0 ns"
    bare = {k: None for k in KEYS}
    assert run_table.loopback_text(bare) == "tcp congestion control ?, idle ?/?"
    # a run from before 2026-12-05 has no such facts: no row (its report stays as it was)
    assert "loopback latency settings" not in dict(run_table.brief(_manifest({"cores": 2})))
