"""The perf-tools kind: libzmq's own perf programs as a second judge. Their printed
reports parsed (and refused when malformed), a crashing or lying program failing its
cell with the cause, the config refusing knobs the programs do not have, the judge
asking each family only about its own figure, and two small real runs through
`./testbed run` (one with a broken libzmq.so.5 whose cells fail while the sweep goes on)."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from test_sweep_support import env_for, only_run_dir, read_results, run_testbed
from testbed.results import load
from testbed.sweep import adaptive, config, perf_tools, plan, process
from testbed.sweep import perf_tools_output as output
from testbed.sweep.config_run import Design
from testbed.sweep.toml_reader import ExperimentError

# What the programs print (perf/local_thr.cpp, remote_lat.cpp, inproc_*.cpp), figures
# from one run of libzmq 4.3.5 on this kind of host.
LOCAL_THR = "message size: 64 [B]\nmessage count: 200000\nmean throughput: 4012345 [msg/s]\n" \
            "mean throughput: 2054.321 [Mb/s]\n"
REMOTE_LAT = "message size: 65536 [B]\nroundtrip count: 500\naverage latency: 47.125 [us]\n"
INPROC_THR = "message size: 64 [B]\nmessage count: 1000\nmean throughput: 5500000 [msg/s]\n" \
             "mean throughput: 2816.000 [Mb/s]\n"
INPROC_LAT = "message size: 64 [B]\nroundtrip count: 100\naverage latency: 24.010 [us]\n"
SHIPPED = Path(__file__).resolve().parents[2] / "experiments" / "perf-tools" / "experiment.toml"


def test_reports_of_all_four_reporting_programs_are_parsed():
    thr = output.parse("thr", LOCAL_THR, 64, 200000)
    assert thr["throughput"]["msgs_per_sec"] == 4012345.0
    assert thr["throughput"]["megabits_per_sec"] == 2054.321
    assert thr["throughput"]["mb_per_sec"] == pytest.approx(2054.321 / 8)  # the testbed's MB/s
    assert thr["throughput"]["seconds"] == pytest.approx(200000 / 4012345)
    lat = output.parse("lat", REMOTE_LAT, 65536, 500)
    assert lat["latency"] == {"mean": 47.125, "count": 500, "seconds": pytest.approx(2 * 500 * 47.125e-6)}
    assert "p50" not in lat["latency"]  # the programs print a mean, never a percentile
    assert output.parse("thr", INPROC_THR, 64, 1000)["throughput"]["msgs_per_sec"] == 5500000.0
    assert output.parse("lat", INPROC_LAT, 64, 100)["latency"]["mean"] == 24.01


def test_parsed_results_become_the_tidy_metrics_the_report_compares():
    cell = {"result": output.parse("thr", LOCAL_THR, 64, 200000)}
    metrics = {name: value for name, value, _ in load._metrics(cell)}
    assert metrics == {"throughput_msgs": 4012345.0, "throughput_mbps": pytest.approx(256.790125)}
    parsed = output.parse("lat", REMOTE_LAT, 65536, 500)
    lat = {name: value for name, value, _ in load._metrics({"result": parsed})}
    assert lat == {"lat_mean_us": 47.125}
    assert adaptive.metric_value(output.parse("lat", REMOTE_LAT, 65536, 500), "mean_latency") == 47.125


@pytest.mark.parametrize("text, size, count, why", [
    ("", 64, 200000, "'message size' line missing"),
    ("error in zmq_bind: Address already in use\n", 64, 200000, "'message size' line missing"),
    (LOCAL_THR.replace("mean throughput: 4012345 [msg/s]\n", ""), 64, 200000, "'msgs per sec' line missing"),
    (LOCAL_THR, 64, 100000, "reported count 200000, asked for 100000"),
    (LOCAL_THR, 1024, 200000, "reported message size 64 B, asked for 1024 B"),
    (LOCAL_THR.replace("4012345", "0"), 64, 200000, "throughput not positive"),
    (LOCAL_THR.replace("2054.321", "-nan"), 64, 200000, "'megabits per sec' is -nan"),
    (LOCAL_THR + LOCAL_THR, 64, 200000, "printed 2 times"),
    (REMOTE_LAT.replace("47.125", "inf"), 65536, 500, "'latency us' is inf"),
    (REMOTE_LAT.replace("47.125", "0.000"), 65536, 500, "latency not positive"),
])
def test_malformed_reports_are_refused_with_what_is_wrong(text, size, count, why):
    kind = "lat" if "roundtrip" in text else "thr"
    with pytest.raises(output.MalformedOutput, match=why.replace("(", r"\(")):
        output.parse(kind, text, size, count)


def cell(pattern="PUSH_PULL", transport="tcp", placement="one-core", library="zlink") -> plan.Cell:
    return plan.Cell(cell_id=f"{library}-c", group="g", library=library, library_name=library,
                     kind="perf-tools", pattern=pattern, transport=transport, msg_size=64, io_threads=1,
                     params={}, count=200000, lat_count=500, placement=placement, process_model="two-process")


def outcome(code=0, stdout="", stderr="", killed=""):
    return process.Outcome(code, stdout, stderr, 0.5, killed)


PROGRAMS = {"receiver": "local_thr", "sender": "remote_thr"}
LIB = "/libs/zlink/lib/libzmq.so.5.2.5"
LOADED = {"receiver": {LIB}, "sender": {LIB}}


def test_a_crashing_or_failing_program_fails_the_cell_naming_role_program_and_cause():
    crashed = perf_tools.judge_outputs(cell(), 200000, {"receiver": outcome(-11), "sender": outcome(
        None, killed="peer failed")}, PROGRAMS, LOADED, LIB)
    assert crashed[0] == "failed" and crashed[2] is None
    assert "receiver (local_thr): killed by signal SIGSEGV" in crashed[1]
    assert "sender (remote_thr): killed after the other process of this cell failed" in crashed[1]
    refused = perf_tools.judge_outputs(cell(), 200000, {"receiver": outcome(0, LOCAL_THR), "sender": outcome(
        255, "error in zmq_connect: Invalid argument\n")}, PROGRAMS, LOADED, LIB)
    assert refused[0] == "failed"
    assert refused[1] == "sender (remote_thr): exit 255; it printed: error in zmq_connect: Invalid argument"
    hung = perf_tools.judge_outputs(cell(), 200000, {"receiver": outcome(None, killed="timeout"),
                                                     "sender": outcome(0)}, PROGRAMS, LOADED, LIB)
    assert hung[0] == "timeout" and "cell timeout" in hung[1]


def test_a_malformed_report_or_the_wrong_library_fails_the_cell():
    ok = {"receiver": outcome(0, LOCAL_THR), "sender": outcome(0)}
    status, failure, result = perf_tools.judge_outputs(cell(), 200000, ok, PROGRAMS, LOADED, LIB)
    assert (status, failure) == ("ok", "") and result["throughput"]["msgs_per_sec"] == 4012345.0
    garbage = {"receiver": outcome(0, "message size: 64 [B]\nsegfault soon\n"),
               "sender": outcome(0)}
    status, failure, _ = perf_tools.judge_outputs(cell(), 200000, garbage, PROGRAMS, LOADED, LIB)
    assert status == "failed"
    assert failure.startswith("malformed output of local_thr: 'message count' line missing")
    assert failure.endswith("it printed: segfault soon")
    other = {"receiver": {"/libs/libzmq/lib/libzmq.so.5.2.5"}, "sender": {LIB}}
    status, failure, _ = perf_tools.judge_outputs(cell(), 200000, ok, PROGRAMS, other, LIB)
    assert status == "failed"
    assert failure == f"receiver (local_thr) loaded /libs/libzmq/lib/libzmq.so.5.2.5, not {LIB}"
    none = {**LOADED, "sender": set()}
    status, failure, _ = perf_tools.judge_outputs(cell(), 200000, ok, PROGRAMS, none, LIB)
    assert "no libzmq.so.5 in the loader trace" in failure


def test_command_lines_roles_and_pins_follow_the_programs_usage():
    from testbed.bench.command import Endpoints
    tools = Path("/t")
    ends = Endpoints("tcp://127.0.0.1:12000", "tcp://127.0.0.1:12000")
    assert perf_tools.argvs(tools, cell("REQ_REP"), 500, ends) == {
        "receiver": ["/t/local_lat", "tcp://127.0.0.1:12000", "64", "500"],
        "sender": ["/t/remote_lat", "tcp://127.0.0.1:12000", "64", "500"]}
    inproc = perf_tools.argvs(tools, cell(transport="inproc"), 9, None)
    assert inproc == {"inproc": ["/t/inproc_thr", "64", "9"]}
    assert perf_tools.reporter(cell()) == "receiver" and perf_tools.reporter(cell("REQ_REP")) == "sender"
    from testbed.sweep.placement import Pins
    split = Pins(sender="0", receiver="1")
    assert perf_tools.role_cpus(cell(placement="split"), split) == {"receiver": "1", "sender": "0"}
    assert perf_tools.role_cpus(cell(transport="inproc"), Pins("0", "0")) == {"inproc": "0"}
    with pytest.raises(ValueError, match="cannot pin their two threads apart"):
        perf_tools.role_cpus(cell(transport="inproc", placement="split"), split)
    assert perf_tools.pinned(["/t/local_thr"], "1") == ["taskset", "-c", "1", "/t/local_thr"]
    assert perf_tools.pinned(["/t/local_thr"], None) == ["/t/local_thr"]


def test_loader_traces_name_the_initialised_library(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libzmq.so.5.2.5").write_text("")
    (lib / "libzmq.so.5").symlink_to("libzmq.so.5.2.5")
    (tmp_path / "sender.4242").write_text(f"     4242:\tcalling init: {lib}/libzmq.so.5\n"
                                          "     4242:\tcalling init: /lib/x86_64-linux-gnu/libc.so.6\n")
    assert perf_tools.loader_inits(tmp_path, "sender") == {str(lib / "libzmq.so.5.2.5")}
    assert perf_tools.loader_inits(tmp_path, "receiver") == set()


def write_toml(tmp_path: Path, workload_extra: str = "", sweep_extra: str = "") -> Path:
    folder = tmp_path / "perf-tools"
    folder.mkdir(exist_ok=True)
    path = folder / "experiment.toml"
    path.write_text(textwrap.dedent(f"""\
        [experiment]
        name = "perf-tools"
        question = "Do the programs agree?"
        seed = "none"
        [libraries]
        use = ["libzmq-4.3.5", "zlink"]
        reference = "libzmq-4.3.5"
        [workload]
        kind = "perf-tools"
        patterns = ["PUSH_PULL", "REQ_REP"]
        transports = ["inproc", "tcp"]
        sizes = [64]
        counts = {{ 64 = 20000 }}
        lat_counts = {{ 64 = 200 }}
        {workload_extra}
        [sweep]
        placement = ["one-core"]
        {sweep_extra}
        [run]
        repetitions = 1
        verdicts = false
        min_window_s = 0
        warmup_runs = 0
        timeout_s = 20
        speed_reference = false
        [perf]
        stat = false
        work_per_message = false
        """))
    return path


@pytest.mark.parametrize("workload, sweep, key, words", [
    ('hwm = 0\nhwm_reason = "x"', "", "workload.hwm", "set no HWM"),
    ('mode = "thr"', "", "workload.mode", "the pattern picks the program"),
    ("", 'io_threads = [2]\nio_threads_reason = "x"', "sweep.io_threads", "one IO thread"),
    ("", 'process_model = ["one-process"]', "sweep.process_model", "two processes"),
])
def test_the_config_refuses_knobs_the_programs_do_not_have(tmp_path, workload, sweep, key, words):
    with pytest.raises(ExperimentError) as err:
        config.load(write_toml(tmp_path, workload, sweep))
    assert key in str(err.value) and words in str(err.value)


def test_the_config_refuses_a_pattern_without_a_program(tmp_path):
    path = write_toml(tmp_path)
    path.write_text(path.read_text().replace('["PUSH_PULL", "REQ_REP"]', '["PAIR"]'))
    with pytest.raises(ExperimentError, match="'PAIR' has no libzmq perf program"):
        config.load(path)


def test_the_shipped_experiment_loads_in_every_profile_and_covers_the_grid():
    for profile in ("quick", "default", "full"):
        exp = config.load(SHIPPED, profile)
        cells = plan.expand(exp)
        placements = {(c.transport, c.placement) for c in cells}
        assert {"one-core", "split", "free"} == {p for t, p in placements if t == "tcp"} \
            == {p for t, p in placements if t == "ipc"}
        assert {p for t, p in placements if t == "inproc"} == {"one-core", "free"}  # split excluded
        assert {64, 65536} <= {c.msg_size for c in cells} and exp.hwm is None and exp.io_threads == (1,)
    assert config.load(SHIPPED, "quick").design.min_repetitions >= 6  # enough pairs for a paired verdict


def test_the_judge_asks_each_family_only_about_its_own_figure():
    calls = []

    def decide(ref, cand, **kw):
        calls.append(kw["higher_is_better"])
        return type("D", (), {"verdict": "FAST", "ratio": 1.2, "low": 1.1, "high": 1.3, "p_value": 0.01,
                              "mde": 0.05, "method": "paired"})()

    decider = adaptive.Decider(decide, lambda confidence, paired=False: 2, None)
    design = Design(min_repetitions=2, max_repetitions=2, time_budget_s=None, min_window_s=0,
                    confidence=0.95, margin=0.03)
    judge = perf_tools.judge_for(decider, design, "libzmq-4.3.5")
    records = []
    for library, thr, lat in (("libzmq-4.3.5", 1.0, 50.0), ("zlink", 1.2, 40.0)):
        c = cell(library=library)
        result = {"throughput": {"msgs_per_sec": thr}, "latency": {"mean": lat}}
        records += [{"cell_id": c.cell_id, "repetition": rep, "status": "ok", "result": result}
                    for rep in (0, 1)]
    thr_group = adaptive.Group("g", [cell(library="libzmq-4.3.5"), cell()])
    decisions = judge.judge(thr_group, records)
    assert [d["metric"] for d in decisions] == ["throughput"] and calls == [True]
    lat_group = adaptive.Group("g", [cell("REQ_REP", library="libzmq-4.3.5"), cell("REQ_REP")])
    assert [d["metric"] for d in judge.judge(lat_group, records)] == ["mean_latency"] and calls[-1] is False


# ---------------------------------------------------------------- real programs

def listing_for(tmp_path: Path, libs: dict) -> Path:
    path = tmp_path / "libs.json"
    entries = {name: {"prefix": str(lib.prefix), "bench_dir": str(lib.bench_dir)}
               for name, lib in libs.items()}
    path.write_text(json.dumps({"libraries": entries}))
    return path


@pytest.mark.slow
def test_real_programs_on_both_libraries_through_the_runner(tmp_path, built_library):
    libs = {name: built_library(name) for name in ("libzmq-4.3.5", "zlink")}
    exp = write_toml(tmp_path)
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out"), "--seed", "3"],
                       env_for(listing_for(tmp_path, libs)), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    recs = read_results(only_run_dir(tmp_path / "out"))
    assert len(recs) == 8 and all(r["status"] == "ok" and r["kind"] == "perf-tools" for r in recs)
    for r in recs:
        expected = str((libs[r["library"]].prefix / "lib" / "libzmq.so.5").resolve())
        assert all(role["loaded"] == [expected] for role in r["roles"].values()), r["roles"]
        metric = ("throughput", "msgs_per_sec") if r["pattern"] == "PUSH_PULL" else ("latency", "mean")
        assert r["result"][metric[0]][metric[1]] > 0
        assert r["pins"] == {"sender": "0", "receiver": "0"} or r["transport"] != "tcp"
        if r["transport"] == "tcp":  # taskset's pins read back from /proc while the programs ran
            assert r["placement_check"]["ok"] is True and r["placement_check"]["checked"] >= 2


@pytest.mark.slow
def test_a_broken_libzmq_so_fails_its_cells_and_the_sweep_goes_on(tmp_path, built_library):
    real = built_library("libzmq-4.3.5")
    broken = tmp_path / "broken" / "prefix"
    (broken / "lib").mkdir(parents=True)
    (broken / "lib" / "libzmq.so.5").write_text("not an ELF file\n")
    info = dict(real.info, name="zlink", build_id="62726f6b656e0000")
    (broken / "testbed-lib.json").write_text(json.dumps(info))
    listing = tmp_path / "libs.json"
    listing.write_text(json.dumps({"libraries": {
        "libzmq-4.3.5": {"prefix": str(real.prefix), "bench_dir": str(real.bench_dir)},
        "zlink": {"prefix": str(broken), "bench_dir": str(real.bench_dir)}}}))
    exp = write_toml(tmp_path)
    exp.write_text(exp.read_text().replace('transports = ["inproc", "tcp"]', 'transports = ["inproc"]'))
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing), timeout=300)
    assert proc.returncode == 1, proc.stderr[-3000:]
    recs = {(r["library"], r["pattern"]): r for r in read_results(only_run_dir(tmp_path / "out"))}
    assert len(recs) == 4
    for pattern, program in (("PUSH_PULL", "inproc_thr"), ("REQ_REP", "inproc_lat")):
        assert recs[("libzmq-4.3.5", pattern)]["status"] == "ok"
        bad = recs[("zlink", pattern)]
        assert bad["status"] == "failed" and bad["result"] is None
        assert bad["failure"].startswith(f"inproc ({program}): exit 127; it printed: ")
        assert "error while loading shared libraries" in bad["failure"]  # the loader's own words
