#!/usr/bin/env python3
"""Interop driver: runs one socket-type pair between two interop_peer processes
(one built against zlink, one against libzmq), or a STREAM peer against a raw TCP
socket, or the hostile-input scenario. Exit 0 only when every process succeeded.

  run_interop.py pair --pattern NAME --transport tcp|ipc
                      --first-bin PEER --second-bin PEER --binder first|second
  run_interop.py stream --bin PEER --role server|client
  run_interop.py hostile --target-bin PEER --good-bin PEER

The pattern table below says which socket type and role each side plays. "first"
is the side listed first in the pattern name (e.g. PUB in pub-sub).
"""
import argparse
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT = 60  # seconds for a whole scenario; every process has its own 5 s recv timeouts

# pattern -> (first: type, role, extra args), (second: type, role, extra args)
PATTERNS = {
    "pair-pair": (("PAIR", "initiator", []), ("PAIR", "echo", ["--count", "104"])),
    "dealer-dealer": (("DEALER", "initiator", []), ("DEALER", "echo", ["--count", "104"])),
    "dealer-router": (("DEALER", "initiator", []), ("ROUTER", "echo", ["--count", "104"])),
    # ROUTER addresses the DEALER by the Identity the DEALER announced in READY.
    "router-dealer": (("ROUTER", "initiator", ["--peer-id", "dealer-E"]),
                      ("DEALER", "echo", ["--count", "104", "--id", "dealer-E"])),
    "router-router": (("ROUTER", "initiator", ["--id", "router-I", "--peer-id", "router-E"]),
                      ("ROUTER", "echo", ["--count", "104", "--id", "router-E"])),
    # Heartbeats on both sides (PING/PONG with TTL), run long enough to time out
    # a peer that does not answer.
    "heartbeat.pair-pair": (("PAIR", "initiator", ["--heartbeat", "100"]),
                            ("PAIR", "echo", ["--count", "104", "--heartbeat", "100"])),
    # The codec peer sends one PING with a 0.3 s TTL, then falls silent: the other
    # side must close the connection once the TTL passes without traffic.
    "ttl.pair-pair": (("PAIR", "echo", ["--count", "0"]), ("PAIR", "ttl-probe", [])),
    # Request-reply: REQ adds and strips the delimiter itself; a DEALER talking to
    # a REP writes it (--envelope 1) and expects it back.
    "req-rep": (("REQ", "initiator", []), ("REP", "echo", ["--count", "104"])),
    "req-router": (("REQ", "initiator", []), ("ROUTER", "echo", ["--count", "104"])),
    "dealer-rep": (("DEALER", "initiator", ["--envelope", "1"]), ("REP", "echo", ["--count", "104"])),
    # Pipeline: the same script one way, checked in order by the PULL.
    "push-pull": (("PUSH", "pusher", []), ("PULL", "puller", [])),
    "pub-sub": (("PUB", "publisher", []), ("SUB", "subscriber", [])),
    # Both sides told to speak ZMTP 3.0: only the codec peer can (--zmtp 3.0), so
    # these run codec-3.0 against zlink, which must downgrade its subscriptions.
    "zmtp30.pub-sub": (("PUB", "publisher", ["--zmtp", "3.0"]), ("SUB", "subscriber", ["--zmtp", "3.0"])),
    "zmtp30.xpub-xsub": (("XPUB", "publisher", ["--zmtp", "3.0"]),
                         ("XSUB", "subscriber", ["--zmtp", "3.0"])),
    "pub-xsub": (("PUB", "publisher", []), ("XSUB", "subscriber", [])),
    "xpub-sub": (("XPUB", "publisher", []), ("SUB", "subscriber", [])),
    "xpub-xsub": (("XPUB", "publisher", []), ("XSUB", "subscriber", [])),
}


def fail(msg: str) -> int:
    print(f"run_interop: FAIL: {msg}", file=sys.stderr)
    return 1


def start(cmd):
    print("run_interop: starting", " ".join(cmd), flush=True)
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def read_endpoint(proc) -> str:
    """Waits for the binder's 'ENDPOINT ...' line (bounded by a timer that kills it)."""
    timer = threading.Timer(10, proc.kill)
    timer.start()
    try:
        line = proc.stdout.readline()
    finally:
        timer.cancel()
    if not line.startswith("ENDPOINT "):
        out, err = proc.communicate()
        raise RuntimeError(f"binder printed no endpoint: {line!r} {err.strip()}")
    return line.split(" ", 1)[1].strip()


