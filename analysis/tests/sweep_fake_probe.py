"""A stand-in for bench/ceiling's ceiling_probe in the sweep tests (schema
testbed.ceiling/2, docs/data-formats.md §3). Copied into a fake library's bench dir as
ceiling_probe. It speaks the probe's command line and prints the figures of the
library's lib.json (`fake_ceiling_bps`, `fake_ceiling_p50_us`), echoing the options it
was given in `settings` and `placement` so tests can check what the runner asked.
A role process (--role receiver|sender) prints only its side's rows, as the real one.
behaviour.json's "ceiling" key makes it misbehave: crash, garbage or hang.
FAKE_ORDER_LOG (environment): a file to which it appends "probe <size>", so a test
can see where in a batch it ran (the fake bench appends its cells)."""
import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def options():
    p = argparse.ArgumentParser()
    for flag in ("--sizes", "--transports", "--write-sizes", "--io-waits", "--mode", "--role", "--bind",
                 "--connect", "--pin-sender", "--pin-receiver", "--process-model"):
        p.add_argument(flag)
    for flag in ("--bytes", "--lat-count", "--timeout-ms", "--sndbuf", "--rcvbuf", "--source-messages"):
        p.add_argument(flag, type=int)
    a = p.parse_args()
    a.role, a.mode = a.role or "both", a.mode or "both"
    return a


def rows(a, info: dict) -> list:
    bps, p50 = info.get("fake_ceiling_bps", 1e9), info.get("fake_ceiling_p50_us", 5.0)
    transport = a.transports or ("tcp" if (a.bind or a.connect or "").startswith("tcp") else "ipc")
    out = []
    for size in (int(s) for s in a.sizes.split(",")):
        thr = {"bytes": a.bytes, "seconds": a.bytes / bps, "bytes_per_sec": bps, "mb_per_sec": bps / 1e6,
               "msgs_per_sec": bps / size, "write_size": 262144, "io": "blocking", "mb_unit": "1e6 bytes",
               "tried": []}
        lat = {"count": a.lat_count or 1000, "unit": "us", "measure": "rtt/2", "min": p50 / 2, "p50": p50,
               "p90": p50 * 1.5, "p99": p50 * 2, "p999": p50 * 2.5, "max": p50 * 3, "mean": p50}
        out.append({"transport": transport, "probe": "fake", "msg_size": size,
                    "throughput": thr if a.mode != "lat" and a.role != "sender" else None,
                    "latency": lat if a.mode != "thr" and a.role != "receiver" else None})
    return out


def main() -> None:
    a = options()
    behaviour = json.loads((HERE / "behaviour.json").read_text()).get("ceiling", "ok")
    log = os.environ.get("FAKE_ORDER_LOG")
    if log and a.role != "sender":
        with open(log, "a") as f:
            f.write(f"probe {a.sizes}\n")
    if behaviour == "crash":
        print("fake probe: crashing on purpose", file=sys.stderr)
        sys.stderr.flush()
        os.abort()
    if behaviour == "hang":
        time.sleep(3600)
    if behaviour == "garbage":
        print("this is not json")
        return
    info = json.loads((HERE / "lib.json").read_text())
    model = a.process_model or ("one-process" if a.role == "both" else "two-process")
    print(json.dumps({
        "schema": "testbed.ceiling/2", "clock": "fake", "role": a.role, "process_model": model,
        "settings": {"bytes": a.bytes, "lat_count": a.lat_count, "write_sizes": a.write_sizes,
                     "io_waits": a.io_waits, "mode": a.mode, "sndbuf": a.sndbuf, "rcvbuf": a.rcvbuf,
                     "source_messages": a.source_messages or 1},
        "placement": {"sender": a.pin_sender, "receiver": a.pin_receiver}, "threads": [],
        "rows": rows(a, info)}))


if __name__ == "__main__":
    main()
