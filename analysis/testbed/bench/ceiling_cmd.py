"""`./testbed ceiling`: the host's limits per message size without a messaging
library (raw TCP and Unix-domain stream throughput and RTT/2, memcpy bandwidth),
measured by the ceiling_probe binary (built with the bench harness) with the same
process model, placement (pins), sizes and socket buffers as the cells it bounds.
Rows are keyed by (transport, msg_size) so reports can show each library as a share
of them. Schema testbed.ceiling/2 (docs/data-formats.md section 3)."""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

from testbed.bench import validate
from testbed.bench.command import local_endpoints, run_bench, run_two_process
from testbed.bench.patterns import EXIT_ERROR, EXIT_OK

DEFAULT_SIZES = "64,1024,65536,262144"
DEFAULT_TRANSPORTS = "tcp,ipc,inproc"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default=DEFAULT_SIZES,
                        help=f"comma-separated message sizes (default {DEFAULT_SIZES})")
    parser.add_argument("--transports", default=DEFAULT_TRANSPORTS, help=f"default {DEFAULT_TRANSPORTS}")
    parser.add_argument("--bytes", type=int, help="bytes per throughput row (default 256 MiB)")
    parser.add_argument("--lat-count", type=int, help="round trips per latency row (default 2000)")
    parser.add_argument("--write-sizes",
                        help="write sizes to try per row, the best counts (default 65536,262144,1048576)")
    parser.add_argument("--io-waits",
                        help="ways of waiting per row: blocking, poll, coalesce, handoff (default all)")
    parser.add_argument("--source-messages", type=int,
                        help="the sender writes from a ring of N message-sized buffers, as the bench's "
                             "zero-copy sender from its --send-buffers ring (default 1: one buffer)")
    parser.add_argument("--mode", choices=("thr", "lat", "both"), help="what to measure (default both)")
    parser.add_argument("--process-model", choices=("one-process", "two-process"), default="one-process",
                        help="two threads of one process (default), or a receiver and a sender process per "
                             "stream transport (inproc = memcpy stays in one process)")
    parser.add_argument("--pin-sender", help="CPU list (taskset syntax) for the sending side, as the cells")
    parser.add_argument("--pin-receiver", help="CPU list (taskset syntax) for the receiving side")
    parser.add_argument("--sndbuf", type=int, help="SO_SNDBUF as the cells' --sndbuf (default: OS default)")
    parser.add_argument("--rcvbuf", type=int, help="SO_RCVBUF as the cells' --rcvbuf (default: OS default)")
    parser.add_argument("--lib", default="libzmq-4.3.5",
                        help="whose bench build holds ceiling_probe (the probe itself uses no library)")
    parser.add_argument("--json", action="store_true", help="print the JSON (schema testbed.ceiling/2)")


def _host() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return {"kernel": platform.release(), "cpu_model": model, "cpus": os.cpu_count()}


def _table(result: dict) -> str:
    lines = [f"{'transport':<9} {'probe':<12} {'size':>8} {'MB/s':>10} {'M msg/s':>9} "
             f"{'p50 us':>8} {'p99 us':>8}   (MB = 1e6 bytes; latency = RTT/2; {result['process_model']})"]
    for row in result["rows"]:
        thr, lat = row.get("throughput"), row.get("latency")
        mbs = f"{thr['mb_per_sec']:>10.0f}" if thr else f"{'-':>10}"
        mps = f"{thr['msgs_per_sec'] / 1e6:>9.3f}" if thr else f"{'-':>9}"
        p50 = f"{lat['p50']:8.2f}" if lat else f"{'-':>8}"
        p99 = f"{lat['p99']:8.2f}" if lat else f"{'-':>8}"
        lines.append(f"{row['transport']:<9} {row['probe']:<12} {row['msg_size']:>8} {mbs} {mps} {p50} {p99}")
    return "\n".join(lines)


class CeilingError(Exception):
    """The probe could not run or gave an invalid result; `exit_code` says how it ended."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR):
        super().__init__(message)
        self.exit_code = exit_code


def probe_argv(probe: Path, **options: object) -> list[str]:
    """ceiling_probe's command line; options named as its flags (write_sizes -> --write-sizes)."""
    argv = [str(probe)]
    for name, value in options.items():
        if value is not None:
            argv += ["--" + name.replace("_", "-"), str(value)]
    return argv


