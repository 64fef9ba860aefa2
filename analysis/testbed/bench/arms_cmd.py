"""`./testbed arms PATTERN --transport T --size N --arm LABEL=LIB[:VAR=VALUE,...] ...`:
one arms bench run by hand. Every arm (a registered library and the environment its
contexts are created with) lives in one process (or one process pair) and is
measured in short interleaved slices, in a random order per round, so all arms see
the host at the same moments. Prints a per-arm summary on stderr (the library paths
that were loaded, pooled throughput and latency, each arm's ratio to the first, the
counted work per message) and the validated JSON on stdout.

Arms of one library share one loaded copy (one namespace) unless --separate-copies
gives each arm its own (an A/A of two copies, e.g. libzmq against libzmq)."""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys

from testbed.bench import validate_arms
from testbed.bench.arms_binaries import ArmsUnavailable, arms_binary, shared_object
from testbed.bench.command import (
    COUNTER_MODES,
    Arm,
    ArmLib,
    annotate_arms,
    arms_argv,
    arms_role_argvs,
    local_endpoints,
    parse_arm,
    placement_pins,
    run_arms,
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

RUN_OPTIONS = ("rounds", "warmup_rounds", "slice_count", "slice_lat_count", "warmup", "lat_warmup", "seed",
               "counters", "io_threads", "hwm", "sndbuf", "rcvbuf", "timeout_ms", "mode")
# Counted work shown per message in the summary (when counted).
SUMMARY_COUNTERS = ("task_clock_ns", "cpu_time_ns", "syscalls", "context_switches", "instructions")


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is negative")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pattern", help=f"one of {', '.join(PATTERNS)} (any case)")
    parser.add_argument("--transport", required=True, choices=("tcp", "ipc", "inproc"))
    parser.add_argument("--size", required=True, type=_non_negative, help="message size in bytes")
    parser.add_argument("--arm", action="append", required=True, metavar="LABEL=LIB[:VAR=VALUE,...]",
                        help="an arm: a registered library (./testbed libs) and the environment set "
                             "while its contexts are created; repeat for each arm (at least one)")
    parser.add_argument("--separate-copies", action="store_true",
                        help="load a copy of the library per arm (default: one copy per library)")
    parser.add_argument("--rounds", type=_non_negative, help="measured rounds per kind (default 20)")
    parser.add_argument("--warmup-rounds", type=_non_negative, help="warm-up rounds first (default 1)")
    parser.add_argument("--slice-count", type=_non_negative, help="messages per throughput slice")
    parser.add_argument("--slice-lat-count", type=_non_negative, help="round trips per latency slice")
    parser.add_argument("--warmup", type=_non_negative, help="uncounted messages per throughput slice")
    parser.add_argument("--lat-warmup", type=_non_negative, help="uncounted round trips per latency slice")
    parser.add_argument("--seed", type=_non_negative, help="the order of the arms in each round")
    parser.add_argument("--counters", choices=COUNTER_MODES,
                        help="per-slice counted work (default auto: perf events, else getrusage)")
    parser.add_argument("--io-threads", type=_non_negative, help="ZMQ_IO_THREADS (default 1)")
    parser.add_argument("--hwm", type=_non_negative, help="SNDHWM/RCVHWM (default: the library's)")
    parser.add_argument("--sndbuf", type=_non_negative)
    parser.add_argument("--rcvbuf", type=_non_negative)
    parser.add_argument("--timeout-ms", type=_non_negative, help="peer/progress timeout (default 10000)")
    parser.add_argument("--mode", choices=("thr", "lat", "both"), help="what to measure (default both)")
    parser.add_argument("--placement", choices=("split", "one-core", "free"),
                        help="split: sender CPU 0, receiver CPU 1; one-core: both on CPU 0")
    parser.add_argument("--pin-sender", help="CPU list for the sending side (instead of --placement)")
    parser.add_argument("--pin-receiver", help="CPU list for the receiving side (instead of --placement)")
    parser.add_argument("--process-model", choices=("one-process", "two-process"), default="one-process")
    parser.add_argument("--pretty", action="store_true", help="indent the JSON")


class _Refused(Exception):
    """Bad input: exit 2 with this message."""


def _arms_and_libs(texts: list[str], separate: bool, say) -> tuple[list[Arm], list[ArmLib]]:
    """--arm texts -> arms over libraries, each library resolved to its built shared
    object through the library table (the paths are shown)."""
    from testbed.toolchain.libraries import LibraryUnavailable, check_name, find_built
    try:
        asked = [parse_arm(t) for t in texts]
    except ValueError as exc:
        raise _Refused(str(exc)) from None
    if len({a.label for a in asked}) != len(asked):
        raise _Refused(f"--arm labels repeat: {[a.label for a in asked]}")
    libs: dict[str, ArmLib] = {}
    arms = []
    for arm in asked:
        try:
            check_name(arm.lib)
        except LibraryUnavailable as exc:
            raise _Refused(f"--arm {arm.label}: {exc}") from None
        try:
            built = find_built(arm.lib, bench=False)
            path = shared_object(built)
        except (LibraryUnavailable, ArmsUnavailable) as exc:
            raise ArmsUnavailable(f"--arm {arm.label}: {exc}") from None
        label = f"{arm.label}.lib" if separate else arm.lib
        if label not in libs:
            libs[label] = ArmLib(label, str(path), built.name, built.info.get("build_id"))
            say(f"testbed arms: library {label}: {path} (build {built.info.get('build_id')})")
        arms.append(Arm(arm.label, label, arm.env))
    return arms, list(libs.values())


