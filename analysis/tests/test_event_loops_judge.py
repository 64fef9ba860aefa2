"""The event-loops suite's judge, from small hand-written program outputs (never a
live run): the oracle must pass every case, the library every case the oracle ran,
spurious wake-ups are compared with the oracle's, and the mapped library decides
whether an output counts at all."""
from __future__ import annotations

from testbed.suites import event_loops_judge as judge_mod

LIB = "/b/zlink/lib/libzmq.so.5.2.5"
ORACLE_LIB = "/b/libzmq/lib/libzmq.so.5.2.5"


def output(mapped: str, *cases: tuple[str, str, str, int]) -> str:
    lines = [f"mapped\t{mapped}"]
    lines += [f"{name}\t{transport}\t{verdict}\twakeups={spurious + 3} spurious={spurious}"
              for name, transport, verdict, spurious in cases]
    return "\n".join(lines) + "\n"


ORACLE = judge_mod.parse(output(ORACLE_LIB, ("arrival", "tcp", "ok", 2), ("event_loop", "ipc", "ok", 10)))


def test_parse_reads_cases_and_mapping_and_skips_other_lines():
    out = judge_mod.parse("noise\n" + output(LIB, ("arrival", "tcp", "FAIL: no event within 2000 ms", 0)))
    assert out.mapped == LIB
    assert out.cases == {("arrival", "tcp"): judge_mod.CaseResult("FAIL: no event within 2000 ms", 3, 0)}


def test_a_library_passes_what_the_oracle_passes():
    out = judge_mod.parse(output(LIB, ("arrival", "tcp", "ok", 0), ("event_loop", "ipc", "ok", 40)))
    verdict = judge_mod.judge(ORACLE, out, LIB)
    assert verdict.passed == ["arrival/tcp", "event_loop/ipc"] and verdict.failed == []


def test_a_failed_or_missing_case_fails():
    out = judge_mod.parse(output(LIB, ("arrival", "tcp", "FAIL: ZMQ_FD never became readable", 0)))
    verdict = judge_mod.judge(ORACLE, out, LIB)
    assert verdict.failed == ["arrival/tcp: FAIL: ZMQ_FD never became readable",
                              "event_loop/ipc: no result (the program stopped before it)"]


def test_spurious_wakeups_beyond_twice_the_oracles_plus_slack_fail():
    limit = judge_mod.SPURIOUS_FACTOR * 10 + judge_mod.SPURIOUS_SLACK
    at_limit = judge_mod.parse(output(LIB, ("arrival", "tcp", "ok", 0), ("event_loop", "ipc", "ok", limit)))
    over = judge_mod.parse(output(LIB, ("arrival", "tcp", "ok", 0), ("event_loop", "ipc", "ok", limit + 1)))
    assert judge_mod.judge(ORACLE, at_limit, LIB).failed == []
    assert judge_mod.judge(ORACLE, over, LIB).failed == [
        f"event_loop/ipc: {limit + 1} spurious wake-ups, libzmq 10 (limit {limit})"]
    assert judge_mod.spurious_note(ORACLE, over) == f"spurious wake-ups {limit + 1} (libzmq 12)"


def test_output_from_another_libzmq_counts_for_nothing():
    out = judge_mod.parse(output(ORACLE_LIB, ("arrival", "tcp", "ok", 0), ("event_loop", "ipc", "ok", 0)))
    verdict = judge_mod.judge(ORACLE, out, LIB)
    assert verdict.passed == [] and verdict.failed == [f"mapped {ORACLE_LIB}, not {LIB}"]


def test_the_oracle_fails_a_case_it_does_not_pass_and_an_empty_run():
    bad = judge_mod.parse(output(ORACLE_LIB, ("arrival", "tcp", "FAIL: no event", 0)))
    assert judge_mod.judge_oracle(bad, ORACLE_LIB).failed == [
        "arrival/tcp: FAIL: no event (the oracle fails it: a wrong test?)"]
    assert judge_mod.judge_oracle(judge_mod.parse(""), ORACLE_LIB).failed == [
        f"mapped no libzmq.so.5, not {ORACLE_LIB}"]
    nothing = judge_mod.parse(f"mapped\t{ORACLE_LIB}\n")
    assert judge_mod.judge_oracle(nothing, ORACLE_LIB).failed == ["no case ran"]
    empty = judge_mod.judge(nothing, ORACLE, ORACLE_LIB)
    assert empty.failed == ["the oracle ran no case: nothing to compare with"]
