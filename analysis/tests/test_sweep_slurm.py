"""`./testbed run --slurm` without a cluster: the sbatch script, the errors when sbatch is
missing or refuses, a job whose second task never ran (a fake sbatch that runs only
task 1), `./testbed merge SLURM_DIR` while tasks are queued, and SIGTERM (what scancel
sends) stopping a run like Ctrl-C. About 90 s on a loaded 2-core machine, most of it
the lost-task test. The real cluster is test_sweep_slurm_cluster.py."""
from __future__ import annotations

import json
import os
import signal
import textwrap
from pathlib import Path

from test_sweep_support import (
    env_for,
    interrupt_a_run,
    make_prebuilt,
    only_run_dir,
    read_results,
    run_testbed,
    write_experiment,
)
from testbed import cli
from testbed.sweep import slurm_client, slurm_script


def _spec(tmp_path: Path, **kw) -> slurm_script.JobSpec:
    base = dict(experiment="fake-exp", tasks=2, slurm_dir=tmp_path / "s", workdir=tmp_path,
                command=["python3", "-m", "testbed.cli", "run", "x", "--shard", f"{slurm_script.TASK}/2"])
    return slurm_script.JobSpec(**{**base, **kw})


def test_script_runs_one_exclusive_single_node_shard_per_task(tmp_path):
    text = slurm_script.text(_spec(tmp_path, partition="quiet", options=["--time=01:00:00"]))
    lines = text.splitlines()
    for directive in ("--array=1-2", "--nodes=1", "--ntasks=1", "--exclusive", "--export=ALL",
                      "--partition=quiet", f"--output={tmp_path / 's' / 'logs' / 'task-%a.out'}"):
        assert f"#SBATCH {directive}" in lines, directive
    assert lines.index("#SBATCH --time=01:00:00") > lines.index("#SBATCH --partition=quiet")  # user's last
    assert "--shard ${SLURM_ARRAY_TASK_ID}/2" in text
    assert f"echo $rc > {tmp_path / 's' / 'logs'}/task-\"$SLURM_ARRAY_TASK_ID\".rc" in text


def test_a_bad_extra_option_is_refused_by_name():
    for bad in ("time=1", "--time=1\n#SBATCH --x"):
        try:
            slurm_script.check_option(bad)
        except ValueError as exc:
            assert "--slurm-option" in str(exc)
        else:
            raise AssertionError(f"{bad!r} accepted")


def test_queue_lines_parse_per_task_and_for_an_unsplit_pending_array():
    queue = slurm_client.parse_queue("1|RUNNING|vm|None\n2-3%1|PENDING||JobArrayTaskLimit\n")
    assert queue[1] == slurm_client.TaskState("RUNNING", "vm", "None")
    assert queue[2].state == queue[3].state == "PENDING" and set(queue) == {1, 2, 3}
    assert queue[1].text() == "RUNNING on vm" and queue[3].text() == "PENDING (JobArrayTaskLimit)"