def finish(proc, name: str, deadline: float) -> bool:
    try:
        out, err = proc.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        print(f"run_interop: {name} timed out and was killed\n{err}", file=sys.stderr)
        return False
    sys.stdout.write(f"[{name}] {out}")
    if err:
        sys.stderr.write(f"[{name}] {err}")
    if proc.returncode != 0:
        print(f"run_interop: {name} exited with {proc.returncode}", file=sys.stderr)
    return proc.returncode == 0


def stop(proc):
    try:
        proc.stdin.write("stop\n")
        proc.stdin.flush()  # communicate() closes stdin afterwards
    except (BrokenPipeError, OSError):
        pass


def run_pair(a) -> int:
    first, second = PATTERNS[a.pattern]
    sides = {"first": (a.first_bin, first), "second": (a.second_bin, second)}
    binder_name = a.binder
    connecter_name = "second" if binder_name == "first" else "first"
    if a.transport == "tcp":
        bind_ep = "tcp://127.0.0.1:*"
    else:
        bind_ep = "ipc://" + os.path.join(tempfile.mkdtemp(prefix="zlink-interop-"), "sock")

    def cmd(name, mode, ep):
        binary, (stype, role, extra) = sides[name]
        return [binary, "--role", role, "--type", stype, mode, ep] + extra

    deadline = time.monotonic() + TIMEOUT
    binder = start(cmd(binder_name, "--bind", bind_ep))
    try:
        endpoint = read_endpoint(binder)
    except RuntimeError as e:
        binder.kill()
        return fail(str(e))
    connecter = start(cmd(connecter_name, "--connect", endpoint))
    procs = {binder_name: binder, connecter_name: connecter}
    # Publishers, pushers (and echoes with --count 0) run until told to stop: stop
    # the first side once the second is done.
    first_role, first_extra = first[1], first[2]
    serves = first_role in ("publisher", "pusher") or (
        first_role == "echo" and first_extra[:2] == ["--count", "0"])
    ok = True
    if serves:
        ok &= finish(procs["second"], f"second({sides['second'][1][0]})", deadline)
        stop(procs["first"])
        ok &= finish(procs["first"], f"first({sides['first'][1][0]})", deadline)
    else:
        for name in ("first", "second"):
            ok &= finish(procs[name], f"{name}({sides[name][1][0]})", deadline)
    return 0 if ok else fail(f"{a.pattern} over {a.transport}, binder={a.binder}")


def run_stream(a) -> int:
    deadline = time.monotonic() + TIMEOUT
    if a.role == "server":
        proc = start([a.bin, "--role", "stream-server", "--type", "STREAM",
                      "--bind", "tcp://127.0.0.1:*"])
        try:
            endpoint = read_endpoint(proc)
        except RuntimeError as e:
            proc.kill()
            return fail(str(e))
        host, port = endpoint[len("tcp://"):].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as c:
            c.sendall(b"hello\n")
            got = b""
            while not got.endswith(b"\n"):
                chunk = c.recv(100)
                if not chunk:
                    break
                got += chunk
        if got != b"world\n":
            proc.kill()
            finish(proc, "stream-server", deadline)
            return fail(f"STREAM server replied {got!r}, expected b'world\\n'")
        return 0 if finish(proc, "stream-server", deadline) else fail("stream-server failed")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    proc = start([a.bin, "--role", "stream-client", "--type", "STREAM",
                  "--connect", f"tcp://127.0.0.1:{port}"])
    listener.settimeout(10)
    try:
        conn, _ = listener.accept()
    except socket.timeout:
        proc.kill()
        finish(proc, "stream-client", deadline)
        return fail("STREAM client never connected")
    with conn:
        conn.settimeout(5)
        got = b""
        while not got.endswith(b"\n"):
            chunk = conn.recv(100)
            if not chunk:
                break
            got += chunk
        if got != b"ping\n":
            proc.kill()
            finish(proc, "stream-client", deadline)
            return fail(f"STREAM client sent {got!r}, expected b'ping\\n'")
        conn.sendall(b"pong\n")
        ok = finish(proc, "stream-client", deadline)
    return 0 if ok else fail("stream-client failed")


# ---- hostile input ---------------------------------------------------------------

def greeting(major=3, minor=1, mechanism=b"NULL") -> bytes:
    return (b"\xff" + bytes(8) + b"\x7f" + bytes([major, minor])
            + mechanism.ljust(20, b"\0") + b"\0" + bytes(31))


def ready(socket_type: bytes) -> bytes:
    body = b"\x05READY" + b"\x0bSocket-Type" + struct.pack(">I", len(socket_type)) + socket_type
    return bytes([0x04, len(body)]) + body


