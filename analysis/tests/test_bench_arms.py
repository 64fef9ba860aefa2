"""The arms bench (bench/arms/, testbed.bench.command's arms builder and join,
testbed.bench.validate_arms, testbed.bench.callgrind_slices, `./testbed arms`).

Fast tests use the argv builder, the join and the validator on recorded lines
(fixtures/arms/: a one-process run and the two role lines of a two-process run of
bench_arms_pair with three arms, 2 rounds of tiny slices; regenerate them with the
command in fixtures/arms/README.md when the schema changes). The slow tests run the
real binaries on the real libraries, a few seconds in all."""
from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest

from testbed import cli
from testbed.bench import callgrind_slices
from testbed.bench.command import (
    Arm,
    ArmLib,
    arms_argv,
    arms_role_argvs,
    join_arms_roles,
    local_endpoints,
    parse_arm,
    run_arms,
)
from testbed.bench.validate_arms import arms_result_problems, pooled

FIXTURES = Path(__file__).parent / "fixtures" / "arms"
ARMS = ["default", "16k", "ref"]


def fixture(role: str) -> dict:
    return json.loads((FIXTURES / f"{role}.json").read_text())


# --- the argv builder ---------------------------------------------------------------

LIBS = [ArmLib("zlink", "/p/libzlink.so", "zlink", "ab"), ArmLib("ref", "/p/libzmq.so", "libzmq-4.3.5")]


def test_arms_argv_spells_every_flag_once():
    arms = [Arm("default", "zlink"), Arm("16k", "zlink", (("ZMQ_ASIO_IN_BATCH_SIZE", "16384"),)),
            Arm("ref", "ref")]
    argv = arms_argv("/b/bench_arms_pair", "tcp", 1024, LIBS, arms, rounds=8, slice_count=500, seed=3,
                     counters="off", pin_sender=[0], io_threads=2, warmup=None)
    assert argv == ["/b/bench_arms_pair", "--transport", "tcp", "--size", "1024",
                    "--lib", "zlink=/p/libzlink.so", "--lib", "ref=/p/libzmq.so",
                    "--arm", "default=zlink", "--arm", "16k=zlink:ZMQ_ASIO_IN_BATCH_SIZE=16384",
                    "--arm", "ref=ref", "--rounds", "8", "--slice-count", "500", "--seed", "3",
                    "--counters", "off", "--pin-sender", "0", "--io-threads", "2"]


def test_arms_role_argvs_share_everything_but_the_role():
    receiver, sender = arms_role_argvs("/b/x", "tcp", 64, local_endpoints("tcp"), LIBS,
                                       [Arm("a", "ref")], rounds=2)
    assert receiver[receiver.index("--role") + 1] == "receiver" and "--bind" in receiver
    assert sender[sender.index("--role") + 1] == "sender" and "--connect" in sender
    assert receiver.count("--lib") == sender.count("--lib") == 2


@pytest.mark.parametrize("kwargs,message", [
    ({"count": 5}, "unknown arms option 'count'"),
    ({"counters": "on"}, "counters 'on'"),
    ({"role": "both-ish"}, "role"),
    ({"redeal": "yes"}, "redeal 'yes'"),
])
def test_arms_argv_refuses_what_the_binary_would(kwargs, message):
    with pytest.raises(ValueError, match=message):
        arms_argv("/b/x", "tcp", 64, LIBS, [Arm("a", "ref")], **kwargs)


def test_arms_argv_refuses_inconsistent_arms():
    with pytest.raises(ValueError, match="names library 'nope'"):
        arms_argv("/b/x", "tcp", 64, LIBS, [Arm("a", "nope")])
    with pytest.raises(ValueError, match="arm labels repeat"):
        arms_argv("/b/x", "tcp", 64, LIBS, [Arm("a", "ref"), Arm("a", "zlink")])
    with pytest.raises(ValueError, match="at least one arm"):
        arms_argv("/b/x", "tcp", 64, LIBS, [])


