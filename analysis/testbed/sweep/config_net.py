"""The `[hosts]` and `[links.NAME]` tables of experiment.toml: where the two roles of
a two-host cell run, and how the link between them is shaped (experiments/README.md).

Parsing only checks what can be checked on paper (names, types, units); whether this
machine can create namespaces or has the netem qdisc is found out when a cell needs
it, and a cell that cannot get its host or link fails with the cause named.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from testbed.sweep.toml_reader import Section

DIRECT_LINK = "direct"  # the built-in link: no shaping at all
DRIVERS = ("netns", "ssh")
NETNS_RECEIVER_ADDRESS = "10.77.0.1"  # the veth pair's addresses (receiver binds, sender connects)
NETNS_SENDER_ADDRESS = "10.77.0.2"
DEFAULT_PORT = 5555
RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}
_RATE = re.compile(r"^(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit|tbit)$")


@dataclass(frozen=True)
class LinkSpec:
    """A shaped link: rate by tbf, delay and loss by netem (where the kernel has it)."""
    name: str
    rate: str | None = None          # tc syntax, e.g. "100mbit"
    delay_ms: float | None = None
    loss_pct: float | None = None

    @property
    def needs_netem(self) -> bool:
        return self.delay_ms is not None or self.loss_pct is not None

    @property
    def rate_bits_per_s(self) -> float | None:
        if self.rate is None:
            return None
        number, unit = _RATE.match(self.rate).groups()
        return float(number) * RATE_UNITS[unit]

    def as_manifest(self) -> dict:
        return {"rate": self.rate, "delay_ms": self.delay_ms, "loss_pct": self.loss_pct}


@dataclass(frozen=True)
class HostsSpec:
    """The two ends of a two-host cell. netns: two network namespaces on this machine
    joined by a veth pair the runner creates; ssh: two real hosts reached by ssh."""
    driver: str
    receiver: str | None = None          # ssh destinations ("user@host")
    sender: str | None = None
    receiver_address: str = NETNS_RECEIVER_ADDRESS   # what the sender connects to
    port: int = DEFAULT_PORT             # the bench also uses port + 1 (its control connection)

    def as_manifest(self) -> dict:
        return {"driver": self.driver, "receiver": self.receiver, "sender": self.sender,
                "receiver_address": self.receiver_address, "port": self.port}


def parse_links(sec: Section) -> dict[str, LinkSpec]:
    links = {}
    for name in sec.table:
        if name == DIRECT_LINK:
            raise sec.err(name, "is the built-in unshaped link", "another name for a shaped link")
        links[name] = _link(name, sec.sub(name))
    return links


def _link(name: str, sec: Section) -> LinkSpec:
    rate = sec.get("rate", str, None, allowed='a tc rate like "100mbit" or "1gbit"')
    if rate is not None and not _RATE.match(rate):
        raise sec.err("rate", f"bad rate {rate!r}", "a number with bit, kbit, mbit, gbit or tbit")
    delay = sec.number("delay_ms", None, minimum=0.0, above=True)
    loss = sec.number("loss_pct", None, minimum=0.0, above=True)
    if loss is not None and loss >= 100:
        raise sec.err("loss_pct", f"bad value {loss!r}", "a percentage > 0 and < 100")
    sec.done()
    if rate is None and delay is None and loss is None:
        raise sec.err("", "shapes nothing", "rate, delay_ms and/or loss_pct")
    return LinkSpec(name=name, rate=rate, delay_ms=delay, loss_pct=loss)


def parse_hosts(sec: Section) -> HostsSpec:
    driver = sec.choice("driver", DRIVERS)
    port = sec.positive("port", DEFAULT_PORT, minimum=1024)
    if port > 65534:
        raise sec.err("port", f"bad value {port}", "1024..65534 (the bench uses port + 1 too)")
    if driver == "netns":
        sec.done()
        return HostsSpec(driver=driver, port=port)
    receiver = sec.get("receiver", str, allowed="an ssh destination such as user@host-a")
    sender = sec.get("sender", str, allowed="an ssh destination such as user@host-b")
    address = sec.get("receiver_address", str, allowed="the receiver's address as the sender sees it")
    sec.done()
    return HostsSpec(driver=driver, receiver=receiver, sender=sender, receiver_address=address, port=port)
