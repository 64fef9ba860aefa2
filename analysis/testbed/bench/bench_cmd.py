"""`./testbed bench PATTERN --lib NAME --transport T --size N [...]`: run one bench
binary built against the named library and print its validated JSON line. With
`--process-model two-process` it starts a receiver and a sender process on this host
(fresh endpoints) and prints the two lines joined into one (role "joined")."""
from __future__ import annotations

import argparse
import json
import sys

from testbed.bench import validate
from testbed.bench.command import (
    BenchRun,
    bench_argv,
    binary_for,
    local_endpoints,
    role_argvs,
    run_bench,
    run_two_process,
)
from testbed.bench.patterns import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VERIFY,
    PATTERN_TRANSPORTS,
    PATTERNS,
    SPLIT_TRANSPORTS,
    normalise_pattern,
)


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is negative")
    return value


# argparse names passed to the binary as they are (testbed.bench.command spells the flags).
RUN_OPTIONS = ("count", "warmup", "lat_count", "lat_warmup", "io_threads", "hwm", "sndbuf", "rcvbuf",
               "timeout_ms", "mode", "pin_sender", "pin_receiver")


def _worse(receiver: BenchRun, sender: BenchRun) -> BenchRun:
    """Both processes' stderr is shown; the run counts as the first that failed
    (a verification failure before a timeout: the peer of a failed side gives up)."""
    sys.stderr.write(receiver.stderr + sender.stderr)
    failed = [r for r in (receiver, sender) if r.exit_code != EXIT_OK]
    failed.sort(key=lambda r: r.exit_code != EXIT_VERIFY)
    return failed[0] if failed else receiver


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pattern", help=f"one of {', '.join(PATTERNS)} (any case)")
    parser.add_argument("--lib", required=True, help="registered library name (see ./testbed libs)")
    parser.add_argument("--transport", required=True, choices=("tcp", "ipc", "inproc"))
    parser.add_argument("--size", required=True, type=_non_negative, help="message size in bytes")
    parser.add_argument("--count", type=_non_negative, help="measured messages (default: by size)")
    parser.add_argument("--warmup", type=_non_negative, help="uncounted messages first")
    parser.add_argument("--lat-count", type=_non_negative, help="measured round trips (default: by size)")
    parser.add_argument("--lat-warmup", type=_non_negative, help="uncounted round trips first")
    parser.add_argument("--io-threads", type=_non_negative,
                        help="ZMQ_IO_THREADS (default $BENCH_IO_THREADS or 1)")
    parser.add_argument("--hwm", type=_non_negative,
                        help="SNDHWM/RCVHWM, 0 = unlimited (default: not set, the library's own 1000)")
    parser.add_argument("--sndbuf", type=_non_negative, help="ZMQ_SNDBUF (default: OS default)")
    parser.add_argument("--rcvbuf", type=_non_negative, help="ZMQ_RCVBUF (default: OS default)")
    parser.add_argument("--timeout-ms", type=_non_negative, help="peer/progress timeout (default 10000)")
    parser.add_argument("--mode", choices=("thr", "lat", "both"), help="what to measure (default both)")
    parser.add_argument("--pin-sender", help="CPU list (taskset syntax) for the sending side")
    parser.add_argument("--pin-receiver", help="CPU list (taskset syntax) for the receiving side")
    parser.add_argument("--process-model", choices=("one-process", "two-process"), default="one-process",
                        help="two threads of one process (default), or a receiver and a sender process")
    parser.add_argument("--pretty", action="store_true", help="indent the JSON")


def main(args: argparse.Namespace) -> int:
    try:
        pattern = normalise_pattern(args.pattern)
    except ValueError as exc:
        print(f"testbed bench: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.transport not in PATTERN_TRANSPORTS[pattern]:
        print(f"testbed bench: {pattern} supports transport(s) {', '.join(PATTERN_TRANSPORTS[pattern])}, "
              f"not {args.transport!r}", file=sys.stderr)
        return EXIT_USAGE
    # Imported here: the library table pulls in the build machinery.
    from testbed.toolchain.libraries import LibraryUnavailable, ensure_built
    try:
        lib = ensure_built(args.lib)
    except LibraryUnavailable as exc:
        print(f"testbed bench: library unavailable: {exc}", file=sys.stderr)
        return EXIT_ERROR
    binary = binary_for(lib, pattern)
    if not binary.is_file():
        print(f"testbed bench: {binary} does not exist (bench build of {args.lib} incomplete?)",
              file=sys.stderr)
        return EXIT_ERROR
    options = {name: getattr(args, name) for name in RUN_OPTIONS}
    if args.process_model == "two-process":
        if args.transport not in SPLIT_TRANSPORTS:
            print(f"testbed bench: two-process runs need tcp or ipc, not {args.transport!r}", file=sys.stderr)
            return EXIT_USAGE
        endpoints = local_endpoints(args.transport)
        receiver, sender = role_argvs(binary, args.transport, args.size, endpoints, **options)
        pair = run_two_process(receiver, sender)
        run = _worse(pair.receiver, pair.sender)
        run.result = pair.result if run.exit_code == EXIT_OK else run.result
    else:
        run = run_bench(bench_argv(binary, args.transport, args.size, **options))
        sys.stderr.write(run.stderr)
    if run.exit_code not in (EXIT_OK, EXIT_VERIFY):
        return run.exit_code
    if run.result is None:
        print(f"testbed bench: {binary.name} exited {run.exit_code} without a JSON line", file=sys.stderr)
        return EXIT_ERROR
    print(json.dumps(run.result, indent=1 if args.pretty else None))
    if run.exit_code == EXIT_VERIFY:
        return EXIT_VERIFY
    problems = validate.bench_result_problems(
        run.result, pattern=pattern, transport=args.transport, msg_size=args.size,
        library=lib.info.get("name", lib.name),  # the build's name: zlink@REV's bench says zlink
        build_id=lib.info.get("build_id"), count=args.count, lat_count=args.lat_count)
    for problem in problems:
        print(f"testbed bench: invalid result: {problem}", file=sys.stderr)
    return EXIT_ERROR if problems else EXIT_OK