@pytest.mark.parametrize("text,message", [
    ("nolib", "expected LABEL=LIB"),
    ("a=", "expected LABEL=LIB"),
    ("a=zlink:", "nothing after ':'"),
    ("a=zlink:NOVALUE", "is not VAR=VALUE"),
    ("a b=zlink", "arm label"),
    ("a=zlink:1X=2", "not an environment variable name"),
    ("a=zlink:X=1,X=2", "given twice"),
])
def test_parse_arm_names_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        parse_arm(text)


def test_parse_arm_reads_the_environment():
    arm = parse_arm("16k=zlink:ZMQ_ASIO_IN_BATCH_SIZE=16384,ZMQ_ASIO_OUT_BATCH_SIZE=16384")
    assert arm == Arm("16k", "zlink", (("ZMQ_ASIO_IN_BATCH_SIZE", "16384"),
                                       ("ZMQ_ASIO_OUT_BATCH_SIZE", "16384")))
    assert arm.flag() == "16k=zlink:ZMQ_ASIO_IN_BATCH_SIZE=16384,ZMQ_ASIO_OUT_BATCH_SIZE=16384"


# --- validation and join on recorded lines ----------------------------------------

@pytest.mark.parametrize("role", ["both", "receiver", "sender"])
def test_recorded_lines_are_valid(role):
    assert arms_result_problems(fixture(role), pattern="PAIR", transport="tcp", msg_size=256, arms=ARMS,
                                rounds=2, slice_count=300, slice_lat_count=20) == []


def _first_slice(line: dict, kind: str) -> dict:
    return next(r for r in line["rounds"] if r["kind"] == kind)["slices"][0]


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["rounds"][1].__setitem__("order", [0, 0, 1]), "not a permutation"),
    (lambda d: d["rounds"].pop(), "rounds run"),
    (lambda d: _first_slice(d, "thr").__setitem__("receiver_seconds", 0), "receiver_seconds is 0"),
    (lambda d: _first_slice(d, "thr")["counters"].pop("syscalls"), "counters has"),
    (lambda d: _first_slice(d, "thr")["counters"].__setitem__("syscalls", -1), "non-negative"),
    (lambda d: _first_slice(d, "lat").__setitem__("p50", 1e9), "percentiles are not ordered"),
    (lambda d: _first_slice(d, "lat")["histogram"]["counts"].append(5), "histogram"),
    (lambda d: d["verify"].__setitem__("received", 1), "verify.received"),
    (lambda d: d["verify"].__setitem__("stragglers", -1), "verify.stragglers"),
    (lambda d: d["arms"][1].__setitem__("lib", "other"), "is not one of the libs"),
    (lambda d: d["counters"].__setitem__("source", "guess"), "counters.source"),
    (lambda d: d["rounds"][0].__setitem__("warmup", False), "warmup is False"),
])
def test_validation_catches_a_broken_line(mutate, message):
    line = fixture("both")
    mutate(line)
    problems = arms_result_problems(line)
    assert any(message in p for p in problems), problems


def test_expectations_are_checked():
    problems = arms_result_problems(fixture("both"), pattern="PAIR", arms=["default", "ref"], rounds=3)
    assert any("arms are" in p for p in problems) and any("settings.arms.rounds" in p for p in problems)


def test_join_takes_each_side_from_its_process_and_sums_counters():
    rx, tx = fixture("receiver"), fixture("sender")
    joined = join_arms_roles(rx, tx)
    assert arms_result_problems(joined, arms=ARMS) == []
    assert joined["role"] == "joined"
    for jr, rr, tr in zip(joined["rounds"], rx["rounds"], tx["rounds"]):
        for js, rs, ts in zip(jr["slices"], rr["slices"], tr["slices"]):
            if js["kind"] == "thr":
                assert js["receiver_seconds"] == rs["receiver_seconds"]  # the receiver's clock
                assert js["sender_seconds"] == ts["sender_seconds"]
            else:
                assert js["p50"] == ts["p50"] and js["histogram"] == ts["histogram"]
            for event, value in js["counters"].items():
                assert value == rs["counters"][event] + ts["counters"][event]
            assert js["counters_by_role"] == {"receiver": rs["counters"], "sender": ts["counters"]}
    assert {t["process"] for t in joined["threads"]} == {"receiver", "sender"}


