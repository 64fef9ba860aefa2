"""`profile`: deterministic per-message costs of one bench pattern, per library.

Wall-clock numbers on a shared, loaded host say little; instruction counts and
syscall counts do. For every (library, transport, size) cell this runs the bench
binary twice, with `count` and `2*count` measured messages (same warm-up), and
reports the difference divided by `count`, so start-up, handshake and shutdown
cancel out:

- callgrind (`--what callgrind`): instructions per message, split into the
  library's own code, libc/libstdc++ called from the library (malloc, memcpy,
  syscall wrappers), the harness (bench binary + what it calls), and the rest
  (thread start, loader). Also per-function inclusive costs per message.
  Caveat: valgrind runs one thread at a time, so queues can grow deeper than in
  a native run and batching may look better than it is.
- perf tracepoints (`--what syscalls`): syscalls per message by name, native
  speed (median of `--reps` repetitions: batching depends on scheduling).
- strace -y (`--what strace`): read/write-like calls split by the kind of file
  descriptor (socket vs eventfd), which the tracepoint counts cannot tell apart.

Not registered in cli.py yet; run as
`.venv/bin/python -m testbed.bench.profile_cmd --libs libzmq-4.3.5,zlink ...`.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from testbed.bench.command import bench_argv, binary_for
from testbed.bench.patterns import PATTERN_TRANSPORTS, normalise_pattern
from testbed.toolchain import tracefs

LARGE = 16384  # sizes from here on use --count-large
# Objects that are neither the library nor the harness: their cost is charged to
# whichever of those two called them.
SYSTEM_OBJECT = re.compile(r"/(libc|libstdc\+\+|libm|libgcc_s|ld-linux[^/]*|libpthread)\.so")
SYSCALLS_OF_INTEREST = ("read", "write", "readv", "writev", "recvfrom", "sendto", "recvmsg", "sendmsg",
                        "epoll_wait", "epoll_pwait", "epoll_ctl", "poll", "ppoll", "futex", "sched_yield")
THREAD_ROOTS = ("start_thread", "clone", "clone3", "execute_native_thread_routine", "(below main)")


# ---------------------------------------------------------------- callgrind files

@dataclass
class CallgrindProfile:
    total: int = 0
    self_cost: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))  # (obj, fn) -> Ir
    # (caller obj, caller fn, callee obj, callee fn) -> inclusive Ir of those calls
    calls: dict[tuple[str, str, str, str], int] = field(default_factory=lambda: defaultdict(int))

    def inclusive(self) -> dict[tuple[str, str], int]:
        """Self plus every outgoing call (recursive calls make this an overestimate,
        as in callgrind_annotate --inclusive=yes)."""
        out = defaultdict(int, self.self_cost)
        for (cob, cfn, _tob, _tfn), cost in self.calls.items():
            out[(cob, cfn)] += cost
        return out


def parse_callgrind(path: Path) -> CallgrindProfile:
    """Reads a callgrind.out file written with one event (Ir), string compression
    on or off, one part (no --dump-every). Only what this module needs."""
    prof = CallgrindProfile()
    names: dict[str, dict[str, str]] = {"ob": {}, "fn": {}}
    n_positions = 1
    ob = fn = ""
    callee_ob: str | None = None
    callee_fn: str | None = None
    pending_call = False

    def resolve(kind: str, value: str) -> str:
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", value)
        if not m:
            return value
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), value)

    with open(path, encoding="utf-8", errors="replace") as fh:
        for raw in fh:
            line = raw.rstrip("\n")
            if not line or line[0] == "#":
                continue
            if line[0].isdigit() or line[0] in "+-*":
                fields = line.split()
                cost = int(fields[n_positions]) if len(fields) > n_positions else 0
                if pending_call:
                    prof.calls[(ob, fn, callee_ob or ob, callee_fn or "?")] += cost
                    pending_call, callee_ob, callee_fn = False, None, None
                else:
                    prof.self_cost[(ob, fn)] += cost
                continue
            key, _, value = line.partition("=")
            if key == "ob":
                ob = resolve("ob", value)
            elif key == "fn":
                fn = resolve("fn", value)
            elif key == "cob":
                callee_ob = resolve("ob", value)
            elif key == "cfn":
                callee_fn = resolve("fn", value)
            elif key == "calls":
                pending_call = True
            elif line.startswith("positions:"):
                n_positions = len(line.split(":", 1)[1].split())
            elif line.startswith("totals:") or line.startswith("summary:"):
                prof.total = max(prof.total, int(line.split(":", 1)[1].split()[0]))
    if not prof.total:
        prof.total = sum(prof.self_cost.values())
    return prof


def split_by_owner(prof: CallgrindProfile, lib_object: re.Pattern, harness_object: str) -> dict[str, int]:
    """Instructions charged to: the library's own code (lib_self), system code it
    called (lib_sys: malloc, memcpy, syscall wrappers...), the harness likewise, and
    system code nobody of the two called (thread start, loader: 'unattributed').
    A system function's own cost is shared among its callers in proportion to the
    inclusive cost of each call arc, walking up through system callers (operator
    new -> malloc), so nothing is counted twice even when system code calls back
    into the library (thread entry, lazy PLT binding)."""
    def owner(obj: str) -> str:
        if lib_object.search(obj):
            return "lib"
        if obj == harness_object:
            return "harness"
        return "system"

    callers: dict[tuple[str, str], list[tuple[tuple[str, str], int]]] = defaultdict(list)
    for (cob, cfn, tob, tfn), cost in prof.calls.items():
        if (cob, cfn) != (tob, tfn):
            callers[(tob, tfn)].append(((cob, cfn), cost))
    memo: dict[tuple[str, str], dict[str, float]] = {}

    def shares(fn_key: tuple[str, str], active: frozenset) -> dict[str, float]:
        if fn_key in memo:
            return memo[fn_key]
        arcs = [(c, w) for c, w in callers.get(fn_key, []) if c not in active]
        weight = sum(w for _c, w in arcs)
        if not weight:
            return {"unattributed": 1.0}
        dist: dict[str, float] = defaultdict(float)
        for caller, w in arcs:
            who = owner(caller[0])
            parts = {who: 1.0} if who != "system" else shares(caller, active | {fn_key})
            for k, v in parts.items():
                dist[k] += v * w / weight
        memo[fn_key] = dict(dist)
        return memo[fn_key]

    out: dict[str, float] = defaultdict(float)
    for key, cost in prof.self_cost.items():
        who = owner(key[0])
        if who != "system":
            out[f"{who}_self"] += cost
            continue
        for k, v in shares(key, frozenset()).items():
            out["system_unattributed" if k == "unattributed" else f"{k}_sys"] += cost * v
    out = {k: int(round(v)) for k, v in out.items()}
    out["total"] = prof.total
    return out


# ---------------------------------------------------------------- runners

def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, **kw)
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip().splitlines()[-3:]
        raise RuntimeError(f"{' '.join(argv[:6])}... exited {proc.returncode}: {' | '.join(tail)}")
    return proc


def run_callgrind(bench: list[str], out_file: Path) -> CallgrindProfile:
    _run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *bench])
    return parse_callgrind(out_file)


def run_perf_syscalls(bench: list[str]) -> dict[str, int]:
    _, why_not = tracefs.ensure()  # perf resolves `syscalls:` events through tracefs
    if why_not:
        raise RuntimeError(f"perf cannot count the syscall tracepoints: {why_not}")
    events = ",".join(f"syscalls:sys_enter_{name}" for name in SYSCALLS_OF_INTEREST)
    proc = _run(["perf", "stat", "-x", ",", "-e", events, *bench])
    counts = {}
    for line in proc.stderr.splitlines():
        parts = line.split(",")
        if len(parts) > 3 and parts[2].startswith("syscalls:sys_enter_"):
            name = parts[2].removeprefix("syscalls:sys_enter_")
            counts[name] = int(parts[0]) if parts[0].isdigit() else 0
    return counts


_STRACE_LINE = re.compile(r"^\d+\s+(\w+)\((\d+)<([^>]*)>")


def run_strace(bench: list[str], log: Path) -> dict[str, int]:
    """Counts by 'syscall:fdkind' (fdkind = TCP, UNIX, eventfd, ...)."""
    _run(["strace", "-f", "-qq", "-y", "-o", str(log),
          "-e", "trace=read,write,readv,writev,recvfrom,sendto,recvmsg,sendmsg", *bench])
    counts: dict[str, int] = defaultdict(int)
    for line in log.read_text(errors="replace").splitlines():
        m = _STRACE_LINE.match(line)
        if m:
            kind = m.group(3)
            kind = "eventfd" if "eventfd" in kind else kind.split(":")[0] or "other"
            counts[f"{m.group(1)}:{kind}"] += 1
    return dict(counts)


def per_message(small: dict[str, int], big: dict[str, int], count: int) -> dict[str, float]:
    return {k: (big.get(k, 0) - small.get(k, 0)) / count for k in sorted(set(small) | set(big))}


# ---------------------------------------------------------------- command

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--libs", default="libzmq-4.3.5,zlink", help="comma-separated registered libraries")
    parser.add_argument("--pattern", default="PAIR")
    parser.add_argument("--cells", default="tcp:64,tcp:1024,tcp:65536,tcp:262144,ipc:64,ipc:1024,ipc:65536,"
                        "inproc:64,inproc:1024,inproc:65536", help="transport:size,... ")
    parser.add_argument(
        "--what", default="callgrind,syscalls,strace", help="any of callgrind,syscalls,strace"
    )
    parser.add_argument(
        "--count-small", type=int, default=20000, help=f"count below {LARGE} B (runs N and 2N)"
    )
    parser.add_argument("--count-large", type=int, default=500, help=f"count from {LARGE} B")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--reps", type=int, default=3, help="perf repetitions (median)")
    parser.add_argument("--top", type=int, default=15, help="functions kept per cell")
    parser.add_argument("--out", type=Path, required=True, help="directory for JSON + callgrind files")


def _cells(text: str, pattern: str) -> list[tuple[str, int]]:
    cells = []
    for item in text.split(","):
        transport, _, size = item.strip().partition(":")
        if transport not in PATTERN_TRANSPORTS[pattern] or not size.isdigit():
            raise ValueError(f"bad cell {item!r}; want transport:size with transport in "
                             f"{', '.join(PATTERN_TRANSPORTS[pattern])}")
        cells.append((transport, int(size)))
    return cells


def main(args: argparse.Namespace) -> int:
    try:
        pattern = normalise_pattern(args.pattern)
        cells = _cells(args.cells, pattern)
    except ValueError as exc:
        print(f"testbed profile: {exc}", file=sys.stderr)
        return 2
    what = set(args.what.split(","))
    if not what <= {"callgrind", "syscalls", "strace"}:
        print(
            f"testbed profile: bad --what {args.what!r}; allowed: callgrind, syscalls, strace",
            file=sys.stderr,
        )
        return 2
    for tool, needed in (("valgrind", "callgrind"), ("perf", "syscalls"), ("strace", "strace")):
        if needed in what and not shutil.which(tool):
            print(f"testbed profile: {tool} not found (needed for --what {needed})", file=sys.stderr)
            return 1
    from testbed.toolchain.libraries import LibraryUnavailable, find_built
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for name in args.libs.split(","):
        try:
            lib = find_built(name)
        except LibraryUnavailable as exc:
            print(f"testbed profile: {exc}", file=sys.stderr)
            return 1
        binary = binary_for(lib, pattern)
        lib_object = re.compile(r"/lib(zmq|zlink|sodium)\.so")
        for transport, size in cells:
            count = args.count_large if size >= LARGE else args.count_small
            row = {"library": name, "build_id": lib.info.get("build_id"), "pattern": pattern,
                   "transport": transport, "msg_size": size, "count": count, "warmup": args.warmup}

            # This cell's binary, transport and size bound now (B023), not looked up at call time.
            def argv(n: int, timeout: int = 10000,
                     binary=binary, transport=transport, size=size) -> list[str]:
                return bench_argv(binary, transport, size, count=n, warmup=args.warmup, mode="thr",
                                  timeout_ms=timeout)
            row["argv_N"] = argv(count)
            tag = f"{name}.{pattern}.{transport}.{size}"
            print(f"profile {tag} count {count}/{2 * count}", file=sys.stderr)
            if "callgrind" in what:
                profs = [run_callgrind(argv(n, 120000), args.out / f"callgrind.{tag}.{n}.out")
                         for n in (count, 2 * count)]
                splits = [split_by_owner(p, lib_object, str(binary.resolve())) for p in profs]
                row["instr_per_msg"] = per_message(splits[0], splits[1], count)
                incl = [{f"{o}|{f}": c for (o, f), c in p.inclusive().items()} for p in profs]
                per_fn = per_message(incl[0], incl[1], count)
                row["inclusive_per_msg"] = dict(sorted(
                    ((k, v) for k, v in per_fn.items() if k.split("|", 1)[1] not in THREAD_ROOTS),
                    key=lambda kv: -kv[1])[:args.top])
                selfs = [{f"{o}|{f}": c for (o, f), c in p.self_cost.items()} for p in profs]
                row["self_per_msg"] = dict(sorted(per_message(selfs[0], selfs[1], count).items(),
                                                  key=lambda kv: -kv[1])[:args.top])
            if "syscalls" in what:
                reps = [[run_perf_syscalls(argv(n)) for n in (count, 2 * count)] for _ in range(args.reps)]
                per_rep = [per_message(a, b, count) for a, b in reps]
                row["syscalls_per_msg"] = {k: statistics.median(r.get(k, 0.0) for r in per_rep)
                                           for k in per_rep[0]}
                row["syscalls_per_msg_reps"] = per_rep
            if "strace" in what:
                with tempfile.TemporaryDirectory() as tmp:
                    counts = [run_strace(argv(n, 60000), Path(tmp) / f"s{n}") for n in (count, 2 * count)]
                row["strace_per_msg"] = per_message(counts[0], counts[1], count)
            results.append(row)
            with open(args.out / "profile.jsonl", "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
    return 0


# ---------------------------------------------------------------- rendering

def _short(fn: str, width: int = 90) -> str:
    fn = re.sub(r"\(.*\)( const)?$", "()", fn) if len(fn) > width else fn
    return fn if len(fn) <= width else fn[:width - 3] + "..."


def render_markdown(rows: list[dict], reference: str, subject: str) -> str:
    """Comparison tables of `subject` against `reference` from profile.jsonl rows."""
    by = {(r["library"], r["transport"], r["msg_size"]): r for r in rows}
    cells = sorted({(r["transport"], r["msg_size"]) for r in rows},
                   key=lambda c: (("tcp", "ipc", "inproc").index(c[0]), c[1]))
    lines = []
    if any("instr_per_msg" in r for r in rows):
        lines += ["| transport | size | instr/msg ref | instr/msg subj | ratio | lib self ref/subj | "
                  "lib->libc ref/subj | harness ref/subj |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for t, s in cells:
            a, b = by.get((reference, t, s), {}), by.get((subject, t, s), {})
            ia, ib = a.get("instr_per_msg"), b.get("instr_per_msg")
            if not ia or not ib:
                continue
            def h(d: dict) -> float:
                return d["harness_self"] + d["harness_sys"]
            lines.append(
                f"| {t} | {s} | {ia['total']:,.0f} | {ib['total']:,.0f} | {ib['total'] / ia['total']:.2f} | "
                f"{ia['lib_self']:,.0f} / {ib['lib_self']:,.0f} | "
                f"{ia['lib_sys']:,.0f} / {ib['lib_sys']:,.0f} | "
                f"{h(ia):,.0f} / {h(ib):,.0f} |"
            )
    if any("syscalls_per_msg" in r for r in rows):
        names = sorted({k for r in rows for k, v in r.get("syscalls_per_msg", {}).items() if abs(v) >= 0.001})
        lines += [
            "",
            "| transport | size | "
            + " | ".join(f"{n} ref/subj" for n in names)
            + " | total ref/subj | ratio |",
            "|---|---:|" + "---:|" * (len(names) + 2),
        ]
        for t, s in cells:
            a = by.get((reference, t, s), {}).get("syscalls_per_msg")
            b = by.get((subject, t, s), {}).get("syscalls_per_msg")
            if not a or not b:
                continue
            ta, tb = sum(a.values()), sum(b.values())
            ratio = f"{tb / ta:.2f}" if ta > 0.0005 else "n/a"
            lines.append(
                f"| {t} | {s} | "
                + " | ".join(f"{a.get(n, 0):.3f} / {b.get(n, 0):.3f}" for n in names)
                + f" | {ta:.3f} / {tb:.3f} | {ratio} |"
            )
    return "\n".join(lines) + "\n"


def render_functions(row: dict, key: str = "inclusive_per_msg", n: int = 10) -> str:
    lines = ["| instr/msg | object | function |", "|---:|---|---|"]
    for name, cost in list(row.get(key, {}).items())[:n]:
        obj, _, fn = name.partition("|")
        lines.append(f"| {cost:,.0f} | {Path(obj).name} | `{_short(fn)}` |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    _parser = argparse.ArgumentParser(prog="testbed profile", description=__doc__.splitlines()[0])
    add_arguments(_parser)
    sys.exit(main(_parser.parse_args()))
