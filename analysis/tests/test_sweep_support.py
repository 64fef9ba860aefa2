"""Fake libraries for the sweep tests: a prefix with testbed-lib.json and a bench dir of
small Python scripts that speak the bench CLI (docs/data-formats.md §3). A
behaviour.json in the bench dir makes chosen sizes crash, hang or print garbage."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ANALYSIS = Path(__file__).resolve().parents[1]
PATTERNS = ("pair", "pubsub", "dealer_dealer", "dealer_router", "router_router", "router_router_poll",
            "stream")

FAKE_BENCH = textwrap.dedent('''\
    #!PYTHON
    import argparse, json, os, sys, time
    from pathlib import Path
    here = Path(__file__).resolve().parent
    p = argparse.ArgumentParser()
    for flag in ("--transport", "--mode"):
        p.add_argument(flag)
    for flag in ("--size", "--count", "--lat-count", "--warmup", "--io-threads", "--hwm", "--timeout-ms"):
        p.add_argument(flag, type=int)
    a = p.parse_args()
    behaviour = json.loads((here / "behaviour.json").read_text()).get(str(a.size), "ok")
    time.sleep(float(os.environ.get("FAKE_BENCH_SLEEP", "0")))
    if behaviour == "crash":
        print("fake bench: crashing on purpose", file=sys.stderr); sys.stderr.flush(); os.abort()
    if behaviour == "hang":
        print("fake bench: hanging on purpose", file=sys.stderr); sys.stderr.flush(); time.sleep(3600)
    if behaviour == "garbage":
        print("this is not json"); sys.exit(0)
    if behaviour == "exit4":
        print("fake bench: lost messages", file=sys.stderr); sys.exit(4)
    info = json.loads((here / "lib.json").read_text())
    pattern = Path(sys.argv[0]).name[len("bench_"):].upper()
    env = {k: v for k, v in os.environ.items() if k.startswith(("ZMQ_ASIO_", "BENCH_"))}
    print(json.dumps({"schema": "testbed.bench/1",
        "library": {"name": info["name"], "version": info["version"], "build_id": info["build_id"]},
        "pattern": pattern, "transport": a.transport, "msg_size": a.size,
        "throughput": {"count": a.count, "warmup": a.warmup, "receiver_seconds": 0.01, "sender_seconds": 0.01,
                       "msgs_per_sec": 1e6, "bytes_per_sec": 1e6 * a.size, "mb_per_sec": a.size,
                       "sender_msgs_per_sec": 1e6, "mb_unit": "1e6 bytes"},
        "latency": {"count": a.lat_count, "warmup": 100, "unit": "us", "measure": "rtt/2", "min": 1.0,
                    "p50": 2.0, "p90": 3.0, "p99": 4.0, "p999": 5.0, "max": 6.0, "mean": 2.5},
        "verify": {"ok": True, "received": a.count, "expected": a.count, "method": "fake"},
        "settings": {"hwm": a.hwm, "io_threads": a.io_threads, "linger": 0, "sndbuf": -1, "rcvbuf": -1,
                     "clock": "fake"},
        "env": env}))
    ''').replace("PYTHON", sys.executable)


def make_library(root: Path, name: str, behaviour: dict | None = None) -> dict:
    prefix, bench = root / name / "prefix", root / name / "bench"
    prefix.mkdir(parents=True)
    bench.mkdir(parents=True)
    info = {"name": name, "version": "0.0-fake", "build_id": (name.encode().hex() + "0" * 16)[:16],
            "source_hash": "sha256-fake", "flags": [], "compiler": "fake", "curve": False, "link_name": "zmq"}
    (prefix / "testbed-lib.json").write_text(json.dumps(info))
    (bench / "lib.json").write_text(json.dumps(info))
    (bench / "behaviour.json").write_text(json.dumps(behaviour or {}))
    for pattern in PATTERNS:
        script = bench / f"bench_{pattern}"
        script.write_text(FAKE_BENCH)
        script.chmod(0o755)
    return {"prefix": str(prefix), "bench_dir": str(bench)}


def make_prebuilt(root: Path, behaviours: dict[str, dict]) -> Path:
    libs = {name: make_library(root, name, b) for name, b in behaviours.items()}
    listing = root / "libs.json"
    listing.write_text(json.dumps({"libraries": libs}))
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

    [profiles.quick]
    repetitions = 1
    ''')


def write_experiment(root: Path, text: str | None = None, timeout: float = 20) -> Path:
    folder = root / "exp" / "fake-exp"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "experiment.toml"
    path.write_text((text or EXPERIMENT).replace("TIMEOUT", str(timeout)))
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
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]


def only_run_dir(out: Path) -> Path:
    dirs = [p.parent for p in out.glob("*/*/manifest.json")]
    assert len(dirs) == 1, dirs
    return dirs[0]
