"""The Toxiproxy server of a run, and its HTTP API (POST /proxies, POST
/proxies/NAME/toxics, DELETE ...): one server per run, one proxy per cell.

The server runs in its own process group and is stopped (SIGTERM, then SIGKILL) when
the `running()` context ends, however it ends (an error, Ctrl-C), so no proxy
outlives the run.
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


class ProxyError(RuntimeError):
    pass


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when the runner dies, however it dies (even
    SIGKILL, where no cleanup of ours runs), so no driver or proxy outlives it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Toxiproxy:
    """A client of one running server."""

    port: int

    def _call(self, method: str, path: str, body: dict | None = None) -> dict | list | None:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                text = resp.read().decode()
        except urllib.error.HTTPError as exc:
            raise ProxyError(
                f"toxiproxy {method} {path}: HTTP {exc.code} {exc.read().decode()[:200]}"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise ProxyError(f"toxiproxy {method} {path}: {exc}") from None
        return json.loads(text) if text.strip() else None

    def version(self) -> str:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/version")
        with urllib.request.urlopen(req, timeout=10) as resp:
            text = resp.read().decode().strip()
        try:  # 2.5.0 answers {"version": "..."}; older ones the bare string
            return json.loads(text).get("version", text)
        except (ValueError, AttributeError):
            return text

    def create(self, name: str, upstream: str, listen: str = "127.0.0.1:0") -> str:
        """A proxy listening on `listen` (by default a free loopback port); returns its
        listen address."""
        body = {"name": name, "listen": listen, "upstream": upstream, "enabled": True}
        out = self._call("POST", "/proxies", body)
        return out["listen"]

    def delete(self, name: str) -> None:
        self._call("DELETE", f"/proxies/{name}")

    def add_toxic(self, proxy: str, name: str, kind: str, stream: str, attributes: dict) -> None:
        self._call(
            "POST",
            f"/proxies/{proxy}/toxics",
            {"name": name, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attributes},
        )

    def remove_toxic(self, proxy: str, name: str) -> None:
        self._call("DELETE", f"/proxies/{proxy}/toxics/{name}")

    def reset(self) -> None:
        """Every proxy enabled and every toxic removed (between cells, in case a
        cell stopped half-way)."""
        self._call("POST", "/reset")


def _wait_ready(proc: subprocess.Popen, client: Toxiproxy, log: Path, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ProxyError(f"toxiproxy-server exited {proc.returncode} at start; see {log}")
        try:
            client.version()
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    raise ProxyError(f"toxiproxy-server did not answer within {seconds:g} s; see {log}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


class Server:
    """A running toxiproxy-server on a free loopback port. restart() replaces a server
    whose API stopped answering (Toxiproxy 2.5 can wedge on a toxic removal once a
    connection behind the toxic has closed: its issues 412 and 558)."""

    def __init__(self, binary: Path, log: Path, seed_key: str | None = None):
        self.binary, self.log = binary, log
        self.seed_key = seed_key  # set: every start seeds its toxics (server_seed)
        self.proc: subprocess.Popen | None = None
        self.client = Toxiproxy(0)
        self.restarts = 0

    def start(self) -> None:
        port = free_port()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        argv = [str(self.binary), "-host", "127.0.0.1", "-port", str(port)]
        if self.seed_key is not None:
            argv += ["-seed", str(server_seed(self.seed_key, self.restarts))]
        with open(self.log, "ab") as sink:
            sink.write(f"testbed: {' '.join(argv)}\n".encode())  # the seed it drew from
            sink.flush()
            # Its own process group, in the runner's session (as the drivers).
            self.proc = subprocess.Popen(
                argv,
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                process_group=0,
                preexec_fn=die_with_parent,
            )
        # The same client object, on the new port: whoever holds it (a soak's pairs)
        # reaches the restarted server.
        self.client.port = port
        _wait_ready(self.proc, self.client, self.log)

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()


def server_seed(seed_key: str, restarts: int) -> int:
    """toxiproxy-server's -seed: its toxics' random draws (the latency toxic's jitter,
    the slicer's size variation, toxicity) come from Go's math/rand, which it seeds
    with the clock unless told. seed_key carries the run's seed (and the server's slot);
    a restarted server draws afresh. The draws of connections sharing a server still
    interleave as the Go scheduler runs them: the seed is recorded, the exact jitter
    sequence per connection is not reproducible."""
    return random.Random(f"{seed_key}#{restarts}").getrandbits(63)


@contextmanager
def running(binary: Path, log: Path, seed_key: str | None = None) -> Iterator[Server]:
    """Start the server, yield it, stop it at the end however the block ends."""
    server = Server(binary, log, seed_key)
    try:
        server.start()
        yield server
    finally:
        server.stop()
