#!/usr/bin/env python3
"""Security interop driver: a security_peer server and one or more security_peer
clients (built against zlink or libzmq), one scenario of PLAIN, CURVE or NULL+ZAP.
Exit 0 only when every client met its expectation and the server's monitor saw
the events the scenario names.

  security_interop.py --scenario NAME --transport tcp|ipc
                      --server-bin PEER --client-bin PEER --keygen-bin PEER

Keys are made fresh per run with `--keygen-bin --keygen` (zmq_curve_keypair):
A (server), B (the server's next key, for rotation), C (the allowed client), D (an
unknown client).
"""
import argparse
import os
from collections import Counter
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT = 60
CRYPTOGRAPHIC = 0x11000001  # ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC
EFAULT = 14                 # libzmq's value for "no ZAP handler"

GOOD_PLAIN = ["--username", "admin", "--password", "password"]
BAD_PLAIN = ["--username", "admin", "--password", "wrong"]


def curve_client(server: str, client: str):
    return ["--server-public", f"{{{server}.pub}}", "--client-public", f"{{{client}.pub}}",
            "--client-secret", f"{{{client}.sec}}"]


# name -> (mechanism, server args, steps, server events that must be seen).
# A step is ("client", extra args, expectation, expected client event) or ("rotate",).
SCENARIOS = {
    "plain.ok": ("plain", ["--zap", "accept"],
                 [("client", GOOD_PLAIN, "ok", None)], [("HANDSHAKE_SUCCEEDED", None)]),
    "plain.bad-password": ("plain", ["--zap", "accept"],
                           [("client", BAD_PLAIN, "refused", "HANDSHAKE_FAILED_AUTH:400"),
                            ("client", GOOD_PLAIN, "ok", None)],
                           [("HANDSHAKE_FAILED_AUTH", 400), ("HANDSHAKE_SUCCEEDED", None)]),
    "plain.no-handler": ("plain", ["--zap", "none"],
                         [("client", GOOD_PLAIN, "refused", None)],
                         [("HANDSHAKE_FAILED_NO_DETAIL", EFAULT)]),
    "curve.ok": ("curve", ["--zap", "accept", "--server-secret", "{A.sec}", "--allow-client", "{C.pub}"],
                 [("client", curve_client("A", "C"), "ok", None)], [("HANDSHAKE_SUCCEEDED", None)]),
    "curve.unknown-client": ("curve", ["--zap", "accept", "--server-secret", "{A.sec}",
                                       "--allow-client", "{C.pub}"],
                             [("client", curve_client("A", "D"), "refused", "HANDSHAKE_FAILED_AUTH:400"),
                              ("client", curve_client("A", "C"), "ok", None)],
                             [("HANDSHAKE_FAILED_AUTH", 400), ("HANDSHAKE_SUCCEEDED", None)]),
    # No handler, ZAP domain not enforced: encryption without authentication.
    "curve.no-handler": ("curve", ["--zap", "none", "--server-secret", "{A.sec}"],
                         [("client", curve_client("A", "D"), "ok", None)], [("HANDSHAKE_SUCCEEDED", None)]),
    "curve.wrong-server-key": ("curve", ["--zap", "none", "--server-secret", "{A.sec}"],
                               [("client", curve_client("B", "C"), "refused", None),
                                ("client", curve_client("A", "C"), "ok", None)],
                               [("HANDSHAKE_FAILED_PROTOCOL", CRYPTOGRAPHIC), ("HANDSHAKE_SUCCEEDED", None)]),
    # The server changes its long-term key pair on the same endpoint.
    "curve.rotation": ("curve", ["--zap", "none", "--server-secret", "{A.sec}", "--next-secret", "{B.sec}"],
                       [("client", curve_client("A", "C"), "ok", None), ("rotate",),
                        ("client", curve_client("A", "C"), "refused", None),
                        ("client", curve_client("B", "C"), "ok", None)],
                       [("HANDSHAKE_FAILED_PROTOCOL", CRYPTOGRAPHIC), ("HANDSHAKE_SUCCEEDED", None)]),
    # PING/PONG keep a quiet CURVE connection up only if they are sealed as libzmq seals them.
    "curve.heartbeat": ("curve", ["--zap", "none", "--server-secret", "{A.sec}", "--heartbeat", "100"],
                        [("client", curve_client("A", "C") + ["--heartbeat", "100"], "ok", None)],
                        [("HANDSHAKE_SUCCEEDED", None)]),
    # The subscription travels sealed (SUBSCRIBE command inside a MESSAGE).
    "curve.pubsub": ("curve", ["--zap", "none", "--server-secret", "{A.sec}", "--pattern", "pubsub"],
                     [("client", curve_client("A", "C") + ["--pattern", "pubsub"], "ok", None)],
                     [("HANDSHAKE_SUCCEEDED", None)]),
    "null.zap-accept": ("null", ["--zap", "accept", "--domain", "test"],
                        [("client", [], "ok", None)], [("HANDSHAKE_SUCCEEDED", None)]),
    "null.zap-deny": ("null", ["--zap", "deny", "--domain", "test"],
                      [("client", [], "refused", "HANDSHAKE_FAILED_AUTH:400")],
                      [("HANDSHAKE_FAILED_AUTH", 400)]),
}