def test_join_refuses_lines_that_do_not_belong_together():
    rx, tx = fixture("receiver"), fixture("sender")
    with pytest.raises(ValueError, match="receiver and a sender"):
        join_arms_roles(tx, rx)
    other = copy.deepcopy(tx)
    other["rounds"][0]["order"] = list(reversed(other["rounds"][0]["order"]))
    with pytest.raises(ValueError, match="rounds differ"):
        join_arms_roles(rx, other)
    other = copy.deepcopy(tx)
    other["msg_size"] = 1
    with pytest.raises(ValueError, match="msg_size"):
        join_arms_roles(rx, other)


def test_pooled_summary_uses_measured_slices_only():
    line = fixture("both")
    p = pooled(line)
    arm0 = [s for r in line["rounds"] if not r["warmup"] and r["kind"] == "thr"
            for s in r["slices"] if s["arm"] == 0]
    # one host: every slice has a span, which times it
    assert p["default"]["msgs_per_sec"] == pytest.approx(
        sum(s["count"] for s in arm0) / sum(s["span_seconds"] for s in arm0))
    assert p["default"]["p50_us"] > 0


# --- the callgrind reader -----------------------------------------------------------

def _dump(path: Path, label: str | None, ir: int) -> None:
    trigger = (f"desc: Trigger: Client Request: arms {label}\n" if label
               else "desc: Trigger: Program termination\n")
    path.write_text(f"# callgrind format\nversion: 1\n{trigger}\nevents: Ir\nsummary: {ir + 999}\n\n"
                    f"fn=(1) main\n0 {ir}\ntotals: {ir}\n")


def test_callgrind_reader_gives_instructions_per_message_per_arm(tmp_path):
    _dump(tmp_path / "callgrind.out.1", None, 5)
    slice_label = "arm={} label={} kind=thr round={} warmup={} count=10 messages=11 role=both"
    _dump(tmp_path / "callgrind.out.1.1", slice_label.format(0, "a", 0, 1), 999_999)
    _dump(tmp_path / "callgrind.out.1.2", slice_label.format(0, "a", 1, 0), 11_000)
    _dump(tmp_path / "callgrind.out.1.3", slice_label.format(1, "b", 1, 0), 22_000)
    # two processes: their dumps of one slice add up
    _dump(tmp_path / "callgrind.out.2.1", "arm=0 label=a kind=lat round=0 warmup=0 count=4 messages=5 "
          "role=receiver", 500)
    _dump(tmp_path / "callgrind.out.3.1", "arm=0 label=a kind=lat round=0 warmup=0 count=4 messages=5 "
          "role=sender", 1000)
    dumps = callgrind_slices.read_dumps([tmp_path])
    rows = {(r.label, r.kind): r for r in callgrind_slices.per_message(dumps)}
    assert rows[("a", "thr")].per_message == 1000 and rows[("a", "thr")].slices == 1  # warm-up left out
    assert rows[("b", "thr")].per_message == 2000
    assert rows[("a", "lat")].per_message == 300
    assert callgrind_slices.main([str(tmp_path)]) == 0


# --- the real binaries ---------------------------------------------------------------

@pytest.fixture(scope="module")
def real(built_library):
    """(arms binary dir, ArmLib of zlink, ArmLib of libzmq-4.3.5)."""
    from testbed.bench.arms_binaries import arms_dir, shared_object
    from testbed.toolchain.progress import Progress
    zlink, ref = built_library("zlink"), built_library("libzmq-4.3.5")
    return (arms_dir(Progress()),
            ArmLib("zlink", str(shared_object(zlink)), "zlink", zlink.info["build_id"]),
            ArmLib("ref", str(shared_object(ref)), "libzmq-4.3.5", ref.info["build_id"]))


SHORT = {"rounds": 3, "slice_count": 2000, "slice_lat_count": 50, "timeout_ms": 8000, "io_threads": 2}


def _arms(real, pattern="ROUTER_ROUTER"):
    bins, zlink, ref = real
    arms = [Arm("default", "zlink"), Arm("16k", "zlink", (("ZMQ_ASIO_IN_BATCH_SIZE", "16384"),)),
            Arm("ref", "ref")]
    return bins / f"bench_arms_{pattern.lower()}", [zlink, ref], arms


