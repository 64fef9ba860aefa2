"""`./testbed ceiling`: the host's physical limits per message size (raw TCP loopback
and Unix-domain stream throughput and RTT/2, memcpy bandwidth), measured by the
ceiling_probe binary that is built with the bench harness. Rows are keyed by
(transport, msg_size) so reports can show each library as a share of them."""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from testbed.bench import validate
from testbed.bench.command import run_bench
from testbed.bench.patterns import EXIT_ERROR, EXIT_OK

DEFAULT_SIZES = "64,1024,65536,262144"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help=f"comma-separated message sizes (default {DEFAULT_SIZES})")
    parser.add_argument("--bytes", type=int, help="bytes per bandwidth probe (default 256 MiB)")
    parser.add_argument("--lat-count", type=int, help="round trips per latency probe (default 2000)")
    parser.add_argument("--lib", default="libzmq-4.3.5",
                        help="whose bench build holds ceiling_probe (the probe itself uses no library)")
    parser.add_argument("--json", action="store_true", help="print the JSON (schema testbed.ceiling/1)")


def _host() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return {"kernel": platform.release(), "cpu_model": model, "cpus": os.cpu_count()}


def _table(result: dict) -> str:
    lines = [f"{'transport':<9} {'probe':<21} {'size':>8} {'MB/s':>10} {'M msg/s':>9} "
             f"{'p50 us':>8} {'p99 us':>8}   (MB = 1e6 bytes; latency = RTT/2)"]
    for row in result["rows"]:
        thr, lat = row["throughput"], row.get("latency")
        p50 = f"{lat['p50']:8.2f}" if lat else f"{'-':>8}"
        p99 = f"{lat['p99']:8.2f}" if lat else f"{'-':>8}"
        lines.append(f"{row['transport']:<9} {row['probe']:<21} {row['msg_size']:>8} {thr['mb_per_sec']:>10.0f} "
                     f"{thr['msgs_per_sec'] / 1e6:>9.3f} {p50} {p99}")
    return "\n".join(lines)


class CeilingError(Exception):
    """The probe could not run or gave an invalid result; `exit_code` says how it ended."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR):
        super().__init__(message)
        self.exit_code = exit_code


def measure_ceiling(sizes: str = DEFAULT_SIZES, nbytes: int | None = None, lat_count: int | None = None,
                    lib: str = "libzmq-4.3.5") -> dict:
    """Runs ceiling_probe and returns its validated result plus `host` (for reports
    that join library results with the ceiling on (transport, msg_size))."""
    from testbed.toolchain.libraries import LibraryUnavailable, ensure_built
    try:
        build = ensure_built(lib)
    except LibraryUnavailable as exc:
        raise CeilingError(f"library unavailable: {exc}") from exc
    argv = [str(build.bench_dir / "ceiling_probe"), "--sizes", sizes]
    if nbytes is not None:
        argv += ["--bytes", str(nbytes)]
    if lat_count is not None:
        argv += ["--lat-count", str(lat_count)]
    run = run_bench(argv)
    if run.exit_code != EXIT_OK or run.result is None:
        raise CeilingError(f"ceiling_probe exited {run.exit_code}: {run.stderr.strip()}", run.exit_code or EXIT_ERROR)
    problems = validate.ceiling_problems(run.result)
    if problems:
        raise CeilingError("invalid ceiling_probe result: " + "; ".join(problems))
    return {**run.result, "host": _host()}


def main(args: argparse.Namespace) -> int:
    try:
        result = measure_ceiling(args.sizes, args.bytes, args.lat_count, args.lib)
    except CeilingError as exc:
        print(f"testbed ceiling: {exc}", file=sys.stderr)
        return exc.exit_code
    print(json.dumps(result) if args.json else _table(result))
    return EXIT_OK
