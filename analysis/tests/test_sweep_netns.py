"""Two hosts on one machine: network namespaces joined by a veth pair, shaped with tc.

These tests create real namespaces, so they need root and iproute2; they are skipped
(with the reason) only when one of those is missing. CI runs as root, so they run
there. Every namespace they create is gone afterwards, also when a test fails.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testbed.records import store
from testbed.sweep import hosts, links
from testbed.sweep.config_net import LinkSpec

WHY_NOT = hosts.netns_unavailable()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"netns tests skipped: {WHY_NOT}")

SERVER = """
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5601)); s.listen(1); c, _ = s.accept(); n = int(sys.argv[1]); t0 = None
while n > 0:
    b = c.recv(1 << 16)
    if not b: break
    t0 = t0 or time.monotonic(); n -= len(b)
print(time.monotonic() - t0)
"""
CLIENT = """
import socket, sys, time
deadline = time.monotonic() + 10
while True:
    try:
        c = socket.create_connection((sys.argv[1], 5601)); break
    except OSError:
        if time.monotonic() > deadline: raise
        time.sleep(0.02)
c.sendall(b"x" * int(sys.argv[2])); c.close()
"""


def namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def transfer_mbit_per_s(pair: hosts.NetnsPair, nbytes: int) -> float:
    """Bytes really sent from the sender namespace to the receiver's address."""
    server = subprocess.Popen(pair.receiver.wrap([sys.executable, "-c", SERVER, str(nbytes)], 30),
                              stdout=subprocess.PIPE, text=True)
    subprocess.run(pair.sender.wrap([sys.executable, "-c", CLIENT, pair.receiver.address, str(nbytes)], 30),
                   check=True, timeout=60)
    out, _ = server.communicate(timeout=60)
    return nbytes * 8 / float(out) / 1e6


def test_veth_pair_carries_traffic_and_a_rate_limit_shapes_it():
    with hosts.NetnsPair() as pair:
        assert pair.receiver.namespace in namespaces() and pair.sender.namespace in namespaces()
        free = transfer_mbit_per_s(pair, 4_000_000)
        shaper = links.LinkShaper([pair.receiver, pair.sender], links.Netem(False, "not probed"))
        shaper.apply(LinkSpec("slow", rate="20mbit"))
        assert "tbf" in shaper.show(pair.sender) and "20Mbit" in shaper.show(pair.sender)
        shaped = transfer_mbit_per_s(pair, 2_000_000)
        shaper.apply(None)
        assert "tbf" not in shaper.show(pair.sender)
        facts = pair.receiver.describe()
        assert facts["address"] == "10.77.0.1" and facts["kernel"] and facts["cores"] >= 1
    print(f"veth: unshaped {free:.0f} Mbit/s, shaped to 20mbit: {shaped:.1f} Mbit/s")
    # the 256 KiB burst lets a little through at line rate; the rest waits for tokens
    assert shaped < 20 * 1.5 and free > shaped * 3
    assert pair.receiver.namespace not in namespaces()


def test_namespaces_are_removed_even_when_the_body_fails():
    pair = hosts.NetnsPair()
    with pytest.raises(RuntimeError), pair:
        assert pair.sender.namespace in namespaces()
        raise RuntimeError("a test body that fails")
    assert pair.receiver.namespace not in namespaces() and pair.sender.namespace not in namespaces()


def test_netem_is_detected_and_refused_clearly_where_absent():
    netem = links.detect_netem()
    with hosts.NetnsPair() as pair:
        shaper = links.LinkShaper([pair.receiver, pair.sender], netem)
        wan = LinkSpec("wan", delay_ms=5.0, loss_pct=0.1)
        if netem.available:
            shaper.apply(wan)
            assert "netem" in shaper.show(pair.sender)
        else:
            with pytest.raises(hosts.HostError) as info:
                shaper.apply(wan)
            msg = str(info.value)
            assert "'wan'" in msg and "netem" in msg and netem.detail in msg
            print(f"netem absent here: {netem.detail}")
    assert pair.receiver.namespace not in namespaces()