@pytest.mark.slow
def test_one_process_run_of_three_arms(real):
    binary, libs, arms = _arms(real)
    run = run_arms(arms_argv(binary, "tcp", 1024, libs, arms, seed=5, counters="auto", **SHORT), timeout_s=60)
    assert run.result is not None, run.one.stderr
    line = run.result
    assert arms_result_problems(line, pattern="ROUTER_ROUTER", transport="tcp", msg_size=1024,
                                arms=["default", "16k", "ref"], rounds=3, slice_count=2000) == []
    assert line["arms"][1]["env"] == {"ZMQ_ASIO_IN_BATCH_SIZE": "16384"}
    assert line["env"] == {}  # the arm's environment went to its namespace, not to the process
    zlink_file, ref_file = (line["arms"][i]["library"]["loaded_from"] for i in (0, 2))
    assert "zlink" in zlink_file and "libzmq" in ref_file
    assert line["counters"]["source"] == "perf_event_open"
    assert {"task_clock_ns", "syscalls", "context_switches"} <= set(line["counters"]["events"])
    assert line["counters"]["perturbs_timing"] is True  # the syscall tracepoints
    orders = {tuple(r["order"]) for r in line["rounds"]}
    assert len(orders) > 1  # 8 rounds of 3 arms in one order has odds of 1 in 6^7


@pytest.mark.slow
@pytest.mark.parametrize("mode,source,events", [
    (None, "perf_event_open", ["task_clock_ns", "context_switches", "cpu_migrations", "page_faults",
                               "voluntary_context_switches"]),
    ("rusage", "getrusage", ["cpu_time_ns", "context_switches", "page_faults", "voluntary_context_switches"]),
    ("off", "none", []),
])
def test_counter_modes_list_exactly_what_they_count(real, mode, source, events):
    """The default (software) counts perf's software events only: free beside the
    timing, unlike the syscall tracepoints of `auto`."""
    binary, libs, arms = _arms(real, "PAIR")
    run = run_arms(arms_argv(binary, "tcp", 1024, libs, arms[:1], counters=mode, **SHORT), timeout_s=60)
    assert run.result is not None, run.one.stderr
    counters = run.result["counters"]
    assert counters["source"] == source and counters["events"] == events
    assert counters["perturbs_timing"] is False
    slices = [s for r in run.result["rounds"] for s in r["slices"]]
    assert all((s["counters"] is None) if not events else sorted(s["counters"]) == sorted(events)
               for s in slices)
    clock = {"rusage": "cpu_time_ns", None: "task_clock_ns"}.get(mode)
    if clock:  # a throughput slice of 2,000 messages takes CPU time
        assert all(s["counters"][clock] > 0 for s in slices if s["kind"] == "thr")
        # The voluntary switches are a part of all switches (read a few microseconds
        # apart in a snapshot: one per slice of slack).
        voluntary = sum(s["counters"]["voluntary_context_switches"] for s in slices)
        assert 0 < voluntary <= sum(s["counters"]["context_switches"] for s in slices) + len(slices)
    assert arms_result_problems(run.result) == []


@pytest.mark.slow
def test_two_process_run_joins(real):
    binary, libs, arms = _arms(real)
    receiver, sender = arms_role_argvs(binary, "tcp", 1024, local_endpoints("tcp"), libs, arms[::2],
                                       **SHORT)
    run = run_arms(receiver_argv=receiver, sender_argv=sender, timeout_s=60)
    assert run.result is not None, run.receiver.stderr + run.sender.stderr
    assert arms_result_problems(run.result, arms=["default", "ref"]) == []
    assert run.result["counters"]["by_role"]["receiver"]["source"] == "perf_event_open"
    assert all(s["counters"]["task_clock_ns"] > 0 for r in run.result["rounds"] for s in r["slices"])


