"""Where a role process runs: this machine, a network namespace on it, or another host
over ssh. The runner starts both roles of a cell the same way and only asks the
driver for the command prefix and for a description of the host.

- local: two-process cells (both roles on this machine, loopback).
- netns: two-host cells on one machine: two namespaces joined by a veth pair that the
  runner creates for the run and deletes afterwards (`NetnsPair`). Chosen for CI: it
  needs only root and iproute2, the traffic crosses a real (virtual) link that `tc`
  can shape, and nothing leaves the machine.
- ssh: two real hosts. The bench binary must exist at the same path there (a shared
  or identical checkout); the remote side is bounded by `timeout` so a lost
  connection cannot leave a bench running; perf is not run remotely.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field

from testbed.sweep.config_net import NETNS_RECEIVER_ADDRESS, NETNS_SENDER_ADDRESS

NETNS_PREFIX = "tbsweep"
SUBNET_BITS = 24
# Shell lines that describe a host; each prints "key=value" (missing tools print nothing).
DESCRIBE_SCRIPT = ("echo hostname=$(hostname); echo kernel=$(uname -r); echo machine=$(uname -m); "
                   "echo cores=$(nproc --all); echo cores_allowed=$(nproc); "
                   "echo cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')")


class HostError(RuntimeError):
    """A host or link this machine cannot provide; the message names the cause."""


def describe_output(text: str) -> dict:
    facts: dict = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            value = value.strip()
            facts[key.strip()] = int(value) if value.isdigit() else (value or None)
    return facts


@dataclass
class LocalHost:
    name: str = "local"
    kind: str = "local"
    perf: bool = True            # perf stat can wrap processes started here

    def wrap(self, argv: list[str], timeout_s: float) -> list[str]:
        return list(argv)

    def describe(self) -> dict:
        proc = subprocess.run(["sh", "-c", DESCRIBE_SCRIPT], capture_output=True, text=True, timeout=20)
        return {"driver": self.kind, "name": self.name, **describe_output(proc.stdout)}


@dataclass
class NetnsHost(LocalHost):
    namespace: str = ""
    address: str = ""
    interface: str = ""
    kind: str = "netns"

    def wrap(self, argv: list[str], timeout_s: float) -> list[str]:
        return ["ip", "netns", "exec", self.namespace, *argv]

    def describe(self) -> dict:
        return {**super().describe(), "namespace": self.namespace, "address": self.address,
                "interface": self.interface}


@dataclass
class SshHost:
    destination: str
    name: str = ""
    kind: str = "ssh"
    perf: bool = False
    options: list[str] = field(default_factory=lambda: ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"])

    def wrap(self, argv: list[str], timeout_s: float) -> list[str]:
        # The remote `timeout` ends the bench even if this side dies or the link drops.
        remote = ["timeout", "--signal=KILL", str(int(timeout_s) + 5), *argv]
        return ["ssh", *self.options, self.destination, "--", shlex.join(remote)]

    def describe(self) -> dict:
        try:
            proc = subprocess.run(["ssh", *self.options, self.destination, "--", DESCRIBE_SCRIPT],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as exc:
            raise HostError(f"ssh {self.destination}: {exc}") from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            raise HostError(f"ssh {self.destination} is unreachable: {last}")
        return {"driver": self.kind, "name": self.name or self.destination, **describe_output(proc.stdout)}


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)


def netns_unavailable() -> str | None:
    """Why this machine cannot create namespaces (None: it can)."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    if os.geteuid() != 0:
        return f"creating network namespaces needs root (running as uid {os.geteuid()})"
    return None


def remove_stale_namespaces() -> list[str]:
    """Namespaces a killed earlier run left behind (its pid is gone)."""
    listing = _ip("netns", "list").stdout
    removed = []
    for name in re.findall(rf"^({NETNS_PREFIX}(\d+)[rs])\b", listing, flags=re.M):
        ns, pid = name
        if not os.path.exists(f"/proc/{pid}"):
            _ip("netns", "del", ns)
            removed.append(ns)
    return removed


class NetnsPair:
    """Two namespaces (receiver, sender) joined by a veth pair, for one run.
    Use as a context manager: the namespaces (and with them the veth) are deleted on
    exit, whatever happened inside."""

    def __init__(self, tag: str | None = None):
        tag = tag or str(os.getpid())
        self.receiver = NetnsHost(name=f"netns {NETNS_PREFIX}{tag}r", namespace=f"{NETNS_PREFIX}{tag}r",
                                  address=NETNS_RECEIVER_ADDRESS, interface=f"tbv{tag}r")
        self.sender = NetnsHost(name=f"netns {NETNS_PREFIX}{tag}s", namespace=f"{NETNS_PREFIX}{tag}s",
                                address=NETNS_SENDER_ADDRESS, interface=f"tbv{tag}s")

    def __enter__(self) -> NetnsPair:
        why = netns_unavailable()
        if why:
            raise HostError(why)
        remove_stale_namespaces()
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _create(self) -> None:
        r, s = self.receiver, self.sender
        steps = [("netns", "add", r.namespace), ("netns", "add", s.namespace),
                 ("link", "add", r.interface, "netns", r.namespace, "type", "veth",
                  "peer", "name", s.interface, "netns", s.namespace)]
        for host in (r, s):
            steps += [("-n", host.namespace, "link", "set", "lo", "up"),
                      ("-n", host.namespace, "addr", "add", f"{host.address}/{SUBNET_BITS}",
                       "dev", host.interface),
                      ("-n", host.namespace, "link", "set", host.interface, "up")]
        for step in steps:
            proc = _ip(*step)
            if proc.returncode != 0:
                raise HostError(f"ip {' '.join(step)} failed: {proc.stderr.strip() or proc.returncode}")

    def close(self) -> None:
        for host in (self.receiver, self.sender):
            _ip("netns", "del", host.namespace)

    def describe_link(self) -> dict:
        return {"kind": "veth", "receiver": {"namespace": self.receiver.namespace,
                                             "interface": self.receiver.interface,
                                             "address": self.receiver.address},
                "sender": {"namespace": self.sender.namespace, "interface": self.sender.interface,
                           "address": self.sender.address},
                "mtu": _mtu(self.receiver)}


def _mtu(host: NetnsHost) -> int | None:
    out = _ip("-n", host.namespace, "link", "show", host.interface).stdout
    m = re.search(r"\bmtu (\d+)", out)
    return int(m.group(1)) if m else None
