"""Judging the event-loop cases (baselines/event-loops/) of one library against
libzmq 4.3.5's run of the same cases in the same `./testbed test`.

The programs print `case<TAB>transport<TAB>ok|FAIL: why<TAB>wakeups=N spurious=N`
per case and `mapped<TAB>path` once. Rules:
  - every case must hold on the oracle: one that does not is a wrong test (or a
    host in trouble), and the oracle's line fails so nobody reads zlink's as good;
  - every case the oracle ran must hold on the library under test;
  - spurious wake-ups are not specified by libzmq (it has some itself: a credit
    command while nothing is blocked), so they are compared, not asserted: the
    library fails a case when it has more than SPURIOUS_FACTOR times libzmq's
    plus SPURIOUS_SLACK (a fd left readable gives thousands in the same time);
  - the process must have mapped the library's own libzmq.so.5, or nothing it
    printed counts (a wrong loader path would test libzmq under zlink's name).
"""
from __future__ import annotations

from dataclasses import dataclass, field

SPURIOUS_FACTOR = 2
SPURIOUS_SLACK = 20


@dataclass(frozen=True)
class CaseResult:
    verdict: str  # "ok" or "FAIL: why"
    wakeups: int
    spurious: int


@dataclass
class Output:
    mapped: str = ""
    cases: dict[tuple[str, str], CaseResult] = field(default_factory=dict)


def parse(text: str) -> Output:
    out = Output()
    for line in text.splitlines():
        parts = line.split("\t")
        if parts[0] == "mapped" and len(parts) == 2:
            out.mapped = parts[1]
        elif len(parts) == 4:
            counts = dict(word.split("=", 1) for word in parts[3].split() if "=" in word)
            try:
                out.cases[(parts[0], parts[1])] = CaseResult(parts[2], int(counts["wakeups"]),
                                                             int(counts["spurious"]))
            except (KeyError, ValueError):
                continue
    return out


@dataclass
class Verdict:
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "case/transport: why"


def _name(key: tuple[str, str]) -> str:
    return f"{key[0]}/{key[1]}"


def judge_oracle(out: Output, expected_mapped: str) -> Verdict:
    verdict = Verdict()
    if out.mapped != expected_mapped:
        verdict.failed.append(f"mapped {out.mapped or 'no libzmq.so.5'}, not {expected_mapped}")
        return verdict
    if not out.cases:
        verdict.failed.append("no case ran")
    for key, result in sorted(out.cases.items()):
        if result.verdict == "ok":
            verdict.passed.append(_name(key))
        else:
            verdict.failed.append(f"{_name(key)}: {result.verdict} (the oracle fails it: a wrong test?)")
    return verdict


def judge(oracle: Output, out: Output, expected_mapped: str) -> Verdict:
    verdict = Verdict()
    if out.mapped != expected_mapped:
        verdict.failed.append(f"mapped {out.mapped or 'no libzmq.so.5'}, not {expected_mapped}")
        return verdict
    if not oracle.cases:
        verdict.failed.append("the oracle ran no case: nothing to compare with")
    for key, reference in sorted(oracle.cases.items()):
        result = out.cases.get(key)
        limit = SPURIOUS_FACTOR * reference.spurious + SPURIOUS_SLACK
        if result is None:
            verdict.failed.append(f"{_name(key)}: no result (the program stopped before it)")
        elif result.verdict != "ok":
            verdict.failed.append(f"{_name(key)}: {result.verdict}")
        elif result.spurious > limit:
            verdict.failed.append(f"{_name(key)}: {result.spurious} spurious wake-ups, libzmq "
                                  f"{reference.spurious} (limit {limit})")
        else:
            verdict.passed.append(_name(key))
    return verdict


def spurious_note(oracle: Output, out: Output) -> str:
    """'spurious wake-ups N (libzmq M)' summed over the cases both ran."""
    keys = oracle.cases.keys() & out.cases.keys()
    mine = sum(out.cases[k].spurious for k in keys)
    theirs = sum(oracle.cases[k].spurious for k in keys)
    return f"spurious wake-ups {mine} (libzmq {theirs})"
