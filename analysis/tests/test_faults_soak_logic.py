"""The soak's schedule and judgements on synthetic input: the warm-up, the quiet
windows, the flatness rule and which losses a fault explains."""

from __future__ import annotations

from testbed import paths
from testbed.faults import config, soak
from testbed.faults.records import RECEIVED, Record
from testbed.toolchain import libraries

NAMES = libraries.registered_names()


def exp(profile="default"):
    return config.load(paths.EXPERIMENTS_DIR / "faults-soak" / "experiment.toml", profile, NAMES)


def test_schedule_warms_up_with_every_fault_then_stays_quiet_where_measured():
    e = exp()
    plan = soak.schedule(e, 20)
    warm = [f for f in plan if f["pair"] is None]
    assert [f["fault"] for f in warm][0] == "peer-kill"  # kills first
    assert sorted(f["fault"] for f in warm) == sorted(e.fault_names)
    assert all(f["end_s"] - f["start_s"] == e.soak.fault_s[1] for f in warm)
    assert max(f["end_s"] for f in warm) + config.SOAK_SETTLE_S <= e.soak.warmup_s
    rest = [f for f in plan if f["pair"] is not None]
    level_end = e.soak.warmup_s + e.soak.level_window_s
    assert rest and min(f["start_s"] for f in rest) >= level_end
    assert max(f["end_s"] for f in rest) <= e.soak.duration_s - e.soak.end_window_s - config.SOAK_SETTLE_S
    assert soak.schedule(e, 20) == plan  # seeded: the same faults every run


def sample(t_s, rss, fds=10):
    return {"t": int(t_s * 1e9), "what": "sample", "rss_kb": rss, "fds": fds}


def test_flatness_compares_medians_of_the_two_windows():
    e = exp("quick")  # level [21, 27] s, end [39, 45] s
    level = [sample(t, 1000) for t in range(21, 27)]
    flat = soak.flatness(level + [sample(t, 1040) for t in range(39, 45)], 0, e)
    assert flat["rss_kb"]["flat"] and abs(flat["rss_kb"]["change"] - 0.04) < 1e-9
    grown = soak.flatness(level + [sample(t, 1060) for t in range(39, 45)], 0, e)
    assert not grown["rss_kb"]["flat"]
    shrunk = soak.flatness(level + [sample(t, 900) for t in range(39, 45)], 0, e)
    assert not shrunk["rss_kb"]["flat"]  # within 5% either way, as the issue asks
    assert soak.flatness([], 0, e)["fds"] == {"level": None, "end": None, "change": None, "flat": False}


def test_losses_are_explained_by_a_window_or_by_a_late_subscription():
    windows = [(100, 200)]
    assert soak._unexplained([150, 250, 50], windows) == 2
    recv = [[Record(RECEIVED, True, 1, 5, 999, 60), Record(RECEIVED, False, 1, 6, 999, 10)]]
    assert soak._first_delivered_send(recv) == 60  # a corrupted reception does not count
    assert soak._unexplained([50, 250], [*windows, (0, soak._first_delivered_send(recv))]) == 1