def _tools(tmp_path: Path, sbatch_body: str) -> Path:
    """A bin directory with a fake sbatch (the given body) and an squeue that lists nothing."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, body in (("sbatch", sbatch_body), ("squeue", "exit 0")):
        path = bindir / name
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(0o755)
    return bindir


def _env(tmp_path: Path, bindir: Path | None) -> dict:
    """The fake tools first on PATH; without any, a PATH with no Slurm client (the
    check comes before anything else needs a tool)."""
    listing = make_prebuilt(tmp_path, {"libzmq-4.3.5": {}, "zlink": {}})
    env = env_for(listing, TESTBED_SLURM_POLL_S="0.1")
    if bindir is None:
        (tmp_path / "empty-bin").mkdir()
        env["PATH"] = str(tmp_path / "empty-bin")
    else:
        env["PATH"] = os.pathsep.join([str(bindir), env["PATH"]])
    return env


def _run_here(args: list[str], env: dict, monkeypatch, capsys) -> tuple[int, str]:
    """`./testbed run ...` in this process (bad input stops before any bench runs)."""
    for key in ("PATH", "TESTBED_PREBUILT"):
        monkeypatch.setenv(key, env[key])
    code = cli.main(["run", *args])
    return code, capsys.readouterr().err


def test_missing_sbatch_is_one_clear_line(tmp_path, monkeypatch, capsys):
    exp = write_experiment(tmp_path)
    code, err = _run_here([str(exp), "--slurm", "--out", str(tmp_path / "out")], _env(tmp_path, None),
                          monkeypatch, capsys)
    assert code == 2
    assert "sbatch" in err and "slurm-client" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_options_that_need_slurm_or_contradict_it_are_refused(tmp_path, monkeypatch, capsys):
    exp = write_experiment(tmp_path)
    env = _env(tmp_path, _tools(tmp_path, "exit 1"))
    for args, needle in ((["--slurm-tasks", "2"], "only apply with --slurm"),
                         (["--slurm", "--shard", "1/2"], "--slurm cannot take --shard"),
                         (["--slurm", "--slurm-tasks", "5"], "--slurm-tasks 5: the sweep has 4 block(s)"),
                         (["--slurm", "--slurm-option", "time=1"], "--slurm-option 'time=1'")):
        code, err = _run_here([str(exp), "--out", str(tmp_path / "out"), *args], env, monkeypatch, capsys)
        assert code == 2 and needle in err, (args, err)
    assert not (tmp_path / "out").exists()


def test_sbatch_refusal_is_shown_and_the_script_kept(tmp_path):
    bindir = _tools(tmp_path, 'echo "sbatch: error: invalid partition specified: nope" >&2; exit 1')
    exp = write_experiment(tmp_path)
    proc = run_testbed(["run", str(exp), "--slurm", "--slurm-partition", "nope",
                        "--out", str(tmp_path / "out")], _env(tmp_path, bindir))
    assert proc.returncode == 2, proc.stderr
    assert "sbatch refused" in proc.stderr and "invalid partition specified: nope" in proc.stderr
    script = next((tmp_path / "out").glob("fake-exp/*-slurm/sweep.sbatch"))
    assert "#SBATCH --partition=nope" in script.read_text() and str(script) in proc.stderr


def test_a_task_that_never_ran_is_named_and_the_finished_shard_merged(tmp_path):
    # The fake scheduler runs task 1 at once and loses task 2 (as a node failure would).
    bindir = _tools(tmp_path, textwrap.dedent('''\
        script="${@: -1}"
        SLURM_ARRAY_TASK_ID=1 SLURM_JOB_ID=77 bash "$script" > /dev/null 2>&1
        echo 77'''))
    exp = write_experiment(tmp_path)
    out = tmp_path / "out"
    # Task 2 writes no status and squeue never lists it: the run waits the first-sight
    # grace (30 s by default) before it calls the task lost; 2 s here.
    env = {**_env(tmp_path, bindir), "TESTBED_SLURM_FIRST_SIGHT_S": "2"}
    proc = run_testbed(["run", str(exp), "--slurm", "--slurm-tasks", "2", "--out", str(out)], env)
    assert proc.returncode == 1, proc.stderr
    assert "task 2 (shard 2/2): no exit status" in proc.stderr
    assert "task 1 (shard 1/2) on " in proc.stderr and "did not finish cleanly" in proc.stderr
    merged = only_run_dir_named(out, "-merged")
    m = json.loads((merged / "manifest.json").read_text())
    assert m["status"] == "incomplete" and m["missing_shards"] == [2]
    assert [o["exit"] for o in m["slurm"]["outcomes"]] == [0, None] and m["slurm"]["job_id"] == "77"
    shard1 = only_run_dir(next(out.glob("fake-exp/*-slurm")) / "shards")
    assert 0 < len(read_results(merged)) == len(read_results(shard1)) < 32
    # `./testbed merge SLURM_DIR` does the same from the directory alone (the --no-wait path)
    again = run_testbed(["merge", str(next(out.glob("fake-exp/*-slurm"))), "--out", str(tmp_path / "m2")],
                        _env(tmp_path / "e2", bindir))
    assert again.returncode == 1 and "task 2 (shard 2/2): no exit status" in again.stderr
    assert len(read_results(only_run_dir(tmp_path / "m2"))) == len(read_results(shard1))


def only_run_dir_named(out: Path, suffix: str) -> Path:
    dirs = [p.parent for p in out.glob("*/*/manifest.json") if p.parent.name.endswith(suffix)]
    assert len(dirs) == 1, dirs
    return dirs[0]


def test_sigterm_stops_a_run_like_ctrl_c(tmp_path):
    """scancel and a task's time limit send SIGTERM: the shard must end interrupted and
    resumable, its bench processes gone, not be left 'running'."""
    exp, out, _, code, err = interrupt_a_run(tmp_path, signal.SIGTERM, wait_s=90)
    assert code == 130, err
    run_dir = only_run_dir(out)
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "interrupted"
    assert f"--resume {run_dir}" in err


def test_merging_a_slurm_dir_waits_until_its_tasks_left_the_queue(tmp_path, monkeypatch, capsys):
    bindir = _tools(tmp_path, "exit 1")
    (bindir / "squeue").write_text("#!/bin/bash\necho '2|RUNNING|node7|None'\n")
    slurm_dir = tmp_path / "fake-exp" / "x-slurm"
    slurm_dir.mkdir(parents=True)
    (slurm_dir / "slurm.json").write_text(json.dumps({"job_id": "41", "tasks": 2}))
    monkeypatch.setenv("PATH", os.pathsep.join([str(bindir), os.environ["PATH"]]))
    assert cli.main(["merge", str(slurm_dir), "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "slurm job 41 is not over (task 2 RUNNING on node7, 1 of 2 left the queue)" in err, err
    assert not (tmp_path / "m").exists()