def test_stale_namespaces_of_dead_runs_are_removed():
    dead_pid = 4_000_000  # above pid_max: no process can have it
    name = f"{hosts.NETNS_PREFIX}{dead_pid}r"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        assert name in hosts.remove_stale_namespaces()
        time.sleep(0.05)
        assert name not in namespaces()
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def test_a_two_host_run_across_the_veth_pair_unshaped_and_rate_shaped(tmp_path):
    """The whole runner: both roles in their own namespace (fake benches really sending
    over the veth), one link unshaped and one shaped to 20 Mbit/s; the manifest names
    both ends and the link, and the namespaces are gone afterwards."""
    from test_sweep_support import (
        env_for,
        make_prebuilt,
        only_run_dir,
        read_results,
        run_testbed,
        write_experiment,
    )
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    text = (write_experiment(tmp_path).read_text()
            .replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]')
            .replace("sizes = [64, 1024]", "sizes = [1024]")
            .replace("counts = { 64 = 1000 }", "counts = { 1024 = 3000 }\nlat_counts = { 1024 = 50 }")
            .replace("repetitions = 2", "repetitions = 1")
            .replace("[profiles.quick]\nrepetitions = 1\n", "")
            .replace("io_threads = [1]", 'io_threads = [1]\nprocess_model = ["two-host"]\n'
                     'link = ["direct", "20mbit"]')
            + '\n[hosts]\ndriver = "netns"\n\n[links.20mbit]\nrate = "20mbit"\n')
    exp = write_experiment(tmp_path, text)
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing), timeout=300)
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run_dir(tmp_path / "out")
    recs = read_results(run_dir)
    assert len(recs) == 2 * 2 * 2 and all(r["status"] == "ok" for r in recs)
    assert all(r["hosts"]["receiver"].startswith("netns tbsweep") for r in recs)
    mbit = {link: [r["result"]["throughput"]["bytes_per_sec"] * 8 / 1e6 for r in recs if r["link"] == link]
            for link in ("direct", "20mbit")}
    print(f"two-host fake over veth: direct {mbit['direct']}, shaped {mbit['20mbit']} Mbit/s")
    assert max(mbit["20mbit"]) < 30 and min(mbit["direct"]) > 3 * max(mbit["20mbit"])
    m = json.loads((run_dir / "manifest.json").read_text())
    for side, address in (("receiver", "10.77.0.1"), ("sender", "10.77.0.2")):
        assert m["hosts"][side]["address"] == address and m["hosts"][side]["kernel"]
    assert m["hosts"]["driver"] == "netns" and m["links"]["topology"]["kind"] == "veth"
    assert m["links"]["declared"]["20mbit"]["rate"] == "20mbit"
    assert "tbf" in m["links"]["applied"]["20mbit"]["shown"]
    assert m["hosts"]["receiver"]["namespace"] not in namespaces()


def test_a_link_needing_netem_fails_only_its_cells_where_the_qdisc_is_absent(tmp_path):
    """A link with delay and loss: where the kernel has no netem (our 2-core hosts) its
    cells fail, each named with the link and tc's answer, and the unshaped cells still
    run; where netem exists the same cells run shaped."""
    from test_sweep_support import (
        assert_failure_named,
        env_for,
        make_prebuilt,
        only_run_dir,
        read_results,
        run_testbed,
        write_experiment,
    )
    netem = links.detect_netem()
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    text = (write_experiment(tmp_path).read_text()
            .replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]')
            .replace("sizes = [64, 1024]", "sizes = [1024]")
            .replace("counts = { 64 = 1000 }", "counts = { 1024 = 300 }\nlat_counts = { 1024 = 20 }")
            .replace("repetitions = 2", "repetitions = 1")
            .replace("[profiles.quick]\nrepetitions = 1\n", "")
            .replace("io_threads = [1]", 'io_threads = [1]\nprocess_model = ["two-host"]\n'
                     'link = ["direct", "wan"]')
            + '\n[hosts]\ndriver = "netns"\n\n[links.wan]\ndelay_ms = 2\nloss_pct = 0.1\n')
    proc = run_testbed(["run", str(write_experiment(tmp_path, text)), "--out", str(tmp_path / "out")],
                       env_for(listing), timeout=300)
    recs = read_results(only_run_dir(tmp_path / "out"))
    assert len(recs) == 2 * 2 * 2  # links x libraries x the base experiment's two configs
    assert all(r["status"] == "ok" for r in recs if r["link"] == "direct"), proc.stderr
    wan = [r for r in recs if r["link"] == "wan"]
    if netem.available:
        assert proc.returncode == 0 and all(r["status"] == "ok" for r in wan), proc.stderr
        return
    assert proc.returncode == 1, proc.stderr
    for r in wan:
        assert r["status"] == "failed" and r["result"] is None
        assert netem.detail in r["failure"]
        assert_failure_named(proc.stderr, r, "link 'wan' needs delay/loss, i.e. the netem qdisc")
    m = json.loads((only_run_dir(tmp_path / "out") / "manifest.json").read_text())
    assert m["hosts"]["receiver"]["namespace"] not in namespaces()


@pytest.mark.slow
def test_the_shipped_two_host_experiment_runs_with_the_real_benches(tmp_path):
    """CI's check of the real thing: libzmq and zlink (built by ./testbed test before
    pytest) as two hosts over the veth, unshaped and at 1 Gbit/s."""
    import os
    env = dict(os.environ, CI="true", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.run([sys.executable, "-m", "testbed.cli", "run", "two-host", "--profile", "quick",
                           "--no-build", "--no-report", "--out", str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = next(tmp_path.glob("two-host/*/"))
    recs = store.read_run(run_dir)[0]  # compacted to results.parquet once finished
    assert recs and all(r["status"] == "ok" and r["process_model"] == "two-host" for r in recs)
    assert {r["library"] for r in recs} == {"libzmq-4.3.5", "zlink"}
    gbit = {link: max(r["result"]["throughput"]["bytes_per_sec"] * 8 / 1e9
                      for r in recs if r["link"] == link) for link in ("direct", "1gbit")}
    print(f"two-host real benches, best Gbit/s: {gbit}")
    assert gbit["1gbit"] < 1.3  # tbf holds the shaped link near 1 Gbit/s
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["hosts"]["receiver"]["address"] == "10.77.0.1" and m["hosts"]["sender"]["address"] == "10.77.0.2"
    assert m["links"]["declared"]["1gbit"]["rate"] == "1gbit"
    assert "tbf" in m["links"]["applied"]["1gbit"]["shown"]
    assert m["hosts"]["receiver"]["namespace"] not in namespaces()
