"""A stand-in for the bench binaries (docs/data-formats.md §3) in the sweep tests.

Copied into a fake library's bench dir as bench_<pattern>. It speaks the bench command
line, including the two-process flags (--role, --bind/--connect, --pin-*):
- one process (--role both): two threads, each pinned as asked (so the runner's
  placement check reads real affinities from /proc), and figures computed from the
  library's lib.json (`fake_msgs_per_sec`, `fake_p50_us`, `fake_p99_us` (default twice
  the p50), `fake_noise`): a timed
  window of count / speed, so calibration is exact and tests need no real load.
- --role receiver / sender: real TCP or Unix sockets between two processes (bytes
  really cross loopback or a veth), timed with the monotonic clock.
behaviour.json in the bench dir maps a size (or "size:role") to a misbehaviour:
crash, hang, garbage, exit4, misplace (ignore the pins). FAKE_ORDER_LOG (environment):
a file to which each cell appends "cell <size>" (the fake ceiling_probe appends its own).
"""
import argparse
import fcntl
import json
import math
import os
import random
import socket
import sys
import threading
import time
from pathlib import Path

from testbed.bench import latency_histogram  # the fake runs with the testbed's own Python

HERE = Path(__file__).resolve().parent


def options():
    p = argparse.ArgumentParser()
    for flag in ("--transport", "--mode", "--role", "--bind", "--connect", "--control", "--pin-sender",
                 "--pin-receiver", "--process-model"):
        p.add_argument(flag)
    for flag in ("--size", "--count", "--lat-count", "--warmup", "--lat-warmup", "--io-threads", "--hwm",
                 "--timeout-ms", "--sndbuf", "--rcvbuf"):
        p.add_argument(flag, type=int)
    a = p.parse_args()
    a.role = a.role or "both"
    return a


def misbehave(behaviour: str) -> None:
    if behaviour == "crash":
        print("fake bench: crashing on purpose", file=sys.stderr)
        sys.stderr.flush()
        os.abort()
    if behaviour == "hang":
        print("fake bench: hanging on purpose", file=sys.stderr)
        sys.stderr.flush()
        time.sleep(3600)
    if behaviour == "garbage":
        print("this is not json")
        sys.exit(0)
    if behaviour == "exit4":
        print("fake bench: lost messages", file=sys.stderr)
        sys.exit(4)