def join_probe_lines(receiver: dict, sender: dict) -> dict:
    """One testbed.ceiling/2 result from a two-process run's two lines: throughput
    rows from the receiver (its clock), latency rows from the sender."""
    joined = {**receiver, "role": "joined", "rows": []}
    lat = {(r["transport"], r["msg_size"]): r.get("latency") for r in sender.get("rows", [])}
    for row in receiver.get("rows", []):
        joined["rows"].append({**row, "latency": lat.pop((row["transport"], row["msg_size"]), None)})
    for (transport, size), latency in lat.items():  # --mode lat: the receiver timed nothing
        probe = "tcp-nodelay" if transport == "tcp" else "unix-stream"
        joined["rows"].append({"transport": transport, "probe": probe, "msg_size": size, "throughput": None,
                               "latency": latency})
    joined["threads"] = ([{**t, "process": "receiver"} for t in receiver.get("threads", [])]
                         + [{**t, "process": "sender"} for t in sender.get("threads", [])])
    return joined


def _run_one(argv: list[str]) -> dict:
    run = run_bench(argv)
    if run.exit_code != EXIT_OK or run.result is None:
        raise CeilingError(f"ceiling_probe exited {run.exit_code}: {run.stderr.strip()}",
                           run.exit_code or EXIT_ERROR)
    return run.result


def _run_two_process(probe: Path, transport: str, options: dict) -> dict:
    ep = local_endpoints(transport)
    pair = run_two_process(probe_argv(probe, role="receiver", bind=ep.bind, **options),
                           probe_argv(probe, role="sender", connect=ep.connect, **options))
    for side in (pair.receiver, pair.sender):
        if side.exit_code != EXIT_OK or side.result is None:
            role = side.argv[side.argv.index("--role") + 1]
            raise CeilingError(f"ceiling_probe ({transport}, {role}) exited "
                               f"{side.exit_code}: {side.stderr.strip()}", side.exit_code or EXIT_ERROR)
    return join_probe_lines(pair.receiver.result, pair.sender.result)


def measure_ceiling(sizes: str = DEFAULT_SIZES, nbytes: int | None = None, lat_count: int | None = None,
                    lib: str = "libzmq-4.3.5", *, transports: str = DEFAULT_TRANSPORTS,
                    process_model: str = "one-process", **options: object) -> dict:
    """Runs ceiling_probe and returns its validated result plus `host`. `options`:
    pin_sender, pin_receiver, sndbuf, rcvbuf, write_sizes, io_waits, source_messages, mode
    (None = default)."""
    from testbed.toolchain.libraries import LibraryUnavailable, ensure_built
    try:
        build = ensure_built(lib)
    except LibraryUnavailable as exc:
        raise CeilingError(f"library unavailable: {exc}") from exc
    probe = build.bench_dir / "ceiling_probe"
    common = dict(options, sizes=sizes, bytes=nbytes, lat_count=lat_count)
    if process_model == "one-process":
        result = _run_one(probe_argv(probe, transports=transports, **common))
    else:
        result = None
        for transport in transports.split(","):
            part = (_run_two_process(probe, transport, common) if transport != "inproc"
                    else _run_one(probe_argv(probe, transports="inproc", **common)))
            result = part if result is None else {**result, "rows": result["rows"] + part["rows"]}
        result["process_model"] = process_model
    problems = validate.ceiling_problems(result)
    if problems:
        raise CeilingError("invalid ceiling_probe result: " + "; ".join(problems))
    return {**result, "host": _host()}


def main(args: argparse.Namespace) -> int:
    names = ("pin_sender", "pin_receiver", "sndbuf", "rcvbuf", "write_sizes", "io_waits", "source_messages",
             "mode")
    options = {k: getattr(args, k) for k in names}
    try:
        result = measure_ceiling(args.sizes, args.bytes, args.lat_count, args.lib, transports=args.transports,
                                 process_model=args.process_model, **options)
    except CeilingError as exc:
        print(f"testbed ceiling: {exc}", file=sys.stderr)
        return exc.exit_code
    print(json.dumps(result) if args.json else _table(result))
    return EXIT_OK