@pytest.mark.slow
def test_lossy_pubsub_slices_reuse_their_connection(real):
    """PUB drops at the HWM: every slice of an arm reuses one connection, so a slice's
    warm-up may meet the tail of an earlier one (counted in verify.stragglers, never as
    received); the run still validates with each slice's losses counted by sequence."""
    binary, libs, arms = _arms(real, "PUBSUB")
    run = run_arms(arms_argv(binary, "tcp", 64, libs, arms[::2], hwm=100,
                             **{**SHORT, "rounds": 4, "slice_count": 20000}), timeout_s=60)
    assert run.result is not None, run.one.stderr
    assert arms_result_problems(run.result, pattern="PUBSUB", arms=["default", "ref"]) == []
    thr = [s for r in run.result["rounds"] for s in r["slices"] if s["kind"] == "thr"]
    assert {s["delivery"] for s in thr} == {"lossy"}
    assert all(0 < s["count"] <= s["sent"] for s in thr)
    assert isinstance(run.result["verify"]["stragglers"], int) and run.result["verify"]["stragglers"] >= 0


@pytest.mark.slow
def test_a_late_lossy_tail_is_skipped_by_whichever_slice_comes_next(real):
    """Every throughput slice's last 100 messages come after its receiver has ended
    the slice: the next slice on that connection, a throughput warm-up or a latency
    echo, skips them as stragglers and the run validates."""
    binary, libs, arms = _arms(real, "PUBSUB")
    run = run_arms(arms_argv(binary, "tcp", 1024, libs, arms[::2], **{**SHORT, "rounds": 4})
                   + ["--inject-fault", "late-tail"], timeout_s=60)
    assert run.result is not None, run.one.stderr
    assert arms_result_problems(run.result, pattern="PUBSUB", arms=["default", "ref"]) == []
    thr = [s for r in run.result["rounds"] for s in r["slices"] if s["kind"] == "thr"]
    assert all(s["count"] <= s["sent"] - 100 for s in thr)
    assert run.result["verify"]["stragglers"] > 0


@pytest.mark.slow
def test_redeal_pins_unpinned_threads_every_round_and_releases_each_pin(real):
    """Free placement: each process deals its side thread and its arms' library threads
    at every round (3 measured + 1 warm-up, per kind) and gives every pin back."""
    binary, libs, arms = _arms(real)
    receiver, sender = arms_role_argvs(binary, "tcp", 1024, local_endpoints("tcp"), libs, arms[::2],
                                       redeal="on", **SHORT)
    run = run_arms(receiver_argv=receiver, sender_argv=sender, timeout_s=60)
    assert run.result is not None, run.receiver.stderr + run.sender.stderr
    assert arms_result_problems(run.result, arms=["default", "ref"]) == []
    for settings in (run.result["settings"], run.result["sender_settings"]):  # each process its own
        dealer = settings["arms"]["dealer"]
        assert settings["arms"]["redeal"] is True
        assert dealer["deals"] == 2 * (SHORT["rounds"] + 1)  # thr and lat rounds, warm-up included
        # the side thread and >= 2 IO threads per library (2 IO threads asked), each a pin a round
        assert dealer["threads"] >= 5 and dealer["pins"] == dealer["threads"] * dealer["deals"]
        assert dealer["releases"] == dealer["pins"]
    # the threads' masks as the run started: all CPUs (the deals never outlive a round)
    allowed = {t["cpus"] for t in run.result["threads"]}
    assert len(allowed) == 1, run.result["threads"]


@pytest.mark.slow
def test_redeal_leaves_pinned_threads_alone(real):
    binary, libs, arms = _arms(real, "PAIR")
    run = run_arms(arms_argv(binary, "tcp", 1024, libs, arms[:1], redeal="on", pin_sender=[0],
                             pin_receiver=[0], **SHORT), timeout_s=60)
    assert run.result is not None, run.one.stderr
    dealer = run.result["settings"]["arms"]["dealer"]
    assert dealer["deals"] > 0 and dealer["threads"] >= 3 and dealer["pins"] == 0


@pytest.mark.slow
def test_inproc_each_arm_its_own_context(real):
    binary, libs, arms = _arms(real, "PUSH_PULL")
    run = run_arms(arms_argv(binary, "inproc", 64, libs, arms, mode="thr", **SHORT), timeout_s=60)
    assert run.result is not None, run.one.stderr
    assert run.result["settings"]["contexts_per_arm"] == 1