HOSTILE = [
    # (name, bytes to send, whether the server must close the connection)
    ("http_garbage", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", True),
    ("zmtp1_frame", b"\x01\x00", True),
    ("zmtp2_greeting", b"\xff" + bytes(8) + b"\x7f\x01\x05", True),
    ("curve_mechanism", greeting(mechanism=b"CURVE"), True),
    ("plain_mechanism", greeting(mechanism=b"PLAIN"), True),
    ("incompatible_type", greeting() + ready(b"PUB"), True),
    ("message_before_ready", greeting() + b"\x00\x03abc", True),
    ("reserved_flags", greeting() + ready(b"DEALER") + b"\xf0\x01x", True),
    ("command_with_more", greeting() + ready(b"DEALER") + b"\x05\x00", True),
    # Target runs with ZMQ_MAXMSGSIZE 1 MiB: a 16 MiB frame header must close it
    # before any body arrives.
    ("oversize_frame", greeting() + ready(b"DEALER") + b"\x02" + struct.pack(">Q", 16 << 20), True),
    ("huge_frame_2pow62", greeting() + ready(b"DEALER") + b"\x02" + struct.pack(">Q", 1 << 62), True),
    # Truncated: half a frame then we hang up; the server must simply survive.
    ("truncated_frame", greeting() + ready(b"DEALER") + b"\x00\x10abc", False),
    ("random_bytes", bytes((i * 97 + 13) % 256 for i in range(4096)), True),
]


def expect_closed(data: bytes, must_close: bool) -> str:
    """Sends `data` to the target; returns '' if it behaved, else a reason."""
    with socket.create_connection(HOSTILE_ADDR, timeout=5) as c:
        try:
            c.sendall(data)
        except OSError:
            return ""  # already closed on us: fine
        if not must_close:
            return ""
        end = time.monotonic() + 5
        while time.monotonic() < end:
            try:
                chunk = c.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                return ""
            except socket.timeout:
                break
            if not chunk:
                return ""
        return "connection was not closed within 5 s"


HOSTILE_ADDR = None


def run_hostile(a) -> int:
    global HOSTILE_ADDR
    deadline = time.monotonic() + TIMEOUT
    target = start([a.target_bin, "--role", "echo", "--type", "ROUTER", "--count", "0",
                    "--maxmsgsize", str(1 << 20), "--bind", "tcp://127.0.0.1:*"])
    try:
        endpoint = read_endpoint(target)
    except RuntimeError as e:
        target.kill()
        return fail(str(e))
    host, port = endpoint[len("tcp://"):].rsplit(":", 1)
    HOSTILE_ADDR = (host, int(port))
    # A good DEALER peer runs its full echo script while the attack goes on.
    good = start([a.good_bin, "--role", "initiator", "--type", "DEALER", "--connect", endpoint])
    problems = []
    for name, data, must_close in HOSTILE:
        why = expect_closed(data, must_close)
        print(f"run_interop: hostile case {name}: {'ok' if not why else why}", flush=True)
        if why:
            problems.append(f"{name}: {why}")
    ok = finish(good, "good-peer(during attack)", deadline)
    # And a fresh good peer after the attack.
    after = start([a.good_bin, "--role", "initiator", "--type", "DEALER", "--connect", endpoint])
    ok &= finish(after, "good-peer(after attack)", deadline)
    stop(target)
    ok &= finish(target, "target(ROUTER echo)", deadline)
    if problems:
        return fail("; ".join(problems))
    return 0 if ok else fail("the target stopped serving good peers")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("pair")
    pp.add_argument("--pattern", required=True, choices=sorted(PATTERNS))
    pp.add_argument("--transport", required=True, choices=["tcp", "ipc"])
    pp.add_argument("--first-bin", required=True)
    pp.add_argument("--second-bin", required=True)
    pp.add_argument("--binder", required=True, choices=["first", "second"])
    sp = sub.add_parser("stream")
    sp.add_argument("--bin", required=True)
    sp.add_argument("--role", required=True, choices=["server", "client"])
    hp = sub.add_parser("hostile")
    hp.add_argument("--target-bin", required=True)
    hp.add_argument("--good-bin", required=True)
    a = p.parse_args()
    for attr in ("first_bin", "second_bin", "bin", "target_bin", "good_bin"):
        path = getattr(a, attr, None)
        if path is not None and not os.access(path, os.X_OK):
            return fail(f"{attr.replace('_', '-')} '{path}' is not an executable file")
    return {"pair": run_pair, "stream": run_stream, "hostile": run_hostile}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
