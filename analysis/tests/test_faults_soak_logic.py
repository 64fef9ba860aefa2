"""The soak's schedule and judgements on synthetic input: the warm-up, the quiet
windows, the flatness rule and which losses a fault explains."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from testbed import paths
from testbed.faults import cell, config, run_cmd, soak
from testbed.faults.records import RECEIVED, Record
from testbed.toolchain import libraries

NAMES = libraries.registered_names()


def exp(profile="default"):
    return config.load(paths.EXPERIMENTS_DIR / "faults-soak" / "experiment.toml", profile, NAMES)


def test_schedule_warms_up_with_every_fault_then_stays_quiet_where_measured():
    e = exp()
    plan = soak.schedule(e, 20)
    warm = [f for f in plan if f["pair"] is None]
    n = len(e.fault_names)
    assert e.soak.warmup_rounds == 2 and e.soak.warmup_rounds_reason
    assert len(warm) == 2 * n
    for rnd in (warm[:n], warm[n:]):  # every fault in every round, kills first
        assert rnd[0]["fault"] == "peer-kill"
        assert sorted(f["fault"] for f in rnd) == sorted(e.fault_names)
    # The second round meets grown processes: in run 7a31 the libzmq SUB reached its
    # level 53 s in; the first round's kill came at 3 s.
    assert warm[n]["start_s"] >= 53
    assert all(f["end_s"] - f["start_s"] == e.soak.fault_s[1] for f in warm)
    assert max(f["end_s"] for f in warm) + config.SOAK_SETTLE_S <= e.soak.warmup_s
    rest = [f for f in plan if f["pair"] is not None]
    level_end = e.soak.warmup_s + e.soak.level_window_s
    assert rest and min(f["start_s"] for f in rest) >= level_end
    assert max(f["end_s"] for f in rest) <= e.soak.duration_s - e.soak.end_window_s - config.SOAK_SETTLE_S
    assert soak.schedule(e, 20) == plan  # seeded: the same faults every run
    other = replace(e, soak=replace(e.soak, seed=e.soak.seed + 1))
    assert soak.schedule(other, 20)[: 2 * n] == warm and soak.schedule(other, 20) != plan
    quick = exp("quick")
    assert len([f for f in soak.schedule(quick, 5) if f["pair"] is None]) == len(quick.fault_names)


def test_a_soak_runs_with_its_toml_seed_unless_told_otherwise():
    """The run's seed (the manifest's "seed") is [soak].seed by default: the same faults
    at the same times on every run; --seed gives another schedule."""
    e = exp()
    assert run_cmd.default_seed(e) == e.soak.seed


class _Proxy:
    def create(self, name, upstream):
        return "127.0.0.1:5999"


def test_every_soak_process_seeds_rand_from_the_run_seed(monkeypatch, tmp_path):
    """[traffic] seed_rand is declared in the soak too; every process of every pair,
    the bound side restarted after a kill included, is started with --seed-rand:
    derived from the run's seed, the pair, role and epoch; the same for both
    libraries of a pair; distinct otherwise; another run seed, other seeds. A soak
    process started without its seed fails here."""
    e = exp()
    assert e.traffic.seed_rand and e.traffic.seed_rand_reason
    argvs: dict[tuple, list[str]] = {}

    def fake_start(binary, args, role, epoch, work):
        d = SimpleNamespace(role=role, epoch=epoch, wait_line=lambda *a: "BOUND tcp://127.0.0.1:5000")
        argvs[(work.name, role, epoch)] = args
        return d

    monkeypatch.setattr(cell.Driver, "start", staticmethod(fake_start))
    times = cell.timeline(e, 0)
    times.update(send_until=10**9, until=2 * 10**9)
    seeds: dict[tuple, int] = {}
    for seed in (7, 8):
        for lib in ("libzmq-4.3.5", "zlink"):
            for i, c in enumerate(soak.pairs(e)):
                work = tmp_path / f"{seed}-{lib}-{i}"
                pair = soak._start_pair(e, c, Path("drv"), _Proxy(), work, f"{lib}-{i}", times, seed)
                pair.restart_bound()  # a kill's new epoch
                for d in pair.processes:
                    args = argvs[(work.name, d.role, d.epoch)]
                    assert "--seed-rand" in args, (lib, c.key(), d.role, d.epoch)
                    given = int(args[args.index("--seed-rand") + 1])
                    expected = cell.rand_seed(soak.rand_seed_base(seed, c), d.role, d.epoch)
                    assert given == d.rand_seed == expected
                    assert seeds.setdefault((seed, i, d.role, d.epoch), given) == given  # both libraries
    for seed in (7, 8):
        mine = [v for k, v in seeds.items() if k[0] == seed]
        assert len(mine) == len(set(mine)) == 3 * len(soak.pairs(e))
    assert {v for k, v in seeds.items() if k[0] == 7}.isdisjoint(v for k, v in seeds.items() if k[0] == 8)
    unseeded = replace(e, traffic=replace(e.traffic, seed_rand=False))
    argvs.clear()
    soak._start_pair(unseeded, soak.pairs(e)[0], Path("drv"), _Proxy(), tmp_path / "plain", "x", times, 7)
    assert argvs and not any("--seed-rand" in a for a in argvs.values())


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
