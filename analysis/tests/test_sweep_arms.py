"""The arms layout end to end, on the fake arms bench (sweep_fake_arms_bench.py): one
process pair per block and repetition, one record per cell pooled over its slices, the
slices kept, the runs counterbalanced, the paired verdicts judging libraries and
configurations alike, and counted work measured per arm (never one arm's for another)."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from test_sweep_support import (
    env_for,
    make_prebuilt,
    only_run_dir,
    read_results,
    run_testbed,
    write_experiment,
)
from testbed.records import slices as slicesmod
from testbed.sweep import arms, work_arms
from testbed.sweep.plan import Cell

FAKES = {
    "libzmq-4.3.5": {"fake_msgs_per_sec": 1e6, "fake_p50_us": 10.0, "fake_noise": 0.02,
                     "fake_run_noise": 0.01, "fake_syscalls_per_msg": 2.0},
    # zlink with 16 KiB batches: 20% faster, a fifth of the system calls and context switches per message
    "zlink": {"fake_msgs_per_sec": 2e6, "fake_p50_us": 8.0, "fake_noise": 0.02, "fake_run_noise": 0.01,
              "fake_syscalls_per_msg": 1.0, "fake_env_speed": {"ZMQ_ASIO_IN_BATCH_SIZE=16384": 1.2},
              "fake_env_syscalls": {"ZMQ_ASIO_IN_BATCH_SIZE=16384": 0.2},
              "fake_switches_per_msg": 0.5, "fake_env_switches": {"ZMQ_ASIO_IN_BATCH_SIZE=16384": 0.2}},
}

RUN = """[run]
min_repetitions = 6
max_repetitions = 8
look_every = 2
warmup_runs = 0
timeout_s = TIMEOUT
min_window_s = 0
rounds = 4
slice_s = 0.01
"""


def arms_experiment(tmp_path, run: str = RUN, extra_sweep: str = "", sizes: str = "[1024]") -> object:
    text = write_experiment(tmp_path).read_text()
    head, _, rest = text.partition("[run]")
    tail = rest[rest.index("[perf]"):]
    text = (head.replace('patterns = ["PAIR", "PUBSUB"]', 'patterns = ["PAIR"]')
            .replace("sizes = [64, 1024]", f"sizes = {sizes}").replace("[sweep]\n", "[sweep]\n" + extra_sweep)
            + run + "\n" + tail)
    return write_experiment(tmp_path, text.replace("[profiles.quick]\nrepetitions = 1\n", ""))


def run_arms(tmp_path, exp, behaviour=None, **env):
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES, arms=True)
    (tmp_path / "arms" / "behaviour.json").write_text(json.dumps(behaviour or {}))
    out = tmp_path / "out"
    proc = run_testbed(["run", str(exp), "--out", str(out), "--seed", "5"], env_for(listing, **env))
    return proc, out


@pytest.fixture(scope="module")
def arms_run(tmp_path_factory):
    """One adaptive arms run of one block (2 libraries x 2 configurations), shared by the
    tests that only read it."""
    tmp_path = tmp_path_factory.mktemp("arms")
    log = tmp_path / "arms.log"
    proc, out = run_arms(tmp_path, arms_experiment(tmp_path), FAKE_ARMS_LOG=str(log))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return only_run_dir(out), [json.loads(ln) for ln in log.read_text().splitlines()]


def test_a_block_runs_as_arms_one_record_per_cell_and_run(arms_run):
    run_dir, logged = arms_run
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["design"]["layout"] == "arms", manifest["design"]
    assert manifest["design"]["layout_reason"].startswith("auto:")
    records = [r for r in read_results(run_dir) if r["repetition"] >= 0]
    per_cell = Counter(r["cell_id"] for r in records)
    assert len(per_cell) == 4 and len(set(per_cell.values())) == 1  # 2 libraries x 2 configurations
    runs = per_cell.most_common(1)[0][1]
    assert len(logged) == runs  # one process per run (one-process cells): every cell of a repetition
    by_rep: dict[int, set] = {}
    for r in records:
        assert r["status"] == "ok" and r["layout"] == "arms"
        by_rep.setdefault(r["repetition"], set()).add(r["arms_run"]["seed"])
        assert r["result"]["throughput"]["slices"] == 4 and r["result"]["latency"]["slices"] == 4
    assert all(len(seeds) == 1 for seeds in by_rep.values())
    assert len({next(iter(s)) for s in by_rep.values()}) == runs  # a seed of its own per run
    lines = slicesmod.read(run_dir)
    assert sorted(ln["repetition"] for ln in lines) == list(range(runs))
    assert all("histogram" not in s for ln in lines for rnd in ln["rounds"] for s in rnd["slices"])


def _arm_order(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1].split("=", 1)[0] for i, a in enumerate(argv) if a == flag]


def test_runs_are_counterbalanced(arms_run):
    argvs = [entry["argv"] for entry in arms_run[1]]
    arms = [_arm_order(a, "--arm") for a in argvs]
    libs = [_arm_order(a, "--lib") for a in argvs]
    assert arms[1] == list(reversed(arms[0])) and libs[1] == list(reversed(libs[0]))
    assert len({tuple(a) for a in arms}) >= 3       # rotated every two runs as well
    assert len({a[a.index("--seed") + 1] for a in argvs}) == len(argvs)


def test_configurations_and_libraries_are_judged_paired_and_counted_work_is_per_arm(arms_run):
    run_dir = arms_run[0]
    records = [r for r in read_results(run_dir) if r["repetition"] >= 0]
    switches = {}
    for r in records:
        counted = r["result"]["counted"]
        assert "syscalls" not in counted["per_msg"]  # timed runs count software events only
        per_msg = round(counted["per_msg"]["context_switches"], 3)
        switches.setdefault((r["library"], r["config"]), set()).add(per_msg)
    # measured per arm: each configuration its own figure, never a copy of another's
    assert switches[("zlink", "baseline")] == {0.5} and switches[("zlink", "16 KiB")] == {0.1}
    assert switches[("libzmq-4.3.5", "baseline")] == {0.1} == switches[("libzmq-4.3.5", "16 KiB")]
    decisions = json.loads((run_dir / "manifest.json").read_text())["summary"]["groups"][0]["decisions"]
    verdicts = {(d["kind"], d["library"], d["config"], d["metric"]): d for d in decisions}
    fast = verdicts[("config", "zlink", "16 KiB", "throughput")]
    assert fast["verdict"] == "FAST" and "paired" in fast["method"], fast
    assert verdicts[("library", "zlink", "baseline", "throughput")]["verdict"] == "FAST"


def test_a_crashing_arms_run_fails_every_cell_of_its_block_and_the_sweep_goes_on(tmp_path):
    exp = arms_experiment(tmp_path, RUN.replace("min_repetitions = 6\nmax_repetitions = 8", "repetitions = 2")
                          + "verdicts = false\n", sizes="[64, 1024]")
    proc, out = run_arms(tmp_path, exp, behaviour={"64": "crash"})
    assert proc.returncode == 1, proc.stderr[-3000:]
    records = [r for r in read_results(only_run_dir(out)) if r["repetition"] >= 0]
    failed = [r for r in records if r["status"] != "ok"]
    assert failed and all(r["msg_size"] == 64 for r in failed)
    assert all("SIGABRT" in r["failure"] for r in failed), failed[0]["failure"]
    assert {r["status"] for r in records if r["msg_size"] == 1024} == {"ok"}


def test_design_arms_without_arms_binaries_is_refused_naming_the_key(tmp_path):
    exp = arms_experiment(tmp_path, RUN + 'design = "arms"\n')
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES)  # no arms binaries
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing))
    assert proc.returncode == 2
    assert "run.design" in proc.stderr and "arms_dir" in proc.stderr, proc.stderr[-2000:]


def test_design_blocks_runs_blocks_even_where_arms_could(tmp_path):
    exp = arms_experiment(tmp_path, RUN.replace("min_repetitions = 6\nmax_repetitions = 8", "repetitions = 1")
                          + 'design = "blocks"\nverdicts = false\n')
    proc, out = run_arms(tmp_path, exp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run_dir(out)
    assert json.loads((run_dir / "manifest.json").read_text())["design"]["layout"] == "blocks"
    assert all(r.get("layout") != "arms" for r in read_results(run_dir))
    assert not (run_dir / slicesmod.FILE_NAME).exists()


def test_redeal_reaches_every_runs_bench_and_the_manifest(tmp_path):
    exp = arms_experiment(tmp_path, RUN.replace("min_repetitions = 6\nmax_repetitions = 8", "repetitions = 2")
                          + "verdicts = false\nredeal = true\n")
    log = tmp_path / "arms.log"
    proc, out = run_arms(tmp_path, exp, FAKE_ARMS_LOG=str(log))
    assert proc.returncode == 0, proc.stderr[-3000:]
    argvs = [json.loads(ln)["argv"] for ln in log.read_text().splitlines()]
    assert len(argvs) == 2 and all(a[a.index("--redeal") + 1] == "on" for a in argvs)
    assert json.loads((only_run_dir(out) / "manifest.json").read_text())["design"]["redeal"] is True


def test_redeal_is_off_unless_asked(arms_run):
    assert all("--redeal" not in entry["argv"] for entry in arms_run[1])


def test_redeal_with_blocks_is_refused_naming_the_key(tmp_path):
    exp = arms_experiment(tmp_path, RUN + 'design = "blocks"\nredeal = true\n')
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}}, FAKES, arms=True)
    proc = run_testbed(["run", str(exp), "--out", str(tmp_path / "out")], env_for(listing))
    assert proc.returncode == 2
    assert "run.redeal" in proc.stderr and "blocks" in proc.stderr, proc.stderr[-2000:]


def _dump(path, label: str, instructions: int) -> None:
    path.write_text(f"version: 1\ncmd: bench_arms_pair\ndesc: Trigger: Client Request: {label}\n"
                    f"events: Ir\nsummary: {instructions}\ntotals: {instructions}\n")


def test_callgrind_slice_dumps_give_instructions_per_message_per_arm(tmp_path):
    """Each process dumps every slice it metered; an arm's work is its measured
    throughput slices' instructions over both processes, its messages counted once."""
    from testbed.bench import callgrind_slices
    for pid, side, extra in ((101, "receiver", 0), (202, "sender", 100)):
        (tmp_path / f"callgrind.out.{pid}").write_text("desc: Trigger: Program termination\nevents: Ir\n"
                                                       "totals: 999999\n")  # not a slice
        n = 1
        for rnd, warm in ((0, 1), (1, 0), (2, 0)):
            for arm, label, per_msg in ((0, "cafe", 10), (1, "beef", 30)):
                _dump(tmp_path / f"callgrind.out.{pid}.{n}",
                      f"arms arm={arm} label={label} kind=thr round={rnd} warmup={warm} count=500 "
                      f"messages=500 role={side}", 500 * per_msg + extra)
                n += 1
    found = work_arms.per_arm(callgrind_slices.read_dumps([tmp_path]))
    assert found["cafe"]["messages"] == 1000 and found["cafe"]["slices"] == 2  # warm-up round left out
    assert found["cafe"]["instructions"] == 2 * (5000 + 5100)
    assert found["cafe"]["roles"] == {"receiver", "sender"}
    assert found["beef"]["instructions"] / found["beef"]["messages"] == 60.2