def _ratio_line(result: dict, first: str, label: str, kind: str, key: str) -> str:
    """Geometric mean of per-round ratios (arm / first arm) and their sd(log)."""
    arms = [a["label"] for a in result["arms"]]
    logs = []
    for rnd in result["rounds"]:
        if rnd["warmup"] or rnd["kind"] != kind:
            continue
        by_arm = {arms[s["arm"]]: s for s in rnd["slices"]}
        a, b = by_arm[label].get(key), by_arm[first].get(key)
        if a and b:
            logs.append(math.log(b / a) if kind == "thr" else math.log(a / b))
    if len(logs) < 2:
        return ""
    what = "throughput" if kind == "thr" else "p50"
    return (f"{what} {math.exp(statistics.fmean(logs)):.3f}x of {first} "
            f"(per-round sd(log) {100 * statistics.stdev(logs):.1f}%, {len(logs)} rounds)")


def summary(result: dict) -> str:
    pooled = validate_arms.pooled(result)
    first = result["arms"][0]["label"]
    lines = [f"{result['pattern']} {result['transport']} {result['msg_size']} B, "
             f"{result['settings']['arms']['rounds']} rounds, throughput timed by "
             f"{validate_arms.slice_seconds_key(result)}, counters: {result['counters']['source']}"]
    for arm in result["arms"]:
        p = pooled[arm["label"]]
        env = ",".join(f"{k}={v}" for k, v in arm["env"].items()) or "default environment"
        lines.append(f"  {arm['label']}: {arm['library'].get('registered_name') or arm['library']['name']} "
                     f"({env}) from {arm['library']['loaded_from']}")
        parts = []
        if p["msgs_per_sec"]:
            parts.append(f"thr {p['msgs_per_sec'] / 1e6:.3f} M msg/s")
        if p["p50_us"] is not None:
            parts.append(f"RTT/2 p50 {p['p50_us']:.2f} us p99 {p['p99_us']:.2f} us")
        work = [f"{k} {p['per_message'][k]:.3g}/msg" for k in SUMMARY_COUNTERS if k in p["per_message"]]
        lines.append("    " + "; ".join(parts + work))
        if arm["label"] != first:
            for kind, key in (("thr", validate_arms.slice_seconds_key(result)), ("lat", "p50")):
                text = _ratio_line(result, first, arm["label"], kind, key)
                if text:
                    lines.append(f"    {text}")
    lines.append("  (one run: the spread above is within the run; runs differ by more, "
                 "so compare arms over several runs)")
    return "\n".join(lines)


def _options(args: argparse.Namespace) -> dict:
    options = {name: getattr(args, name) for name in RUN_OPTIONS}
    if args.placement:
        if args.pin_sender or args.pin_receiver:
            raise _Refused("give --placement or --pin-sender/--pin-receiver, not both")
        options.update(placement_pins(args.placement, sorted(os.sched_getaffinity(0))))
    else:
        options.update(pin_sender=args.pin_sender, pin_receiver=args.pin_receiver)
    return options


def main(args: argparse.Namespace) -> int:
    try:
        pattern = normalise_pattern(args.pattern)
        if args.transport not in PATTERN_TRANSPORTS[pattern]:
            raise _Refused(f"{pattern} supports transport(s) {', '.join(PATTERN_TRANSPORTS[pattern])}, "
                           f"not {args.transport!r}")
        if args.process_model == "two-process" and args.transport not in SPLIT_TRANSPORTS:
            raise _Refused(f"two-process runs need tcp or ipc, not {args.transport!r}")
        arms, libs = _arms_and_libs(args.arm, args.separate_copies, lambda m: print(m, file=sys.stderr))
        options = _options(args)
        binary = arms_binary(pattern)
    except (ValueError, _Refused) as exc:
        print(f"testbed arms: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ArmsUnavailable as exc:
        print(f"testbed arms: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if args.process_model == "two-process":
        receiver, sender = arms_role_argvs(binary, args.transport, args.size, local_endpoints(args.transport),
                                           libs, arms, **options)
        run = run_arms(receiver_argv=receiver, sender_argv=sender)
        procs = [run.receiver, run.sender]
    else:
        run = run_arms(arms_argv(binary, args.transport, args.size, libs, arms, **options))
        procs = [run.one]
    for proc in procs:
        sys.stderr.write(proc.stderr)
    failed = sorted((p for p in procs if p.exit_code != EXIT_OK), key=lambda p: p.exit_code != EXIT_VERIFY)
    if failed:
        if failed[0].result is not None:
            print(json.dumps(failed[0].result, indent=1 if args.pretty else None))
        return failed[0].exit_code if failed[0].exit_code > 0 else EXIT_ERROR
    result = annotate_arms(run.result, libs)
    problems = validate_arms.arms_result_problems(
        result, pattern=pattern, transport=args.transport, msg_size=args.size,
        arms=[a.label for a in arms], rounds=args.rounds, slice_count=args.slice_count or None,
        slice_lat_count=args.slice_lat_count or None)
    print(json.dumps(result, indent=1 if args.pretty else None))
    print(summary(result), file=sys.stderr)
    for problem in problems:
        print(f"testbed arms: invalid result: {problem}", file=sys.stderr)
    return EXIT_ERROR if problems else EXIT_OK
