"""The fault proxy: its pin (baselines/toxiproxy/pin.toml) and the check of a built
binary against it; and, with the binary setup built, the behaviours the faults
experiments rely on (a latency toxic delays, a timeout toxic drops and its removal
closes the connection)."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from testbed.faults import proxy
from testbed.toolchain import go_tools


def test_a_run_seeds_its_proxy_servers_from_its_seed(monkeypatch, tmp_path):
    """toxiproxy-server seeds its toxics' draws (latency jitter, slicer variation)
    from the clock unless given -seed: a run's servers get one derived from the run's
    seed and slot (runner.proxy_seed_key), written to the proxy log; a restarted
    server draws afresh; the same run seed, the same seeds."""
    from testbed.faults import runner

    argvs: list[list[str]] = []

    class FakeProc:
        def poll(self):
            return None

    def fake_popen(argv, **kwargs):
        argvs.append(argv)
        return FakeProc()

    monkeypatch.setattr(proxy.subprocess, "Popen", fake_popen)
    monkeypatch.setattr(proxy, "_wait_ready", lambda *a: None)
    monkeypatch.setattr(proxy, "stop", lambda proc: None)

    def seeds(key: str, log) -> list[int]:
        argvs.clear()
        server = proxy.Server(Path("toxiproxy-server"), log, key)
        server.start()
        server.restart()
        return [int(a[a.index("-seed") + 1]) for a in argvs]

    first = seeds(runner.proxy_seed_key(7, 0), tmp_path / "a.log")
    assert len(first) == 2 and first[0] != first[1]
    assert seeds(runner.proxy_seed_key(7, 0), tmp_path / "b.log") == first
    assert set(seeds(runner.proxy_seed_key(7, 1), tmp_path / "c.log")).isdisjoint(first)
    assert set(seeds(runner.proxy_seed_key(8, 0), tmp_path / "d.log")).isdisjoint(first)
    assert f"-seed {first[0]}" in (tmp_path / "a.log").read_text()
    argvs.clear()
    proxy.Server(Path("toxiproxy-server"), tmp_path / "e.log").start()
    assert "-seed" not in argvs[0]


def test_the_shipped_pin_reads():
    tool = go_tools.pinned()
    assert tool.version == "v2.5.0" and tool.module == "github.com/Shopify/toxiproxy/v2"
    assert all(v.split()[1].startswith("h1:") for v in tool.modules.values())


def test_a_module_off_the_pin_is_named():
    tool = go_tools.pinned()
    built = dict(tool.modules)
    built["golang.org/x/sys"] = "v0.1.0 h1:xyz="
    built["example.com/extra"] = "v1.0.0 h1:abc="
    del built["github.com/rs/xid"]
    bad = go_tools.mismatches(tool, built)
    assert any(line.startswith("golang.org/x/sys: pinned") for line in bad)
    assert any("example.com/extra" in line and "not pinned" in line for line in bad)
    assert any(line.startswith("github.com/rs/xid") and "absent" in line for line in bad)
    assert go_tools.mismatches(tool, dict(tool.modules)) == []


def test_a_broken_pin_names_the_key(tmp_path):
    path = tmp_path / "pin.toml"
    path.write_text(
        '[toxiproxy]\npackage = "x"\nmodule = "m"\nversion = "v1"\nbinary = "b"\n[toxiproxy.modules]\n'
    )
    with pytest.raises(go_tools.PinError, match="toxiproxy.modules"):
        go_tools.pinned(path)


def test_missing_go_is_said_clearly(monkeypatch, tmp_path):
    monkeypatch.setattr(go_tools, "is_current", lambda tool: False)
    monkeypatch.setattr(go_tools, "go_command", lambda: None)
    monkeypatch.setattr(go_tools.shutil, "which", lambda name: None)
    from testbed.toolchain.progress import Progress

    reason = go_tools.ensure(Progress(quiet=True))
    assert reason.startswith("go not found") and "golang-go" in reason


def _echo_server() -> tuple[socket.socket, int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(
                target=lambda c=conn: [c.sendall(d) for d in iter(lambda: c.recv(4096), b"")], daemon=True
            ).start()

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


def _round_trip(conn: socket.socket) -> float:
    start = time.monotonic()
    conn.sendall(b"x")
    assert conn.recv(1) == b"x"
    return time.monotonic() - start


@pytest.mark.slow
def test_toxics_behave_as_the_experiments_assume(tmp_path):
    found = go_tools.proxy_binary()
    if found is None:
        pytest.fail("no toxiproxy-server: ./testbed setup builds it (baselines/toxiproxy/pin.toml)")
    srv, port = _echo_server()
    try:
        with proxy.running(found[0], tmp_path / "proxy.log", "1#slot0") as server:
            client = server.client
            # A `go install` build carries no version string ("git"): the pin names it.
            assert client.version()
            host, lport = client.create("t", f"127.0.0.1:{port}").rsplit(":", 1)
            conn = socket.create_connection((host, int(lport)), timeout=5)
            client.add_toxic("t", "lat", "latency", "downstream", {"latency": 150, "jitter": 0})
            assert _round_trip(conn) >= 0.14
            client.remove_toxic("t", "lat")
            assert _round_trip(conn) < 0.1
            client.add_toxic("t", "cut", "timeout", "upstream", {"timeout": 0})
            conn.sendall(b"dropped")
            conn.settimeout(0.3)
            with pytest.raises(TimeoutError):
                conn.recv(1)
            client.remove_toxic("t", "cut")  # its cleanup closes the connection
            conn.settimeout(5)
            assert conn.recv(1) == b""
            client.delete("t")
    finally:
        srv.close()
