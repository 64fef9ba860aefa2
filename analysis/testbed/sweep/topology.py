"""The hosts of a run's two-host cells, set up once for the whole run: a netns pair
joined by a veth (with its link shaper) or two ssh hosts. What this machine cannot
provide (no root, no iproute2, an unreachable host) is not fatal: it is recorded, and
every two-host cell fails with that cause while the rest of the sweep goes on."""
from __future__ import annotations

from contextlib import ExitStack

from testbed.sweep import hosts, links
from testbed.sweep.config import Experiment
from testbed.sweep.execute import TwoHost


class Topology:
    """Context manager: `two_host` (or `problem`), and manifest entries for both hosts
    and the link. Everything it created is removed on exit, whatever happened."""

    def __init__(self, exp: Experiment, needed: bool):
        self.exp, self.needed = exp, needed
        self.two_host: TwoHost | None = None
        self.problem = ""
        self.manifest_hosts: dict = {}
        self.manifest_links: dict = {}
        self._stack = ExitStack()

    def __enter__(self) -> Topology:
        self.manifest_hosts = {"local": _describe(hosts.LocalHost())}
        if self.needed:
            try:
                self._set_up()
            except hosts.HostError as exc:
                self.problem = str(exc)
                self.manifest_hosts["problem"] = self.problem
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def _set_up(self) -> None:
        """Hosts first described (an unreachable one raises HostError here), then used."""
        spec = self.exp.hosts
        if spec.driver == "netns":
            pair = self._stack.enter_context(hosts.NetnsPair())
            netem = links.detect_netem()
            shaper = links.LinkShaper([pair.receiver, pair.sender], netem)
            two_host = TwoHost(pair.receiver, pair.sender, pair.receiver.address, spec.port, shaper,
                               dict(self.exp.links))
            self.manifest_links = {"topology": pair.describe_link(),
                                   "netem": {"available": netem.available, "detail": netem.detail},
                                   "declared": {n: s.as_manifest() for n, s in self.exp.links.items()},
                                   "applied": shaper.applied}
        else:
            receiver = hosts.SshHost(spec.receiver, name=f"ssh {spec.receiver}")
            sender = hosts.SshHost(spec.sender, name=f"ssh {spec.sender}")
            two_host = TwoHost(receiver, sender, spec.receiver_address, spec.port)
            self.manifest_links = {"topology": {"kind": "ssh", "receiver_address": spec.receiver_address,
                                                "port": spec.port}}
        self.manifest_hosts.update({"driver": spec.driver, "receiver": two_host.receiver.describe(),
                                    "sender": two_host.sender.describe()})
        self.two_host = two_host


def _describe(host) -> dict:
    try:
        return host.describe()
    except (OSError, hosts.HostError) as exc:
        return {"driver": host.kind, "error": str(exc)}
