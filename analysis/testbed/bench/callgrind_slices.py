"""Instructions per message per arm, from a callgrind run of an arms bench.

bench_arms_<pattern> zeroes callgrind's counts when a slice starts and dumps them when
it ends, labelled `arms arm=1 label=16k kind=thr round=3 warmup=0 count=N messages=M
role=both` (bench/arms/valgrind_marks.hpp). Run it under
`valgrind --tool=callgrind --callgrind-out-file=DIR/callgrind.out.%p ...`; every
slice becomes one file DIR/callgrind.out.<pid>.<n> whose `totals:` line holds the
instructions the whole process executed during that slice (all threads: the
harness's sides and the library's IO threads). Messages include each slice's
warm-up messages, which its instructions cover too. In a two-process run each
process dumps its own slices; they are added per slice.

    python -m testbed.bench.callgrind_slices DIR_OR_FILES...   a table per arm and kind
"""
from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

LABEL_PREFIX = "desc: Trigger: Client Request: arms "


@dataclass(frozen=True)
class SliceDump:
    arm: int
    label: str
    kind: str
    round: int
    warmup: bool
    messages: int
    role: str
    instructions: int
    path: Path


def _fields(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split() if "=" in item)


def read_dump(path: Path) -> SliceDump | None:
    """One dump file; None when it is not a slice's dump (e.g. the dump at exit)."""
    label, events, totals = None, None, None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(LABEL_PREFIX):
                label = _fields(line[len(LABEL_PREFIX):])
            elif line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:"):
                totals = [int(x) for x in line.split()[1:]]
    if label is None:
        return None
    if totals is None or events is None or "Ir" not in events:
        raise ValueError(f"{path}: a slice dump without an Ir total")
    return SliceDump(int(label["arm"]), label["label"], label["kind"], int(label["round"]),
                     label["warmup"] == "1", int(label["messages"]), label["role"],
                     totals[events.index("Ir")], path)


def read_dumps(paths: list[Path]) -> list[SliceDump]:
    files: list[Path] = []
    for p in paths:
        files += sorted(p.glob("callgrind.out.*")) if p.is_dir() else [p]
    return [d for d in (read_dump(f) for f in files) if d is not None]


@dataclass(frozen=True)
class PerMessage:
    arm: int
    label: str
    kind: str
    slices: int
    messages: int
    instructions: int
    per_slice: tuple[float, ...]  # instructions per message of each slice (processes added)

    @property
    def per_message(self) -> float:
        return self.instructions / self.messages


def per_message(dumps: list[SliceDump], include_warmup: bool = False) -> list[PerMessage]:
    """Per (arm, kind): measured slices' instructions / messages. A slice's dumps from
    the two processes of a run (roles receiver and sender) are added."""
    slices: dict[tuple, list[SliceDump]] = {}
    for d in dumps:
        if d.warmup and not include_warmup:
            continue
        slices.setdefault((d.arm, d.label, d.kind, d.round), []).append(d)
    grouped: dict[tuple, list[tuple[int, int]]] = {}
    for (arm, label, kind, _), parts in slices.items():
        grouped.setdefault((arm, label, kind), []).append(
            (sum(p.instructions for p in parts), parts[0].messages))
    return [PerMessage(arm, label, kind, len(v), sum(m for _, m in v), sum(i for i, _ in v),
                       tuple(i / m for i, m in v))
            for (arm, label, kind), v in sorted(grouped.items())]


def table(rows: list[PerMessage]) -> str:
    out = [f"{'arm':<16} {'kind':<4} {'slices':>6} {'instructions/msg':>17} {'min':>10} {'max':>10}"]
    for r in rows:
        unit = "msg" if r.kind == "thr" else "round trip"
        out.append(f"{r.label:<16} {r.kind:<4} {r.slices:>6} {r.per_message:>17,.0f} "
                   f"{min(r.per_slice):>10,.0f} {max(r.per_slice):>10,.0f}   (per {unit})")
    if rows and any(len(r.per_slice) > 1 for r in rows):
        spread = max(statistics.pstdev(r.per_slice) / r.per_message for r in rows if len(r.per_slice) > 1)
        out.append(f"largest slice-to-slice sd: {100 * spread:.2f}% of the mean")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.bench.callgrind_slices", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path, help="callgrind dump files, or directories of them")
    parser.add_argument("--include-warmup", action="store_true", help="count the warm-up rounds' slices too")
    args = parser.parse_args(argv)
    try:
        rows = per_message(read_dumps(args.paths), args.include_warmup)
    except (OSError, ValueError, KeyError) as exc:
        print(f"callgrind_slices: {exc}", file=sys.stderr)
        return 1
    if not rows:
        print("callgrind_slices: no slice dumps found (was the run under callgrind, with the client "
              "requests compiled in: counters.callgrind.compiled?)", file=sys.stderr)
        return 1
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
