"""`./testbed setup`: install missing host tools (root on Debian/Ubuntu), then fetch,
verify and build the baselines, zlink, and bench/ against every library. Everything
is cached by build key: a second run does no work."""
from __future__ import annotations

import argparse
import time

from testbed.toolchain import bench_build, libraries, pins, system, tracefs
from testbed.toolchain.build_all import build_everything
from testbed.toolchain.progress import Progress


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-install", action="store_true",
                        help="only check host tools and name what is missing; never run apt-get")
    parser.add_argument("--lib", action="append", choices=libraries.registered_names(), metavar="NAME",
                        help="build only this library (repeatable); default: all registered")
    parser.add_argument("--no-bench", action="store_true", help="do not build bench/")


def main(args: argparse.Namespace) -> int:
    started = time.monotonic()
    progress = Progress()
    progress.step("host tools")
    still_missing = system.ensure_all(progress, install=not args.no_install)
    mounted, why_not = tracefs.ensure()
    if mounted or why_not:  # counting runs count system calls only with it (no failure: runs say so too)
        progress.say(f"    syscall tracepoints: {why_not or f'mounted tracefs at {tracefs.MOUNT_POINT}'}")
    progress.step("pins")
    try:
        pin = pins.load()
    except pins.PinsError as exc:
        progress.say(f"    {exc}")
        return 1
    progress.say(f"    libzmq {pin['libzmq']['version']} {pin['libzmq']['nar_hash']}")
    progress.step("libraries" + ("" if args.no_bench or bench_build.missing_reason() else " and bench"))
    if not args.no_bench and bench_build.missing_reason():
        progress.say(f"    bench build skipped: {bench_build.missing_reason()}")
    outcomes = build_everything(progress, args.lib, bench=not args.no_bench)
    for outcome in outcomes:
        # First line only: a failure's log tail was already shown where it happened.
        progress.say(
            f"    {'ok  ' if outcome.ok else 'FAIL'} {outcome.name}: {outcome.detail.splitlines()[0]}"
        )
    failed = [o.name for o in outcomes if not o.ok]
    seconds = time.monotonic() - started
    if failed or still_missing:
        tools = ", ".join(getattr(r, "package", None) or r.crate for r in still_missing)
        problems = ([f"failed: {', '.join(failed)}"] if failed else []) + (
            [f"missing host tools: {tools}"] if still_missing else [])
        progress.say(f"setup incomplete ({'; '.join(problems)}) in {seconds:.1f} s")
        return 1
    progress.say(f"setup done in {seconds:.1f} s")
    return 0