@pytest.mark.slow
def test_a_corrupt_message_fails_the_run_with_exit_4(real):
    binary, libs, arms = _arms(real, "PAIR")
    argv = arms_argv(binary, "tcp", 1024, libs, arms, **SHORT) + ["--inject-fault", "corrupt"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4, proc.stderr
    line = json.loads(proc.stdout)
    assert line["verify"]["ok"] is False and "corrupt" in line["verify"]["error"]


@pytest.mark.slow
@pytest.mark.parametrize("extra,message", [
    (["--arm", "x=nolib"], "no --lib labelled 'nolib'"),
    (["--arm", "bad label=zlink"], "label 'bad label' is not allowed"),
    (["--arm", "y=zlink:ZMQ_X"], "is not VAR=VALUE"),
    (["--lib", "zlink=/elsewhere.so"], "label 'zlink' given twice"),
    (["--count", "5"], "use --slice-count"),
    (["--counters", "maybe"], "not one of auto, software, rusage, off"),
    (["--redeal", "yes"], "--redeal: 'yes' is not one of on, off"),
])
def test_bad_arms_input_is_refused_with_exit_2(real, extra, message):
    binary, libs, arms = _arms(real, "PAIR")
    proc = subprocess.run(arms_argv(binary, "tcp", 64, libs, arms[:1]) + extra, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


@pytest.mark.slow
def test_a_library_that_does_not_load_is_named(real, tmp_path):
    binary, libs, arms = _arms(real, "PAIR")
    bad = tmp_path / "libnothing.so"
    bad.write_text("not an ELF file")
    proc = subprocess.run(arms_argv(binary, "tcp", 64, [ArmLib("bad", str(bad))], [Arm("a", "bad")]),
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and f"--lib bad={bad}" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_more_namespaces_than_glibc_reserves_re_execute_once(real):
    """At glibc's default (glibc.rtld.nns=4) 11 copies loaded on the reference host and
    the 12th failed for static TLS; the binary then re-executes itself with nns=16,
    which holds glibc's maximum of 15 (a 16th is refused before anything loads)."""
    binary, (zlink, ref), _ = _arms(real, "PAIR")
    libs = [ArmLib(f"c{i}", zlink.path if i % 2 else ref.path) for i in range(16)]
    arms = [Arm(f"a{i}", f"c{i}") for i in range(16)]
    options = {"mode": "thr", "rounds": 1, "warmup_rounds": 0, "slice_count": 200, "counters": "off"}
    run = run_arms(arms_argv(binary, "inproc", 64, libs[:15], arms[:15], **options), timeout_s=60)
    assert run.result is not None, run.one.stderr
    assert len(run.result["libs"]) == 15 and run.result["settings"]["arms"]["namespaces_reserved"] == 16
    proc = subprocess.run(arms_argv(binary, "inproc", 64, libs, arms, **options), capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 1 and "glibc allows at most 15" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_cli_runs_arms_by_registered_name(real, capsys):
    code = cli.main(["arms", "PAIR", "--transport", "tcp", "--size", "512", "--arm", "default=zlink",
                     "--arm", "ref=libzmq-4.3.5", "--rounds", "2", "--slice-count", "500",
                     "--slice-lat-count", "20"])
    out, err = capsys.readouterr()
    assert code == 0, err
    line = json.loads(out)
    assert [a["library"]["registered_name"] for a in line["arms"]] == ["zlink", "libzmq-4.3.5"]
    assert "throughput" in err and "x of default" in err and "libzlink" in err


@pytest.mark.slow
@pytest.mark.parametrize("arm,message", [
    ("ref=no-such-library", "unknown library 'no-such-library'"),
    ("ref", "expected LABEL=LIB"),
])
def test_cli_refuses_bad_arms_with_exit_2(real, capsys, arm, message):
    code = cli.main(["arms", "PAIR", "--transport", "tcp", "--size", "64", "--arm", arm])
    assert code == 2 and message in capsys.readouterr().err
