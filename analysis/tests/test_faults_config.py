"""experiment.toml of the faults kinds: the shipped ones validate in every profile and
dry-run through `./testbed run`; bad input names the file, the key and what is allowed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testbed import paths
from testbed.faults import config
from testbed.sweep.toml_reader import ExperimentError
from testbed.toolchain import libraries

ANALYSIS = Path(__file__).resolve().parents[1]
SHIPPED = ("faults", "faults-soak")
NAMES = libraries.registered_names()


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("profile", config.PROFILE_NAMES)
def test_shipped_validates_and_dry_runs(name, profile):
    path = paths.EXPERIMENTS_DIR / name / "experiment.toml"
    exp = config.load(path, profile, NAMES)
    assert exp.name == name and exp.cells()
    assert (paths.EXPERIMENTS_DIR / name / "README.md").is_file()
    proc = subprocess.run(
        [sys.executable, "-m", "testbed.cli", "run", name, "--profile", profile, "--dry-run"],
        capture_output=True,
        text=True,
        cwd=ANALYSIS,
    )
    assert proc.returncode == 0, proc.stderr
    assert name in proc.stdout


def test_matrix_excludes_heartbeats_where_declared():
    exp = config.load(paths.EXPERIMENTS_DIR / "faults" / "experiment.toml", "default", NAMES)
    keys = {c.key() for c in exp.cells()}
    assert "PAIR/null/hb-on/partition" in keys and "PAIR/null/hb-off/partition" in keys
    assert "PAIR/null/hb-on/slicer" not in keys and "PAIR/null/hb-off/slicer" in keys


def _bad(tmp_path, old: str, new: str, name="faults") -> str:
    text = (paths.EXPERIMENTS_DIR / name / "experiment.toml").read_text()
    assert old in text, old
    folder = tmp_path / name
    folder.mkdir()
    (folder / "experiment.toml").write_text(text.replace(old, new, 1))
    with pytest.raises(ExperimentError) as err:
        config.load(folder / "experiment.toml", "default", NAMES)
    msg = str(err.value)
    assert msg.startswith(str(folder / "experiment.toml") + ": ")
    return msg


def test_unknown_toxic_attribute_is_named(tmp_path):
    msg = _bad(tmp_path, "latency = 50, jitter = 25", "latency = 50, jiter = 25")
    assert "faults.latency.toxics[0].attributes.jiter" in msg and "allowed: latency, jitter" in msg


def test_unknown_toxic_type_is_named(tmp_path):
    msg = _bad(tmp_path, 'type = "bandwidth"', 'type = "bandwith"')
    assert "faults.bandwidth.toxics[0].type" in msg and "limit_data" in msg


def test_bad_stream_is_named(tmp_path):
    msg = _bad(tmp_path, 'type = "slicer", stream = "both"', 'type = "slicer", stream = "sideways"')
    assert "faults.slicer.toxics[0].stream" in msg and "upstream, downstream, both" in msg


def test_sweep_fault_must_be_declared(tmp_path):
    msg = _bad(tmp_path, '"slicer", "slow-close"', '"slicer", "meteor", "slow-close"')
    assert "sweep.faults" in msg and "'meteor'" in msg and "peer-kill" in msg


def test_linger_needs_its_reason(tmp_path):
    msg = _bad(tmp_path, "linger_reason =", "linger_why =")
    assert "traffic" in msg


def test_exclude_rule_values_are_checked(tmp_path):
    msg = _bad(tmp_path, 'heartbeat = "on"\n', 'heartbeat = "yes"\n')
    assert "sweep.exclude[0].heartbeat" in msg and "off, on" in msg


def test_soak_refuses_cell_phases(tmp_path):
    msg = _bad(tmp_path, "startup_s = 1.0", "startup_s = 1.0\nfault_s = 2", name="faults-soak")
    assert "schedule.fault_s" in msg and "soak" in msg


def test_soak_windows_must_fit(tmp_path):
    msg = _bad(tmp_path, "duration_s = 600", "duration_s = 100", name="faults-soak")
    assert "soak.duration_s" in msg


def test_kind_of_reads_the_workload_kind(tmp_path):
    assert config.kind_of(paths.EXPERIMENTS_DIR / "faults" / "experiment.toml") == "faults"
    assert config.kind_of(paths.EXPERIMENTS_DIR / "batch-sweep" / "experiment.toml") in (None, "bench")
    (tmp_path / "x.toml").write_text("not toml [")
    assert config.kind_of(tmp_path / "x.toml") is None


def test_a_run_directory_copy_loads_under_any_folder_name(tmp_path):
    copy = tmp_path / "20261202T000000Z-abcd" / "experiment.toml"
    copy.parent.mkdir()
    copy.write_text((paths.EXPERIMENTS_DIR / "faults" / "experiment.toml").read_text())
    assert config.load(copy, "quick", NAMES).name == "faults"


def test_concurrency_needs_its_reason(tmp_path):
    msg = _bad(tmp_path, "concurrency_reason = ", "concurrency_note = ")
    assert "concurrency" in msg


def test_concurrency_is_bounded(tmp_path):
    msg = _bad(tmp_path, "concurrency = 4", "concurrency = 0")
    assert "run.concurrency" in msg and "an integer from 1 to 16" in msg


def test_fault_stretch_is_shared_by_a_pair_and_varies_over_repetitions():
    """Both libraries of a pair get the same fault length (run_one draws from the run's
    seed, cell and repetition only: the same seed, the same lengths; another run's
    seed, others), the lengths spread over [fault_s, fault_s + fault_jitter_s), and
    the timeline uses them."""
    from testbed.faults import cell

    exp = config.load(paths.EXPERIMENTS_DIR / "faults" / "experiment.toml", "default", NAMES)
    assert exp.schedule.fault_jitter_s == pytest.approx(0.2)
    c = next(x for x in exp.cells() if x.key() == "PAIR/null/hb-off/peer-kill")
    stretches = [cell.fault_stretch(exp, c, rep, 7) for rep in range(40)]
    assert stretches == [cell.fault_stretch(exp, c, rep, 7) for rep in range(40)]
    assert stretches != [cell.fault_stretch(exp, c, rep, 8) for rep in range(40)]
    assert all(0 <= s < 0.2 for s in stretches)
    assert max(stretches) - min(stretches) > 0.1  # not one point of the retry cycle
    t = cell.timeline(exp, 0, stretches[0])
    assert t["fault_end"] - t["fault_start"] == int((exp.schedule.fault_s + stretches[0]) * 1e9)


def test_fault_jitter_must_not_be_negative(tmp_path):
    msg = _bad(tmp_path, "fault_jitter_s = 0.2", "fault_jitter_s = -1")
    assert "schedule.fault_jitter_s" in msg


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        ("warmup_rounds_reason =", "warmup_rounds_why =", "soak.warmup_rounds_reason"),
        ("warmup_rounds = 2", "warmup_rounds = 3", "3 x 8 faults"),  # no longer fits warmup_s
        ("warmup_rounds = 2", "warmup_rounds = 0", "soak.warmup_rounds"),
    ],
)
def test_soak_warmup_rounds_need_their_reason_and_must_fit(tmp_path, old, new, named):
    msg = _bad(tmp_path, old, new, name="faults-soak")
    assert named in msg


def test_seed_rand_needs_its_reason(tmp_path):
    msg = _bad(tmp_path, "seed_rand_reason =", "seed_rand_why =")
    assert "traffic" in msg and "seed_rand" in msg


def test_every_driver_process_seeds_rand_its_own_way(monkeypatch, tmp_path):
    """With [traffic] seed_rand (declared in the shipped experiment), each process of
    a cell run gets --seed-rand, drawn from the run's seed (cell.draw_key): one seed
    per role and epoch (a restarted peer draws afresh), the same for both libraries of
    a pair (the same run, cell and repetition), another for another repetition or
    another run's seed; the process's record keeps it; without seed_rand, no flag."""
    from types import SimpleNamespace

    from testbed.faults import cell

    exp = config.load(paths.EXPERIMENTS_DIR / "faults" / "experiment.toml", "default", NAMES)
    assert exp.traffic.seed_rand and exp.traffic.seed_rand_reason
    c = next(x for x in exp.cells() if x.key() == "PUB_SUB/null/hb-off/peer-kill")
    started: list[list[str]] = []

    def fake_start(binary, args, *rest):
        started.append(args)
        return SimpleNamespace()

    monkeypatch.setattr(cell.Driver, "start", staticmethod(fake_start))

    def seeds(base):
        started.clear()
        pair = cell.Pair(Path("drv"), tmp_path, None, "p", args=["--rate", "200"], rand_seed_base=base)
        for role, epoch in (("recv", 1), ("send", 1), ("recv", 2)):
            pair.start(pair.args, role, epoch)
        flags = [int(a[a.index("--seed-rand") + 1]) if "--seed-rand" in a else None for a in started]
        assert flags == [getattr(d, "rand_seed", None) for d in pair.processes]  # recorded as given
        return flags

    rep0 = seeds(cell.draw_key(7, c, 0))
    assert None not in rep0 and len(set(rep0)) == 3
    assert seeds(cell.draw_key(7, c, 0)) == rep0  # the pair's other library, or a resumed run
    assert set(seeds(cell.draw_key(7, c, 1))).isdisjoint(rep0)
    assert set(seeds(cell.draw_key(8, c, 0))).isdisjoint(rep0)  # another run
    assert seeds(None) == [None, None, None]