def cpus_of(tid: int) -> str:
    for line in Path(f"/proc/self/task/{tid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return ""


def parse_cpus(text: str) -> set:
    out = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        out.update(range(int(low), int(high or low) + 1))
    return out


def side_thread(role: str, pin, misplace: bool, threads: list) -> None:
    if pin and not misplace:
        os.sched_setaffinity(0, parse_cpus(pin))  # 0 = the calling thread
    tid = threading.get_native_id()
    threads.append({"tid": tid, "name": role[:15], "role": role, "cpus": cpus_of(tid)})


def one_process_threads(a, misplace: bool) -> list:
    threads = [{"tid": threading.get_native_id(), "name": "main", "role": "main",
                "cpus": cpus_of(threading.get_native_id())}]
    for role, pin in (("sender", a.pin_sender), ("receiver", a.pin_receiver)):
        t = threading.Thread(target=side_thread, args=(role, pin, misplace, threads))
        t.start()
        t.join()
    return threads


def seed_noise(a) -> None:
    """Seeds the noise from this invocation's command line, its ZMQ_ASIO_/BENCH_
    environment and how many times that same invocation ran before in this bench dir:
    each repetition still draws its own noise, but a test sees the same draws on every
    run, so a rare false call by the paired test cannot make it flaky."""
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith(("ZMQ_ASIO_", "BENCH_")))
    key = json.dumps([Path(sys.argv[0]).name, sys.argv[1:], env])
    with open(HERE / "noise_draws.json", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        draws = json.loads(f.read() or "{}")
        draws[key] = draws.get(key, 0) + 1
        f.seek(0)
        f.truncate()
        f.write(json.dumps(draws))
    random.seed(f"{key}#{draws[key]}")


def noisy(value: float, info: dict) -> float:
    return value * (1 + random.gauss(0, info.get("fake_noise", 0.0)))


def computed_figures(a, info: dict) -> tuple:
    speed = noisy(info.get("fake_msgs_per_sec", 1e6), info)
    p50 = noisy(info.get("fake_p50_us", 2.0), info)
    thr = {"count": a.count, "warmup": a.warmup, "receiver_seconds": a.count / speed,
           "sender_seconds": a.count / speed, "msgs_per_sec": speed, "bytes_per_sec": speed * a.size,
           "mb_per_sec": speed * a.size / 1e6, "sender_msgs_per_sec": speed, "mb_unit": "1e6 bytes"}
    lat_warmup = 100 if a.lat_warmup is None else a.lat_warmup
    p99 = noisy(info["fake_p99_us"], info) if "fake_p99_us" in info else p50 * 2
    lat = {"count": a.lat_count, "warmup": lat_warmup, "unit": "us", "measure": "rtt/2", "min": p50 / 2,
           "p50": p50, "p90": max(p50, min(p50 * 1.5, p99)), "p99": p99, "p999": p99 * 1.25, "max": p99 * 1.5,
           "mean": p50}
    lat["histogram"] = summary_histogram(lat)
    return thr, lat


def summary_histogram(lat: dict) -> dict:
    """A histogram whose nearest-rank percentiles are the summary's (the fake has no
    samples): each rank up to a percentile's rank holds that percentile's value."""
    n, values, done = lat["count"], [], 0
    for key, q in (("min", 0.0), ("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999), ("max", 1.0)):
        upto = max(1, math.ceil(q * n)) if q else 1
        values += [round(lat[key] * 1000)] * (upto - done)
        done = max(done, upto)
    return latency_histogram.to_json(latency_histogram.from_values(values))


def endpoint_socket(ep: str):
    if ep.startswith("ipc://"):
        return socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), ep[len("ipc://"):]
    host, _, port = ep[len("tcp://"):].rpartition(":")
    return socket.socket(socket.AF_INET, socket.SOCK_STREAM), (host, int(port))


def receiver_conn(a):
    sock, addr = endpoint_socket(a.bind)
    if isinstance(addr, str) and os.path.exists(addr):
        os.unlink(addr)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(addr)
    sock.listen(1)
    sock.settimeout(a.timeout_ms / 1000)
    try:
        conn, _ = sock.accept()
    except TimeoutError:
        print("fake bench: no sender connected", file=sys.stderr)
        sys.exit(3)
    conn.settimeout(a.timeout_ms / 1000)
    return conn


def sender_conn(a):
    deadline = time.monotonic() + a.timeout_ms / 1000
    while True:
        sock, addr = endpoint_socket(a.connect)
        try:
            sock.connect(addr)
            return sock
        except OSError:
            sock.close()
            if time.monotonic() > deadline:
                print(f"fake bench: cannot connect to {a.connect}", file=sys.stderr)
                sys.exit(3)
            time.sleep(0.02)


def read_exactly(conn, n: int) -> None:
    while n > 0:
        chunk = conn.recv(min(n, 1 << 20))
        if not chunk:
            print("fake bench: peer closed the connection", file=sys.stderr)
            sys.exit(3)
        n -= len(chunk)


def run_receiver(a, conn) -> tuple:
    thr = lat = None
    if a.mode in ("thr", "both"):
        t0 = time.monotonic()
        read_exactly(conn, a.count * a.size)
        secs = time.monotonic() - t0
        thr = {"count": a.count, "warmup": a.warmup, "receiver_seconds": secs, "msgs_per_sec": a.count / secs,
               "bytes_per_sec": a.count * a.size / secs, "mb_per_sec": a.count * a.size / secs / 1e6,
               "mb_unit": "1e6 bytes"}
        conn.sendall(b"k")  # tells the sender the throughput phase is over
    if a.mode in ("lat", "both"):
        for _ in range(a.lat_count):
            read_exactly(conn, a.size)
            conn.sendall(b"x" * a.size)
    return thr, lat


def run_sender(a, conn) -> tuple:
    thr = lat = None
    if a.mode in ("thr", "both"):
        t0 = time.monotonic()
        conn.sendall(b"x" * (a.count * a.size))
        read_exactly(conn, 1)
        secs = time.monotonic() - t0
        thr = {"count": a.count, "warmup": a.warmup, "sender_seconds": secs,
               "sender_msgs_per_sec": a.count / secs}
    if a.mode in ("lat", "both"):
        rtts = []
        for _ in range(a.lat_count):
            t0 = time.monotonic()
            conn.sendall(b"x" * a.size)
            read_exactly(conn, a.size)
            rtts.append((time.monotonic() - t0) / 2 * 1e6)
        rtts.sort()
        pick = lambda q: rtts[min(len(rtts) - 1, int(q * len(rtts)))]  # noqa: E731
        lat = {"count": a.lat_count, "warmup": 0, "unit": "us", "measure": "rtt/2", "min": rtts[0],
               "p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99), "p999": pick(0.999), "max": rtts[-1],
               "mean": sum(rtts) / len(rtts),
               "histogram": latency_histogram.to_json(
                   latency_histogram.from_values(round(r * 1000) for r in rtts))}
    return thr, lat


def role_figures(a, behaviour: str) -> tuple:
    pin = a.pin_receiver if a.role == "receiver" else a.pin_sender
    if pin and behaviour != "misplace":
        os.sched_setaffinity(0, parse_cpus(pin))  # a role process pins itself whole
    conn = receiver_conn(a) if a.role == "receiver" else sender_conn(a)
    if behaviour == "crash-after-connect":
        print(f"fake bench: {a.role} crashing after connect", file=sys.stderr)
        sys.stderr.flush()
        os.abort()
    figures = run_receiver(a, conn) if a.role == "receiver" else run_sender(a, conn)
    tid = threading.get_native_id()
    return (*figures, [{"tid": tid, "name": a.role, "role": a.role, "cpus": cpus_of(tid)}])


def main() -> None:
    a = options()
    table = json.loads((HERE / "behaviour.json").read_text())
    behaviour = table.get(f"{a.size}:{a.role}", table.get(str(a.size), "ok"))
    time.sleep(float(os.environ.get("FAKE_BENCH_SLEEP", "0")))
    if os.environ.get("FAKE_ORDER_LOG") and a.role != "sender":  # where the ceiling probe ran
        with open(os.environ["FAKE_ORDER_LOG"], "a") as f:
            f.write(f"cell {a.size}\n")
    misbehave(behaviour)
    info = json.loads((HERE / "lib.json").read_text())
    if a.role == "both":
        seed_noise(a)
        thr, lat = computed_figures(a, info)
        threads = one_process_threads(a, behaviour == "misplace")
        thr = thr if a.mode != "lat" else None
        lat = lat if a.mode != "thr" else None
        sender_thr = None
    else:
        thr, lat, threads = role_figures(a, behaviour)
        # docs/data-formats.md §3: a sender line carries sender_throughput, throughput null
        sender_thr, thr = (thr, None) if a.role == "sender" else (None, thr)
    env = {k: v for k, v in os.environ.items() if k.startswith(("ZMQ_ASIO_", "BENCH_"))}
    print(json.dumps({
        "schema": "testbed.bench/1", "role": a.role, "sender_throughput": sender_thr,
        "library": {"name": info["name"], "version": info["version"], "build_id": info["build_id"]},
        "pattern": Path(sys.argv[0]).name[len("bench_"):].upper(), "transport": a.transport,
        "msg_size": a.size, "throughput": thr, "latency": lat,
        "verify": {"ok": True, "received": a.count, "expected": a.count, "method": "fake"},
        "settings": {"hwm": a.hwm, "io_threads": a.io_threads, "linger": 0, "sndbuf": -1, "rcvbuf": -1,
                     "clock": "fake", "process_model": a.process_model or "one-process"},
        "placement": {"sender": a.pin_sender, "receiver": a.pin_receiver}, "threads": threads,
        "env": env}))


if __name__ == "__main__":
    main()