def test_a_bench_variable_that_differs_between_arms_refuses_arms_naming_it(tmp_path):
    """BENCH_SECURITY is read once by the bench, not per arm: as arms every CURVE arm
    would have measured NULL under its name."""
    exp = arms_experiment(tmp_path, RUN + 'design = "arms"\n',
                          extra_sweep='env.BENCH_SECURITY = ["null", "curve"]\n')
    proc, _ = run_arms(tmp_path, exp)
    assert proc.returncode == 2
    assert "run.design" in proc.stderr and "BENCH_SECURITY differs" in proc.stderr, proc.stderr[-2000:]


def _cell(block: str, **params) -> Cell:
    return Cell(cell_id=f"{block}-{sorted(params.items())}", group=block, library="zlink",
                library_name="zlink", kind="bench", pattern="PAIR", transport="tcp", msg_size=64,
                io_threads=1, params=params, block=block)


def test_bench_variables_may_differ_between_blocks_and_library_variables_between_arms():
    null = _cell("a", BENCH_SECURITY="null")
    batched = _cell("a", BENCH_SECURITY="null", ZMQ_ASIO_IN_BATCH_SIZE="16384")
    assert arms.bench_variable_problem([null, _cell("b", BENCH_SECURITY="curve"), batched]) == ""
    plain, buffered = _cell("a", BENCH_SEND_BUFFERS="0"), _cell("a", BENCH_SEND_BUFFERS="16")
    why = arms.bench_variable_problem([plain, buffered])
    assert "BENCH_SEND_BUFFERS differs" in why and "0, 16" in why
    assert "BENCH_SECURITY" in arms.bench_variable_problem([_cell("a"), _cell("a", BENCH_SECURITY="curve")])
