"""experiment.toml validation: bad input gives one line naming file, key and what is
allowed; every shipped experiment validates and dry-runs in every profile."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_sweep_support import ANALYSIS, EXPERIMENT, fill
from testbed import paths
from testbed.results import notebook_gen
from testbed.sweep import config, plan, run_cmd

NAMES = ["libzmq-4.3.5", "libzmq-4.3.5-nocurve", "zlink"]


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "experiment.toml"
    p.write_text(fill(text))
    return p


def error_of(tmp_path: Path, text: str, profile: str = "default") -> str:
    with pytest.raises(config.ExperimentError) as info:
        config.load(write(tmp_path, text), profile, NAMES)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(str(tmp_path / "experiment.toml") + ": ")
    return msg


def test_fake_experiment_is_valid(tmp_path):
    exp = config.load(write(tmp_path, EXPERIMENT), "default", NAMES)
    assert exp.repetitions == 2 and exp.reference == "libzmq-4.3.5"
    assert config.load(write(tmp_path, EXPERIMENT), "quick", NAMES).repetitions == 1


@pytest.mark.parametrize("old,new,key,allowed", [
    # unknown key
    ('timeout_s = TIMEOUT', 'timeout_s = TIMEOUT\nbogus = 1', "run.bogus", "repetitions"),
    ('[workload]', '[workload]\nsize = [1]', "workload.size", "sizes"),
    # wrong type
    ('repetitions = 2', 'repetitions = "two"', "run.repetitions", "an integer >= 1"),
    ('sizes = [64, 1024]', 'sizes = "64"', "workload.sizes", "integers"),
    ('io_threads = [1]', 'io_threads = [true]', "sweep.io_threads", "integers >= 1"),
    # unknown pattern / transport / library
    ('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR", "PUSHPULL"]', "workload.patterns",
     "ROUTER_ROUTER_POLL"),
    ('transports = ["tcp"]', 'transports = ["udp"]', "workload.transports", "inproc"),
    ('use = ["libzmq-4.3.5", "zlink"]', 'use = ["libzmq-4.3.5", "zmq-4.1"]', "libraries.use", "zlink"),
    ('reference = "libzmq-4.3.5"', 'reference = "zmq"', "libraries.reference", "libzmq-4.3.5, zlink"),
    # empty axis
    ('sizes = [64, 1024]', 'sizes = []', "workload.sizes", "non-empty"),
    ('io_threads = [1]', 'io_threads = [1]\n[sweep.env]\nZMQ_X = []', "sweep.env.ZMQ_X", "non-empty"),
    ('patterns = ["PAIR", "PUBSUB"]', 'patterns = []', "workload.patterns", "PAIR"),
    ('[workload]', '[workload]\nwarmup = 0', "workload.warmup", "an integer >= 1"),
    # zipped lists of different lengths
    ('env.ZMQ_ASIO_OUT_BATCH_SIZE = ["unset", 16384]', 'env.ZMQ_ASIO_OUT_BATCH_SIZE = ["unset"]',
     "sweep.zip[0].env.ZMQ_ASIO_", "equally long"),
    # counts do not cover a size
    ('counts = { 64 = 1000 }', 'counts = { 1024 = 1000 }', "workload.counts", "largest key"),
    # bad pinning, unknown seed, bad exclusion key
    ('timeout_s = TIMEOUT', 'timeout_s = TIMEOUT\ncpus = "zero"', "run.cpus", "CPU list"),
    ('timeout_s = TIMEOUT', 'timeout_s = TIMEOUT\npin = "0"', "run.pin", "[sweep].placement"),
    ('seed = "none"', 'seed = "999_nope.txt"', "experiment.seed", "none"),
    ('io_threads = [1]', 'io_threads = [1]\n[[sweep.exclude]]\nsize = 64', "sweep.exclude[0].size",
     "msg_size"),
    # a deviation from the libraries' defaults without its reason, or a reason without one
    ('[workload]', '[workload]\nhwm = 0', "workload.hwm", "workload.hwm_reason"),
    ('[workload]', '[workload]\nhwm = 0\nhwm_reason = " "', "workload.hwm", "hwm_reason"),
    ('[workload]', '[workload]\nhwm_reason = "why"', "workload.hwm_reason", "remove hwm_reason"),
    ('io_threads = [1]', 'io_threads = [1, 2]', "sweep.io_threads", "sweep.io_threads_reason"),
    ('io_threads = [1]', 'io_threads = [1]\nio_threads_reason = "x"', "sweep.io_threads_reason",
     "declare the deviation"),
    # build-time axes are refused, not ignored
    ('io_threads = [1]', 'io_threads = [1]\n[sweep.build]\nLTO = ["off", "on"]', "sweep.build.LTO",
     "not supported yet"),
])
def test_malformed_gives_one_line_naming_key_and_allowed(tmp_path, old, new, key, allowed):
    assert old in EXPERIMENT
    if key == "experiment.seed" and not config.available_seeds():
        # Seed names are checked against the seeds folder; without it (e.g. inside a
        # Nix build) there is nothing to check against. CI has ../shared/seeds.
        pytest.skip(f"no seeds folder at {paths.SEEDS_DIR}")
    msg = error_of(tmp_path, EXPERIMENT.replace(old, new, 1))
    assert f": {key}" in msg, msg
    assert allowed in msg, msg


def test_defaults_are_the_default_unless_declared_with_a_reason(tmp_path):
    exp = config.load(write(tmp_path, EXPERIMENT), "default", NAMES)
    assert (exp.hwm, exp.hwm_reason, exp.io_threads, exp.io_threads_reason) == (None, None, (1,), None)
    text = EXPERIMENT.replace("[workload]", '[workload]\nhwm = 0\nhwm_reason = "unlimited queues"', 1)
    text = text.replace("io_threads = [1]", 'io_threads = [1, 2]\nio_threads_reason = "scaling"', 1)
    exp = config.load(write(tmp_path, text), "default", NAMES)
    assert (exp.hwm, exp.hwm_reason, exp.io_threads, exp.io_threads_reason) == (0, "unlimited queues", (1, 2),
                                                                               "scaling")


def test_unknown_profile_key(tmp_path):
    msg = error_of(tmp_path, EXPERIMENT.replace("[profiles.quick]\n", "[profiles.quick]\nrepeats = 3\n"))
    assert "profiles.quick.repeats" in msg and "repetitions" in msg


def test_syntax_error_is_one_line(tmp_path):
    msg = error_of(tmp_path, EXPERIMENT + "\n[run\n")
    assert "(syntax)" in msg and "valid TOML" in msg


def test_alias_libraries_become_two_cells_per_configuration(tmp_path):
    text = EXPERIMENT.replace('use = ["libzmq-4.3.5", "zlink"]\nreference = "libzmq-4.3.5"',
                              'use = ["A", "B"]\nreference = "A"\n[libraries.aliases]\n'
                              'A = "libzmq-4.3.5"\nB = "libzmq-4.3.5"')
    exp = config.load(write(tmp_path, text), "default", NAMES)
    cells = plan.expand(exp)
    assert {c.library for c in cells} == {"A", "B"}
    assert {c.library_name for c in cells} == {"libzmq-4.3.5"}
    assert len({c.cell_id for c in cells}) == len(cells)  # A and B cells are distinct
    assert len({c.group for c in cells}) == len(cells) // 2  # but paired by configuration


def test_alias_to_unknown_library(tmp_path):
    text = EXPERIMENT.replace('use = ["libzmq-4.3.5", "zlink"]\nreference = "libzmq-4.3.5"',
                              'use = ["A"]\nreference = "A"\n[libraries.aliases]\nA = "libzmq-9"')
    msg = error_of(tmp_path, text)
    assert "libraries.aliases.A" in msg and "zlink" in msg


# The faults kinds have their own reader and test (testbed.faults, test_faults_config.py).
SHIPPED = notebook_gen.sweep_experiments(paths.EXPERIMENTS_DIR)


def test_the_five_experiments_are_shipped():
    assert {"batch-sweep", "io-threads", "transport-matrix", "router-pubsub", "noise-floor"} <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("profile", config.PROFILE_NAMES)
def test_shipped_experiment_validates_and_dry_runs(name, profile):
    exp = config.load(config.experiment_path(name), profile, NAMES)
    assert exp.name == name
    readme = paths.EXPERIMENTS_DIR / name / "README.md"
    assert readme.is_file(), f"{name} has no README.md"
    text = readme.read_text()
    assert "Question" in text and (exp.seed or "none") in text
    argv = [sys.executable, "-m", "testbed.cli", "run", name, "--profile", profile, "--dry-run"]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ANALYSIS)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"cells: (\d+); repetitions: (\d+)", proc.stdout)
    design = run_cmd.checked_design(exp)[0]  # the planner may raise a minimum that cannot decide
    assert m and int(m.group(1)) == len(plan.expand(exp)) and int(m.group(2)) == design.min_repetitions
    assert "estimated duration:" in proc.stdout


def test_batch_sweep_full_covers_seed_004():
    exp = config.load(config.experiment_path("batch-sweep"), "full", NAMES)
    assert exp.repetitions >= 5
    assert exp.sizes == (64, 256, 1024, 65536, 131072, 262144)
    assert set(exp.patterns) == {"PUBSUB", "ROUTER_ROUTER", "ROUTER_ROUTER_POLL"}
    assert exp.io_threads == (2,) and exp.env_axes["ZMQ_ASIO_TCP_MAX_TRANSFER"] == ("262144",)
    cells = plan.expand(exp)
    configs = {(c.params["ZMQ_ASIO_IN_BATCH_SIZE"], c.params["ZMQ_ASIO_OUT_BATCH_SIZE"]) for c in cells}
    assert configs == {("unset", "unset"), ("16384", "16384"), ("32768", "32768"), ("65536", "65536")}
    # libzmq runs in every configuration (never a reused baseline)
    for cfg in configs:
        assert any(c.library == "libzmq-4.3.5" and (c.params["ZMQ_ASIO_IN_BATCH_SIZE"],
                   c.params["ZMQ_ASIO_OUT_BATCH_SIZE"]) == cfg for c in cells)
    assert len(cells) == 3 * 6 * 4 * 2


TWO_HOST = ('io_threads = [1]', 'io_threads = [1]\nprocess_model = ["two-host"]\nlink = ["direct", "slow"]\n'
            '[hosts]\ndriver = "netns"\n[links.slow]\nrate = "100mbit"\n')


@pytest.mark.parametrize("old,new,key,allowed", [
    # the new axes: unknown values name the allowed ones
    ('io_threads = [1]', 'io_threads = [1]\nplacement = ["pinned"]', "sweep.placement",
     "split, one-core, free"),
    ('io_threads = [1]', 'io_threads = [1]\nprocess_model = ["threads"]', "sweep.process_model",
     "one-process, two-process, two-host"),
    ('io_threads = [1]', 'io_threads = [1]\nlink = ["wan"]', "sweep.link", "direct"),
    ('io_threads = [1]', 'io_threads = [1]\nplacement = []', "sweep.placement", "split"),
    # the design: fixed xor adaptive, bounds, budget, window, decision settings
    ('repetitions = 2', 'repetitions = 2\nmax_repetitions = 9', "run.max_repetitions", "either repetitions"),
    ('repetitions = 2', 'min_repetitions = 6\nmax_repetitions = 4', "run.max_repetitions", ">= 6"),
    ('repetitions = 2', 'repetitions = 2\ntime_budget_s = 0', "run.time_budget_s", "a number > 0"),
    ('repetitions = 2', 'repetitions = 2\ntime_budget_s = "1h"', "run.time_budget_s", "a number > 0"),
    ('min_window_s = 0', 'min_window_s = -1', "run.min_window_s", "a number >= 0"),
    ('min_window_s = 0', 'min_window_s = 0\nlat_warmup_s = "long"', "run.lat_warmup_s", "a number >= 0"),
    ('min_window_s = 0', 'min_window_s = 0\ntail_round_trips = -1', "run.tail_round_trips",
     "an integer >= 0"),
    ('min_window_s = 0', 'min_window_s = 0\nstop_on = ["p95_latency"]', "run.stop_on",
     "throughput, p50_latency, p99_latency"),
    ('repetitions = 2', 'repetitions = 2\nconfidence = 1.5', "run.confidence", "< 1"),
    ('repetitions = 2', 'repetitions = 2\nmargin = 0', "run.margin", "a number > 0"),
    ('repetitions = 2', 'repetitions = 2\nconfig_margin = 0.6', "run.config_margin", "< 0.5"),
    ('repetitions = 2', 'repetitions = 2\nconfig_margin = "wide"', "run.config_margin", "a number > 0"),
    ('[workload]', '[workload]\ntime_budget_s = 60', "workload.time_budget_s", "[run] time_budget_s"),
    # hosts and links
    ('io_threads = [1]', 'io_threads = [1]\nprocess_model = ["two-host"]', "hosts", 'driver = "netns"'),
    (TWO_HOST[0], TWO_HOST[1].replace('driver = "netns"', 'driver = "telnet"'), "hosts.driver", "netns, ssh"),
    (TWO_HOST[0], TWO_HOST[1].replace('rate = "100mbit"', 'rate = "fast"'), "links.slow.rate", "mbit"),
    (TWO_HOST[0], TWO_HOST[1].replace('rate = "100mbit"', 'loss_pct = 150'), "links.slow.loss_pct", "< 100"),
    (TWO_HOST[0], TWO_HOST[1].replace('rate = "100mbit"', 'jitter_ms = 1'), "links.slow.jitter_ms",
     "delay_ms"),
    (TWO_HOST[0], TWO_HOST[1].replace('link = ["direct", "slow"]', 'link = ["direct"]'), "links.slow",
     "declared but not listed"),
    (TWO_HOST[0], TWO_HOST[1].replace('driver = "netns"', 'driver = "ssh"\nreceiver = "a"\nsender = "b"\n'
                                      'receiver_address = "10.0.0.1"'), "sweep.link", 'driver = "netns"'),
    (TWO_HOST[0], TWO_HOST[1].replace('driver = "netns"', 'driver = "ssh"\nreceiver = "a"'), "hosts.sender",
     "ssh destination"),
    ('io_threads = [1]', 'io_threads = [1]\n[hosts]\ndriver = "netns"', "hosts", "two-host"),
    ('io_threads = [1]', 'io_threads = [1]\n[links.direct]\nrate = "1gbit"', "links.direct", "built-in"),
    # startup cells are one process timed by hyperfine
    ('[workload]', '[workload]\nkind = "startup"\n', "sweep.process_model", "one-process"),
])
def test_new_keys_malformed_name_key_and_allowed(tmp_path, old, new, key, allowed):
    assert old in EXPERIMENT
    text = EXPERIMENT.replace(old, new, 1)
    if key == "sweep.process_model" and "startup" in new:
        text = text.replace("io_threads = [1]", 'io_threads = [1]\nprocess_model = ["two-process"]')
    msg = error_of(tmp_path, text)
    assert f": {key}" in msg, msg
    assert allowed in msg, msg


def test_two_host_experiment_parses_and_expands(tmp_path):
    exp = config.load(write(tmp_path, EXPERIMENT.replace(*TWO_HOST)), "default", NAMES)
    assert exp.hosts.driver == "netns" and exp.links["slow"].rate_bits_per_s == 100e6
    cells = plan.expand(exp)
    assert {(c.process_model, c.link) for c in cells} == {("two-host", "direct"), ("two-host", "slow")}


def test_inproc_collapses_to_one_process_and_unshaped(tmp_path):
    text = EXPERIMENT.replace('transports = ["tcp"]', 'transports = ["tcp", "inproc"]').replace(
        'io_threads = [1]', 'io_threads = [1]\nprocess_model = ["one-process", "two-process"]')
    cells = plan.expand(config.load(write(tmp_path, text), "default", NAMES))
    inproc = {(c.process_model, c.link) for c in cells if c.transport == "inproc"}
    tcp = {c.process_model for c in cells if c.transport == "tcp"}
    assert inproc == {("one-process", "direct")} and tcp == {"one-process", "two-process"}
    assert len({c.cell_id for c in cells}) == len(cells)


def test_design_defaults_fixed_and_adaptive(tmp_path):
    fixed = config.load(write(tmp_path, EXPERIMENT.replace("min_window_s = 0", "")), "default", NAMES).design
    assert (fixed.min_repetitions, fixed.max_repetitions, fixed.adaptive) == (2, 2, False)
    assert fixed.min_window_s == 0.5 and fixed.confidence == 0.95 and fixed.margin == 0.03
    adaptive = "min_repetitions = 5\nmax_repetitions = 30\ntime_budget_s = 600"
    text = EXPERIMENT.replace("repetitions = 2", adaptive, 1).replace("verdicts = false", "")
    ada = config.load(write(tmp_path, text), "default", NAMES).design
    assert (ada.min_repetitions, ada.max_repetitions, ada.time_budget_s, ada.adaptive) == (5, 30, 600.0, True)


def test_scorecard_unlimited_hwm_variant_differs_only_by_its_declared_hwm():
    folder = paths.EXPERIMENTS_DIR / "scorecard"
    for profile in ("quick", "default", "full"):
        base = config.load(folder / "experiment.toml", profile, NAMES)
        variant = config.load(folder / "unlimited-hwm.toml", profile, NAMES)
        assert (base.hwm, variant.hwm) == (None, 0) and "HWM" in variant.hwm_reason.upper()
        same = ("patterns", "transports", "sizes", "counts", "lat_counts", "io_threads", "placement",
                "process_model", "design", "exclude", "perf_stat", "libraries")
        assert all(getattr(base, k) == getattr(variant, k) for k in same)