def fail(msg: str) -> int:
    print(f"security_interop: FAIL: {msg}", file=sys.stderr)
    return 1


def keygen(binary: str) -> dict:
    out = subprocess.run([binary, "--keygen"], capture_output=True, text=True, timeout=10, check=True).stdout
    _, pub, sec = out.split()
    return {"pub": pub, "sec": sec}


def fill(args, keys):
    """Replaces {A.pub}-style placeholders with generated keys."""
    out = []
    for a in args:
        for name, pair in keys.items():
            for part, value in pair.items():
                a = a.replace(f"{{{name}.{part}}}", value)
        out.append(a)
    return out


def read_line(proc, want: str) -> str:
    timer = threading.Timer(10, proc.kill)
    timer.start()
    try:
        line = proc.stdout.readline()
    finally:
        timer.cancel()
    if not line.startswith(want):
        _, err = proc.communicate()
        raise RuntimeError(f"server printed {line!r}, expected {want!r}: {err.strip()}")
    return line.split(" ", 1)[1].strip() if " " in line else ""


SECRET_FLAGS = {"--client-secret", "--server-secret", "--next-secret", "--password"}


def shown(cmd) -> str:
    """The command line for the log, with secret values masked."""
    return " ".join("***" if i and cmd[i - 1] in SECRET_FLAGS else c for i, c in enumerate(cmd))


def run_client(a, endpoint, mechanism, step, keys) -> bool:
    _, extra, expect, event = step
    cmd = [a.client_bin, "--role", "client", "--connect", endpoint, "--mechanism", mechanism,
           "--expect", expect, *fill(extra, keys)]
    if event:
        cmd += ["--expect-event", event]
    print("security_interop: client", expect, shown(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    sys.stdout.write(f"[client] {proc.stdout}")
    sys.stderr.write(proc.stderr)
    return proc.returncode == 0


def server_events(out: str):
    events = []
    for line in out.splitlines():
        if line.startswith("EVENT "):
            _, name, value = line.split()
            events.append((name, int(value)))
    return events


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    p.add_argument("--transport", required=True, choices=["tcp", "ipc"])
    p.add_argument("--server-bin", required=True)
    p.add_argument("--client-bin", required=True)
    p.add_argument("--keygen-bin", required=True)
    a = p.parse_args()
    mechanism, server_args, steps, want_events = SCENARIOS[a.scenario]
    keys = {name: keygen(a.keygen_bin) for name in "ABCD"}
    bind = "tcp://127.0.0.1:*" if a.transport == "tcp" else \
        "ipc://" + os.path.join(tempfile.mkdtemp(prefix="zlink-sec-"), "sock")
    cmd = [a.server_bin, "--role", "server", "--bind", bind, "--mechanism", mechanism, *fill(server_args, keys)]
    print("security_interop: server", shown(cmd), flush=True)
    server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TIMEOUT
    ok = True
    try:
        endpoint = read_line(server, "ENDPOINT")
        for step in steps:
            if step[0] == "rotate":
                server.stdin.write("rotate\n")
                server.stdin.flush()
                read_line(server, "ROTATED")
                continue
            if not run_client(a, endpoint, mechanism, step, keys):
                fail(f"client step {step[2]} {step[3] or ''} did not behave")
                ok = False
        server.stdin.write("stop\n")
        server.stdin.flush()
        out, err = server.communicate(timeout=max(1, deadline - time.monotonic()))
    except (RuntimeError, subprocess.TimeoutExpired, BrokenPipeError) as exc:
        server.kill()
        server.communicate()
        return fail(f"server: {exc}")
    sys.stdout.write(f"[server] {out}")
    sys.stderr.write(err)
    if server.returncode != 0:
        return fail(f"server exited with {server.returncode}")
    seen = server_events(out)
    for name, value in want_events:
        if not any(n == name and (value is None or v == value) for n, v in seen):
            counts = Counter(f"{n} {v:#x}" for n, v in seen)
            fail(f"server monitor never reported {name}{'' if value is None else f' {value:#x}'} "
                 f"(saw {dict(counts) or 'nothing'})")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
