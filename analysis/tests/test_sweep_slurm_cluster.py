"""`./testbed run batch-sweep --profile quick --slurm` against a real single-node Slurm
(slurm_cluster.py): two array tasks, one shard each, merged into one run whose report
names the host. Skips only where Slurm cannot start (not root, or the packages absent
outside CI); under CI=true a missing Slurm fails, as `./testbed setup` installs it.
Runtime measured on a 2-core machine at load 15-16 (2026-11-28): 194 s under nice 19
(148 s of it the Slurm run: the two shards run one after the other, --exclusive on one
node, then the merge and the report), 294 s under SCHED_IDLE. The quick profile's own
estimate is 36 s of benchmarks a shard, so an idle CI machine should take about half.
The test runs batch-sweep's toml without its callgrind and perf-record runs and with a
shorter window (_quick_batch_sweep_timed_only): they test the sweep, not Slurm."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import slurm_cluster
from test_sweep_support import ANALYSIS, read_results
from testbed import paths

# beside: minutes of a Slurm run whose checks are of the run, not of any speed
pytestmark = [pytest.mark.slow, pytest.mark.beside]


@pytest.fixture
def cluster():
    why = slurm_cluster.unavailable()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the Slurm test: {why}")
        pytest.skip(why)
    c = slurm_cluster.Cluster()
    try:
        c.start()
        yield c
    finally:
        c.stop()
    assert not (c.dir.exists()), "the cluster's directory outlived it"


def _runs(out, suffix):
    return sorted(p.parent for p in out.glob(f"batch-sweep/*{suffix}/manifest.json"))


def _quick_batch_sweep_timed_only(tmp_path):
    """batch-sweep's own experiment.toml, its quick profile, less what the Slurm
    mechanics do not need: the callgrind run per block (work_per_message) and the perf
    record flamegraphs, each a bench run of its own under a profiler, and a shorter
    window. Its cells, arms, configurations and libraries are the shipped ones."""
    text = (paths.EXPERIMENTS_DIR / "batch-sweep" / "experiment.toml").read_text()
    perf, record = text.index("\n[perf]\n"), text.index("\n[[perf.record]]")
    quick = text.index("\n[profiles.quick]")
    assert perf < record < quick, "batch-sweep's [perf] table moved: update this test"
    text = text[:perf] + "\n[perf]\nstat = false\nwork_per_message = false\n" + text[quick:]
    text = text.replace("min_window_s = 0.2", "min_window_s = 0.05", 1)
    path = tmp_path / "batch-sweep" / "experiment.toml"
    path.parent.mkdir()
    path.write_text(text)
    return path


def test_quick_batch_sweep_over_two_array_tasks_merges_into_one_report(cluster, tmp_path, built_library):
    for name in ("libzmq-4.3.5", "zlink"):
        built_library(name)
    out = tmp_path / "out"
    experiment = _quick_batch_sweep_timed_only(tmp_path)
    env = {**cluster.env, "PYTHONPATH": str(ANALYSIS), "TESTBED_SLURM_POLL_S": "1"}
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "testbed.cli", "run", str(experiment), "--profile", "quick",
         "--slurm", "--slurm-tasks", "2", "--slurm-partition", "testbed", "--no-build", "--out", str(out)],
        env=env, cwd=ANALYSIS, capture_output=True, text=True, timeout=600)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, f"{proc.stderr[-4000:]}\n{cluster.logs()}"
    # progress came from squeue while the job ran; both tasks finished cleanly
    assert "slurm job" in proc.stderr and "RUNNING on " + cluster.node in proc.stderr, proc.stderr
    for i in (1, 2):
        assert f"slurm task {i} (shard {i}/2) on {cluster.node}: ok" in proc.stderr, proc.stderr
    (slurm_dir,) = sorted(out.glob("batch-sweep/*-slurm"))
    script = (slurm_dir / "sweep.sbatch").read_text()
    assert "#SBATCH --array=1-2" in script and "#SBATCH --exclusive" in script
    shards = sorted(p.parent for p in (slurm_dir / "shards").glob("batch-sweep/*/manifest.json"))
    assert len(shards) == 2
    (merged,) = _runs(out, "-merged")
    m = json.loads((merged / "manifest.json").read_text())
    assert m["status"] == "complete" and m["missing_shards"] == []
    assert [o["exit"] for o in m["slurm"]["outcomes"]] == [0, 0]
    # the merged run holds both shards' cells: the quick profile's two message sizes,
    # one per shard, every library and configuration of each
    merged_cells = {(r["cell_id"], r["repetition"]) for r in read_results(merged)}
    shard_sizes = []
    for shard in shards:
        recs = read_results(shard)
        assert recs and {(r["cell_id"], r["repetition"]) for r in recs} <= merged_cells
        shard_sizes.append({r["msg_size"] for r in recs})
        assert {r["library"] for r in recs} == {"libzmq-4.3.5", "zlink"}
    assert len(merged_cells) == sum(len(read_results(s)) for s in shards)
    assert sorted(shard_sizes, key=min) == [{1024}, {65536}]
    report = (merged / "report.md").read_text()
    for i in (1, 2):
        assert f"shard {i}/2" in report and f"host `{cluster.node}`" in report
    assert f"{m['slurm']['job_id']}: 2 array tasks, one node each with --exclusive" in report
    print(f"slurm quick batch-sweep over 2 tasks: {elapsed:.0f} s")
