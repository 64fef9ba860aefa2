"""Two hosts on one machine: network namespaces joined by a veth pair, shaped with tc.

These tests create real namespaces, so they need root and iproute2; they are skipped
(with the reason) only when one of those is missing. CI runs as root, so they run
there. Every namespace they create is gone afterwards, also when a test fails.
"""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

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
