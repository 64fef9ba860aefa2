"""Fake libraries for the sweep tests: a prefix with testbed-lib.json and a bench dir of
small Python scripts that speak the bench CLI (docs/data-formats.md §3). A
behaviour.json in the bench dir makes chosen sizes crash, hang or print garbage."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from testbed.bench import patterns as bench_patterns

ANALYSIS = Path(__file__).resolve().parents[1]
PATTERNS = tuple(p.lower() for p in bench_patterns.PATTERNS)  # bench_<pattern> file names

FAKE_BENCH = f"#!{sys.executable}\n" + (Path(__file__).parent / "sweep_fake_bench.py").read_text()
FAKE_PROBE = f"#!{sys.executable}\n" + (Path(__file__).parent / "sweep_fake_probe.py").read_text()
FAKE_ARMS = f"#!{sys.executable}\n" + (Path(__file__).parent / "sweep_fake_arms_bench.py").read_text()


def make_library(root: Path, name: str, behaviour: dict | None = None, fake: dict | None = None,
                 arms: bool = False) -> dict:
    """`fake`: figures the one-process fake reports (fake_msgs_per_sec, fake_p50_us, fake_noise;
    the fake ceiling_probe's fake_ceiling_bps, fake_ceiling_p50_us; the fake arms bench's
    keys: sweep_fake_arms_bench.py). arms: also a fake shared object (the library's figures as
    JSON); make_prebuilt(arms=True) adds the fake arms binaries, so `design = auto` runs arms."""
    prefix, bench = root / name / "prefix", root / name / "bench"
    prefix.mkdir(parents=True)
    bench.mkdir(parents=True)
    info = {"name": name, "version": "0.0-fake", "build_id": (name.encode().hex() + "0" * 16)[:16],
            "source_hash": "sha256-fake", "flags": [], "compiler": "fake", "curve": False, "link_name": "zmq"}
    (prefix / "testbed-lib.json").write_text(json.dumps(info))
    (bench / "lib.json").write_text(json.dumps({**info, **(fake or {})}))
    (bench / "behaviour.json").write_text(json.dumps(behaviour or {}))
    for pattern in PATTERNS:
        script = bench / f"bench_{pattern}"
        script.write_text(FAKE_BENCH)
        script.chmod(0o755)
    probe = bench / "ceiling_probe"
    probe.write_text(FAKE_PROBE)
    probe.chmod(0o755)
    if arms:  # the fake shared object an arm loads: the library's figures
        (prefix / "lib").mkdir()
        (prefix / "lib" / "libzmq.so").write_text(json.dumps({**info, **(fake or {})}))
    return {"prefix": str(prefix), "bench_dir": str(bench)}


def make_arms_dir(root: Path) -> Path:
    """The fake arms binaries, one per pattern (the listing's arms_dir names the folder)."""
    folder = root / "arms"
    folder.mkdir(exist_ok=True)
    (folder / "behaviour.json").write_text("{}")
    for pattern in PATTERNS:
        script = folder / f"bench_arms_{pattern}"
        script.write_text(FAKE_ARMS)
        script.chmod(0o755)
    return folder


def make_prebuilt(root: Path, behaviours: dict[str, dict], fakes: dict[str, dict] | None = None,
                  arms: bool = False) -> Path:
    libs = {name: make_library(root, name, b, (fakes or {}).get(name), arms)
            for name, b in behaviours.items()}
    listing = root / "libs.json"
    arms_dir = {"arms_dir": str(make_arms_dir(root))} if arms else {}
    listing.write_text(json.dumps({"libraries": libs, **arms_dir}))
    return listing


EXPERIMENT = textwrap.dedent('''\
    [experiment]
    name = "fake-exp"
    question = "Does the sweep runner behave?"
    seed = "none"

    [libraries]
    use = ["libzmq-4.3.5", "zlink"]
    reference = "libzmq-4.3.5"

    [workload]
    patterns = ["PAIR", "PUBSUB"]
    transports = ["tcp"]
    sizes = [64, 1024]
    counts = { 64 = 1000 }

    [sweep]
    AXIS_DEFAULTS
    io_threads = [1]
    [[sweep.zip]]
    name = "batch"
    labels = ["baseline", "16 KiB"]
    env.ZMQ_ASIO_IN_BATCH_SIZE = ["unset", 16384]
    env.ZMQ_ASIO_OUT_BATCH_SIZE = ["unset", 16384]

    [run]
    repetitions = 2
    warmup_runs = 0
    timeout_s = TIMEOUT
    min_window_s = 0            # the fake's windows are computed: calibration has tests of its own
    verdicts = false            # runner mechanics only: 2 repetitions need no verdicts (adaptive tests)

    [perf]
    work_per_message = false    # likewise (and valgrind on a Python fake is slow)

    [profiles.quick]
    repetitions = 1
    ''')


# The runner-mechanics tests run the fake in one process, unpinned (its figures are
# computed there); a test that sets one of these axes itself keeps its own line.
AXIS_DEFAULTS = {"placement": '["free"]', "process_model": '["one-process"]'}


MARK = "  # axis default of the runner tests"


def fill(text: str, timeout: float = 20) -> str:
    """EXPERIMENT (or a variant, also one made from an already written file) as a valid
    experiment.toml: an axis default gives way to a line the test wrote itself."""
    text = text.replace("AXIS_DEFAULTS", "\n".join(f"{k} = {v}{MARK}" for k, v in AXIS_DEFAULTS.items()))
    for key in AXIS_DEFAULTS:
        if re.search(rf"^{key} = (?!.*{MARK}).*$", text, re.M):
            text = re.sub(rf"^{key} = .*{re.escape(MARK)}\n", "", text, flags=re.M)
    return text.replace("TIMEOUT", str(timeout))


def write_experiment(root: Path, text: str | None = None, timeout: float = 20) -> Path:
    folder = root / "exp" / "fake-exp"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "experiment.toml"
    path.write_text(fill(text or EXPERIMENT, timeout))
    return path


def env_for(listing: Path, **extra: str) -> dict:
    env = dict(os.environ, TESTBED_PREBUILT=str(listing), CI="true", **extra)
    env["PYTHONPATH"] = str(ANALYSIS)
    return env


def run_testbed(args: list[str], env: dict, **kw) -> subprocess.CompletedProcess:
    if args[0] == "run" and "--dry-run" not in args:
        args = [*args, "--no-report"]  # the report has tests of its own; keep these fast
    return subprocess.run([sys.executable, "-m", "testbed.cli", *args], env=env, capture_output=True,
                          text=True, cwd=ANALYSIS, **kw)


def read_results(run_dir: Path) -> list[dict]:
    """The run's records: its journal while live, results.parquet once it finished."""
    from testbed.records import store
    return store.read_run(run_dir)[0]


def only_run_dir(out: Path) -> Path:
    dirs = [p.parent for p in out.glob("*/*/manifest.json")]
    assert len(dirs) == 1, dirs
    return dirs[0]


def cell_label(rec: dict) -> str:
    """The label the runner gives a cell in its progress and error lines (plan.Cell.label),
    rebuilt from a result record."""
    where = f"{rec['placement']} {rec['process_model']}"
    if rec.get("link", "direct") != "direct":
        where += f" link={rec['link']}"
    return (f"{rec['library']} {rec['pattern']} {rec['transport']} {rec['msg_size']}B io{rec['io_threads']} "
            f"{rec['config']} {where}")


def assert_failure_named(stderr: str, rec: dict, bad_input: str) -> None:
    """A failed cell is reported on stderr as `failed: <cell>: <cause>`, and its cause
    names the bad input: someone reading the run's output alone knows which cell and why."""
    assert bad_input in rec["failure"], rec["failure"]
    first_line = rec["failure"].splitlines()[0]
    line = f"failed: {cell_label(rec)} rep{rec['repetition']}: {first_line}"
    assert line in stderr, f"{line!r} not in the run's stderr:\n{stderr[-3000:]}"


def interrupt_a_run(tmp_path: Path, sig: int, wait_s: float) -> tuple[Path, Path, Path, int, str]:
    """Start `./testbed run` on a slow fake bench, send `sig` once three results are
    written (or after wait_s); return (experiment, out root, library listing, exit code,
    stderr)."""
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    exp = write_experiment(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "testbed.cli", "run", str(exp), "--out", str(out)],
                            env=env_for(listing, FAKE_BENCH_SLEEP="0.15"), cwd=ANALYSIS,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        found = list(out.glob("*/*/results.jsonl"))
        if found and len(found[0].read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return exp, out, listing, proc.returncode, err
