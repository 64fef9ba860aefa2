"""Shaping the veth pair of a two-host run with `tc`: rate limits with tbf (present in
every kernel we run on), delay and loss with netem where the kernel has it.

Whether netem exists is found out once, on a throwaway veth pair in a throwaway
namespace, by trying it and reading tc's error; a link that needs it on a kernel
without it is refused with that error, naming the link, and its cells fail while the
rest of the sweep goes on.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from testbed.sweep.config_net import LinkSpec
from testbed.sweep.hosts import HostError, NetnsHost, NetnsPair, netns_unavailable

TBF_LATENCY = "50ms"       # how long a packet may wait in the tbf queue before it is dropped
MIN_BURST_BYTES = 256 * 1024  # >= a GSO super-packet (64 KiB) with room: a smaller burst drops them
BURST_SECONDS = 0.004         # tbf needs burst >= rate / HZ; 4 ms covers HZ = 250


@dataclass(frozen=True)
class Netem:
    available: bool
    detail: str   # tc's answer when absent; "" when present


def _tc(namespace: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", namespace, "tc", *args], capture_output=True, text=True,
                          timeout=20)


def _burst_bytes(rate_bits_per_s: float) -> int:
    return max(MIN_BURST_BYTES, int(rate_bits_per_s / 8 * BURST_SECONDS))


def qdisc_args(spec: LinkSpec) -> list[str]:
    """`tc qdisc replace dev X root ...` arguments for one direction of the link."""
    if spec.needs_netem:
        args = ["netem"]
        if spec.delay_ms is not None:
            args += ["delay", f"{spec.delay_ms:g}ms"]
        if spec.loss_pct is not None:
            args += ["loss", f"{spec.loss_pct:g}%"]
        if spec.rate is not None:
            args += ["rate", spec.rate]
        return args
    return ["tbf", "rate", spec.rate, "burst", str(_burst_bytes(spec.rate_bits_per_s)),
            "latency", TBF_LATENCY]


def detect_netem(tag: str | None = None) -> Netem:
    """Try netem on a throwaway veth pair and read tc's answer."""
    why = netns_unavailable()
    if why:
        return Netem(False, why)
    try:
        with NetnsPair(tag or f"{os.getpid()}9") as pair:
            proc = _tc(pair.receiver.namespace, "qdisc", "add", "dev", pair.receiver.interface, "root",
                       "netem", "delay", "1ms")
    except HostError as exc:
        return Netem(False, f"could not create a throwaway veth pair to probe netem: {exc}")
    if proc.returncode == 0:
        return Netem(True, "")
    return Netem(False, proc.stderr.strip() or f"tc exit {proc.returncode}")


class LinkShaper:
    """Applies one link shape at a time to both ends of a NetnsPair (each end shapes
    what it sends, so both directions see the same link)."""

    def __init__(self, ends: list[NetnsHost], netem: Netem):
        self.ends, self.netem = ends, netem
        self.current: str | None = None
        self.applied: dict[str, dict] = {}   # link name -> what was applied (for the manifest)

    def apply(self, spec: LinkSpec | None) -> None:
        """Shape the link (None: unshaped); HostError names the link and tc's error."""
        name = spec.name if spec else "direct"
        if self.current == name:
            return
        if spec is not None and spec.needs_netem and not self.netem.available:
            raise HostError(f"link {name!r} needs delay/loss, i.e. the netem qdisc, which this kernel "
                            f"lacks ({self.netem.detail}); only rate limits (tbf) work here")
        for end in self.ends:
            _tc(end.namespace, "qdisc", "del", "dev", end.interface, "root")  # absent is fine
            if spec is None:
                continue
            proc = _tc(end.namespace, "qdisc", "replace", "dev", end.interface, "root", *qdisc_args(spec))
            if proc.returncode != 0:
                self.current = None
                raise HostError(f"link {name!r}: tc qdisc {' '.join(qdisc_args(spec))} on "
                                f"{end.interface} failed: {proc.stderr.strip()}")
        self.current = name
        self.applied[name] = {"qdisc": qdisc_args(spec) if spec else None,
                              "shown": self.show(self.ends[0]) if spec else None}

    def show(self, end: NetnsHost) -> str:
        return _tc(end.namespace, "qdisc", "show", "dev", end.interface).stdout.strip()
