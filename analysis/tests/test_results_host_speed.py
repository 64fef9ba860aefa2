"""The report's host speed section: spread of the reference over the run, the pairs
excluded as host-drift (left out of the verdicts, kept in the data), the figure; and
an old run without the reference loads and reports as before."""
from __future__ import annotations

import shutil

from fixtures.factory import REF, add_speed_reference, group_id, make_run
from testbed.records.run_dir import RunDir
from testbed.results import compare, load, report

DRIFTED = (group_id("ROUTER_ROUTER", "tcp", 64, "baseline"), 2)


def run(tmp_path, **kw):
    return make_run(tmp_path / "runs", patterns=("ROUTER_ROUTER",), transports=("tcp",), sizes=(64, 65536),
                    failed=(), **kw)


def test_an_old_run_without_the_reference_loads_and_reports(tmp_path):
    run_dir = run(tmp_path)
    df = load.load_run(run_dir)
    assert set(df["status"]) == {"ok"}
    text = report.render_run(run_dir, tmp_path / "out").read_text()
    assert "## Host speed" not in text and "## Summary" in text
    assert not (tmp_path / "out" / "figures" / "host-speed.svg").exists()


def test_a_drifted_pair_is_left_out_of_the_verdicts_and_kept_in_the_data(tmp_path):
    run_dir = add_speed_reference(run(tmp_path), drifted=[DRIFTED])
    df = load.load_run(run_dir)
    drifted = df[df["status"] == "host-drift"]
    assert set(drifted["repetition"]) == {2} and set(drifted["msg_size"]) == {64}
    assert set(drifted["config"]) == {"baseline"} and drifted["value"].notna().all()  # still measured
    assert load.failed_attempts(df).empty                     # not a failure
    cmp = compare.compare_run(df, RunDir.open(run_dir).manifest)
    lib = cmp[(cmp["kind"] == "library") & (cmp["metric"] == "throughput_msgs")]
    by_cell = {(r["msg_size"], r["config"]): (r["n_ref"], r["n_cand"]) for r in lib.to_dict("records")}
    assert by_cell[(64, "baseline")] == (4, 4) and by_cell[(65536, "baseline")] == (5, 5)


def test_the_report_shows_host_speed_and_the_exclusions(tmp_path):
    run_dir = add_speed_reference(run(tmp_path), drifted=[DRIFTED])
    text = report.render_run(run_dir, tmp_path / "out").read_text()
    sec = text[text.index("## Host speed"):]
    sec = sec[:sec.index("\n## ", 5)]
    assert "moved by more than 5% between its start and its end is excluded" in sec
    assert "| Pairs | Measurements | Median (ms) | Min (ms) | Max (ms) | CV |" in sec
    assert "| 20 | 40 | 25.00 | 25.00 | 27.50 | 1.6% | - | 10.0% | 1 of 20 |" in sec
    assert "| ROUTER_ROUTER tcp 64 B baseline | 2 | 25.00 | 27.50 | 10.0% | host-drift: > 5% |" in sec
    assert "![Host speed reference against wall time](figures/host-speed.svg)" in sec
    assert (tmp_path / "out" / "figures" / "host-speed.svg").is_file()
    assert "| 4/4 |" in text                                   # the drifted pair is not in n


def test_a_run_with_the_reference_switched_off_says_so(tmp_path):
    run_dir = run(tmp_path)
    add_speed_reference(run_dir)
    (run_dir / "speed.jsonl").unlink()
    man = (run_dir / "manifest.json").read_text().replace('"present": true', '"present": false')
    (run_dir / "manifest.json").write_text(man)
    text = report.render_run(run_dir, tmp_path / "out").read_text()
    assert "No host speed reference was recorded for this run (`speed_reference = false`)." in text


def test_rendering_with_the_reference_is_byte_stable(tmp_path):
    run_dir = add_speed_reference(run(tmp_path), drifted=[DRIFTED])
    a = report.render_run(run_dir, tmp_path / "a")
    b = report.render_run(run_dir, tmp_path / "b")
    assert a.read_bytes() == b.read_bytes()
    svg = "figures/host-speed.svg"
    assert (tmp_path / "a" / svg).read_bytes() == (tmp_path / "b" / svg).read_bytes()


def test_publishing_keeps_the_reference(tmp_path):
    from testbed.results import report_cmd
    run_dir = add_speed_reference(run(tmp_path), drifted=[DRIFTED])
    report_cmd.compact(run_dir, tmp_path / "pub")
    published = RunDir.open(tmp_path / "pub")
    assert published.speed_lines() == RunDir.open(run_dir).speed_lines() != []
    assert (tmp_path / "pub" / "speed.jsonl.gz").is_file()  # stored gzipped (store.pack_side_files)
    shutil.rmtree(run_dir)
    assert REF in report.render_run(tmp_path / "pub", tmp_path / "out").read_text()
