"""Reports: deterministic bytes, the seeds' layout, commands, regenerate --check."""
import argparse
import hashlib
import shutil
from pathlib import Path

import pytest

from fixtures.factory import group_id, make_run
from testbed import paths
from testbed.records import store
from testbed.records.run_dir import RunDir
from testbed.results import inflection_cmd, regenerate, regenerate_cmd, report, report_cmd


def _digest(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("runs"), patterns=("ROUTER_ROUTER",), transports=("tcp",),
                    failed=(("ROUTER_ROUTER", "tcp", 65536, "64 KiB", "zlink", 2),))


def test_rendering_twice_gives_the_same_bytes(run, tmp_path):
    a = report.render_run(run, tmp_path / "a")
    b = report.render_run(run, tmp_path / "b")
    da, db = _digest(a.parent), _digest(b.parent)
    assert da == db and any(k.endswith(".svg") for k in da)
    assert not any(k.endswith(".png") for k in da)  # one format: the SVG the report links
    svg = next((tmp_path / "a" / "figures").glob("*.svg")).read_text()
    assert "<dc:date>" not in svg


def test_report_layout(run, tmp_path):
    text = report.render_run(run, tmp_path).read_text()
    assert "## PATTERN: ROUTER_ROUTER" in text and "### Transport: tcp · 64 KiB" in text
    assert (
        "| Size | Metric | libzmq-4.3.5 | zlink | Diff (%) | 95% CI (%) | Verdict | MDE (%) | n (ref/cand) "
        "| % of ceiling (ref / cand) |"
    ) in text
    assert "(inv)" in text and "BROKEN" not in text and "## Broken ceiling" not in text
    assert "| 64 B | Throughput | " in text and "| FAST | " in text and "| 5/5 |" in text
    assert (
        "## Failed cells" in text
        and "| ROUTER_ROUTER | tcp | 64 KiB | 64 KiB | zlink | 2 | timeout |" in text
    )
    assert "helps up to ~1 KiB, stops helping by ~8 KiB and hurts from ~64 KiB" in text
    assert "build `0123456789abcdef`" in text          # the manifest in brief
    assert "![ROUTER_ROUTER diff % heatmap](figures/router_router-heatmap.svg)" in text


def test_report_without_ceiling(run, tmp_path):
    src = tmp_path / "run"
    shutil.copytree(run, src)
    (src / "ceiling.json").unlink()
    assert "% of ceiling" not in report.render_run(src).read_text()


def test_summary_has_a_block_per_candidate_and_an_aa_block(run, tmp_path):
    text = report.render_run(run, tmp_path).read_text()
    summary = text[text.index("## Summary"):text.index("## Where the gain")]
    assert "### zlink vs libzmq-4.3.5" in summary and "### libzmq-4.3.5-aa vs" not in summary
    assert "| Metric | FAST | SLOW | SAME | AMBIGUOUS | Decided | Comparisons |" in summary
    assert "| Throughput | 5 | 2 | 5 | 0 | 100% | 12 |" in summary  # the factory's known answers
    assert "Biggest wins (FAST):" in summary and "Biggest losses (SLOW):" in summary
    assert "### A/A calibration" in summary
    assert ("This run holds 24 A/A comparisons (throughput and p50 latency), 24 with enough repetitions to "
            "judge; 0 were called FAST or SLOW (0%): within the nominal 5%.") in summary
    # configurations per library and headline metric (throughput, p50, p99), then the error budget
    assert "### Configurations" in summary and "| zlink: 64 KiB vs baseline, throughput |" in summary
    assert "| zlink: 64 KiB vs baseline, latency p99 |" in summary
    assert "### Error budget" in summary and "| library | 36 | 5% | 1.8 |" in summary


def test_calibration_from_a_referenced_run(tmp_path):
    make_run(
        tmp_path,
        experiment="noise-floor",
        run_id="aa",
        libraries=("libzmq-4.3.5",),
        cv=0.05,
        patterns=("ROUTER_ROUTER",),
        transports=("tcp",),
        sizes=(64, 65536),
        configs={"default": {}},
        failed=(),
        ceiling=False,
    )
    main = make_run(tmp_path, run_id="main", aa_alias=False, patterns=("ROUTER_ROUTER",), transports=("tcp",),
                    failed=(), noise_floor_run="../../noise-floor/aa")
    text = report.render_run(main).read_text()
    assert "This run holds no A/A comparison" in text
    assert "The referenced A/A run `aa` holds 4 A/A comparisons (throughput and p50 latency), 4 with" in text


def test_a_library_above_the_ceiling_is_flagged(tmp_path):
    run = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64, 65536), failed=(),
                   ceiling_bps=2.5e9)
    text = report.render_run(run).read_text()
    assert "## Broken ceiling" in text and "a library went beyond the host ceiling" in text
    assert "| PAIR | tcp | 64 KiB | baseline | zlink | Throughput | 119% |" in text
    assert "119% BROKEN" in text


def test_work_per_message_sits_beside_the_verdicts(tmp_path):
    run = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64,), failed=(), work=True,
                   configs={"baseline": {}}, aa_alias=False)
    text = report.render_run(run).read_text()
    assert "Instructions/msg ref / cand (work per message, not speed)" in text
    assert "Cycles/msg ref / cand (work per message, not speed)" in text
    row = next(line for line in text.splitlines() if line.startswith("| 64 B | Throughput |"))
    assert "2,000 / 2,300 (1.15x)" in row and "1,000 / 1,150 (1.15x)" in row


def test_stop_reason_and_placement_shown_where_present(tmp_path):
    def fields(lib, pattern, transport, size, config):
        return {"placement": "split" if size == 64 else "one-core"}
    groups = [{"group": group_id("PAIR", "tcp", s, "baseline"), "stop_reason": "decided"} for s in (64, 1024)]
    run = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64, 1024), failed=(),
                   configs={"baseline": {}}, cell_fields=fields, summary={"groups": groups})
    text = report.render_run(run).read_text()
    assert "### Transport: tcp · baseline · 1 IO threads · placement split\n" in text
    assert "### Transport: tcp · baseline · 1 IO threads · placement one-core\n" in text
    assert "| Stop |" in text and "| decided |" in text


def test_an_adaptive_design_is_judged_at_its_look_confidence(tmp_path):
    design = {
        "adaptive": True,
        "min_repetitions": 5,
        "max_repetitions": 16,
        "confidence": 0.95,
        "margin": 0.03,
        "look_every": 2,
        "looks": 7,
        "look_confidence": 0.9841,
        "time_budget_s": 1200,
        "min_window_s": 0.5,
    }
    run = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64,), failed=(), reps=4,
                   configs={"baseline": {}}, design=design)
    text = report.render_run(run).read_text()
    assert "| verdicts | confidence 98.41% each, SAME inside +/-3% |" in text
    assert (
        "| design | adaptive: 5-16 repetitions a side, 7 looks every 2, run confidence 0.95, budget 1200 s"
        in text
    )
    assert "The interval is 98.41%, not 95%" in text
    assert "AMBIGUOUS (n<5)" in text  # 4 repetitions cannot reach 98.41%
    assert "| Diff (%) | 98.41% CI (%) | Verdict |" in text


def test_a_ceiling_probed_under_another_process_model_bounds_nothing(tmp_path):
    def fields(*_):
        return {"process_model": "two-process"}
    run = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(64, 65536), failed=(),
                   ceiling_bps=2.5e9, ceiling_model="one-process", cell_fields=fields)
    text = report.render_run(run).read_text()
    assert "BROKEN" not in text
    row = next(line for line in text.splitlines() if line.startswith("| 64 KiB | Throughput |"))
    assert row.endswith("| - | unpaired | 0.721 |")  # ceiling share "-", the Test column, then q (BH)
    same = make_run(tmp_path / "same", patterns=("PAIR",), transports=("tcp",), sizes=(64, 65536), failed=(),
                    ceiling_bps=2.5e9, ceiling_model="two-process", cell_fields=fields)
    assert "119% BROKEN" in report.render_run(same).read_text()


def test_report_command(run, tmp_path, capsys):
    args = argparse.Namespace(run_dir=run, out=tmp_path, calibration=None, publish=False)
    assert report_cmd.main(args) == 0
    assert (tmp_path / "report.md").is_file()
    bad = argparse.Namespace(run_dir=tmp_path / "nope", out=None, calibration=None, publish=False)
    assert report_cmd.main(bad) == 2
    assert "no manifest.json" in capsys.readouterr().err
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "manifest.json").write_text('{"schema": "testbed.manifest/9", "run_id": "x"}')
    (tmp_path / "odd" / "results.jsonl").write_text("")
    odd = argparse.Namespace(run_dir=tmp_path / "odd", out=None, calibration=None, publish=False)
    assert report_cmd.main(odd) == 2
    assert "schema 'testbed.manifest/9' is not one this testbed reads" in capsys.readouterr().err


def test_compact_keeps_what_reports_need(run, tmp_path):
    report_cmd.compact(run, tmp_path)
    assert (tmp_path / store.PARQUET_NAME).is_file() and not (tmp_path / store.RESULTS_NAME).exists()
    cells = store.read_run(tmp_path)[0]
    assert all("result" in c for c in cells) and not any("command" in c for c in cells if c["status"] == "ok")
    assert report.render_run(tmp_path).read_text() == report.render_run(run, tmp_path / "x").read_text()


def test_publishing_keeps_the_work_per_message(tmp_path):
    """The run's report has a Work column from work.jsonl; its published copy lost it
    (side-by-side c4a6) until publishing copied that file too."""
    run = make_run(
        tmp_path / "runs", patterns=("PAIR",), transports=("tcp",), sizes=(64,), failed=(), work=True
    )
    report_cmd.compact(run, tmp_path / "pub")
    assert RunDir.open(tmp_path / "pub").work() == RunDir.open(run).work() != {}
    published = report.render_run(tmp_path / "pub").read_text()
    assert "2,300" in published
    assert published == report.render_run(run, tmp_path / "x").read_text()


def test_publishing_names_only_a_published_calibration(run, tmp_path):
    """A published manifest that named results/ (never committed) broke every clone's
    regenerate: a results/ run maps to its published copy, or publishing stops."""
    reports = tmp_path / "reports"
    in_results = tmp_path / "results" / "noise-floor" / "aa-run"
    with pytest.raises(report_cmd.CalibrationNotPublished, match="publish it first"):
        report_cmd.published_calibration(in_results, reports)
    copy = reports / "noise-floor" / "aa-run"
    report_cmd.compact(run, copy)
    assert report_cmd.published_calibration(in_results, reports) == copy.resolve()
    assert report_cmd.published_calibration(copy, reports) == copy.resolve()


def test_inflection_command_on_a_run(run, capsys):
    assert inflection_cmd.main(argparse.Namespace(path=run, metric="throughput_msgs")) == 0
    assert "helps up to ~1 KiB" in capsys.readouterr().out


def test_inflection_command_names_bad_input(tmp_path, capsys):
    assert inflection_cmd.main(argparse.Namespace(path=tmp_path / "x", metric="throughput_msgs")) == 2
    assert inflection_cmd.main(argparse.Namespace(path=tmp_path, metric="bogus")) == 2
    assert "unknown metric 'bogus'" in capsys.readouterr().err


def test_regenerate_builds_run_reports_and_check_sees_changes(run, tmp_path, capsys):
    reports = tmp_path / "reports"
    report_cmd.compact(run, reports / "batch-sweep" / "fixture")
    args = argparse.Namespace(reports=reports, seeds=tmp_path / "no-seeds", check=True, no_notebooks=True)
    assert regenerate_cmd.main(args) == 1
    assert "new: batch-sweep/fixture/report.md" in capsys.readouterr().out
    args.check = False
    assert regenerate_cmd.main(args) == 0
    args.check = True
    assert regenerate_cmd.main(args) == 0
    (reports / "batch-sweep" / "fixture" / "report.md").write_text("edited\n")
    assert regenerate_cmd.main(args) == 1
    assert "changed: batch-sweep/fixture/report.md" in capsys.readouterr().out


def test_regenerate_indexes_the_newest_run_of_each_experiment(run, tmp_path):
    reports = tmp_path / "reports"
    for run_id in ("20261101T000000Z-old1", "20261102T000000Z-new2"):
        report_cmd.compact(run, reports / "batch-sweep" / run_id)
    args = argparse.Namespace(reports=reports, seeds=tmp_path / "no-seeds", check=False, no_notebooks=True)
    assert regenerate_cmd.main(args) == 0
    index = (reports / "index.md").read_text()
    row = next(line for line in index.splitlines() if line.startswith("| batch-sweep |"))
    assert "[20261102T000000Z-new2](batch-sweep/20261102T000000Z-new2/report.md)" in row
    assert "old1" not in row and row.endswith("| 1 |")
    # the superseded run leaves the top table for its own, and its report says so
    superseded = index[index.index("## Superseded runs"):]
    assert "| batch-sweep | [20261101T000000Z-old1](batch-sweep/20261101T000000Z-old1/report.md) | " \
           "[20261102T000000Z-new2]" in superseded
    old_md = (reports / "batch-sweep" / "20261101T000000Z-old1" / "report.md").read_text().splitlines()
    assert old_md[2].startswith("**Superseded** by "
                                "[20261102T000000Z-new2](../20261102T000000Z-new2/report.md)")
    assert "Superseded" not in (reports / "batch-sweep" / "20261102T000000Z-new2" / "report.md").read_text()
    (reports / "index.md").unlink()
    args.check = True
    assert regenerate_cmd.main(args) == 1


@pytest.mark.skipif(not paths.SEEDS_DIR.is_dir(), reason=f"seeds not in {paths.SEEDS_DIR}")
def test_committed_reports_are_current(tmp_path):
    """The seeds import into exactly the committed published/data (every CSV and notes
    file, none missing or extra). published/'s reports and figures are a function of
    those files alone, so with the test below (every report rebuilt from the stored
    data, byte for byte) this is `./testbed regenerate --check --no-notebooks`, drawing
    each published report once instead of twice (~5 CPU-minutes saved per CI run).
    The notebooks' HTML of the published runs is left to `./testbed regenerate
    --check` and the Nix check reports-unchanged (built under NIX_CHECK_FULL=1, not in
    CI); here the notebooks execute on small fixture runs (test_results_notebooks.py)."""
    data = tmp_path / regenerate.PUBLISHED / "data"
    data.mkdir(parents=True)
    regenerate._import_seeds(paths.SEEDS_DIR, data)
    rels = [Path(regenerate.PUBLISHED) / "data"]
    assert regenerate.compare(tmp_path, paths.REPORTS_DIR, rels) == []


@pytest.mark.beside  # minutes of rendering, nothing timed
def test_committed_published_reports_rebuild_without_seeds():
    """Without the seeds, every report.md under reports/ (published/ from its stored data,
    each experiment's runs, index.md) is rebuilt byte for byte from what is committed, and
    so are the figures of published/ and of each experiment's newest run (superseded runs
    have none committed: each holds its report.md and a .gitignore), and the generated
    answer blocks of README.md, zlink/README.md, docs/profiling/README.md and every
    experiment README: `./testbed regenerate --check --no-notebooks`."""
    changes, scratch, _ = regenerate.differences(paths.REPORTS_DIR, None, notebooks=False)
    shutil.rmtree(scratch, ignore_errors=True)
    assert changes == []


def _median_cv(text: str, metric: str, lib: str) -> float:
    block = text[text.index("### Spread within cells"):]
    row = next(line for line in block.splitlines() if line.startswith(f"| {metric} | {lib} |"))
    return float(row.split("|")[4].strip().rstrip("%"))


@pytest.mark.parametrize("cv", [0.005, 0.04])
def test_the_summary_states_the_median_within_cell_spread(tmp_path, cv):
    """The instrument's own noise, per library and metric: the factory draws every
    cell's repetitions with this CV, so the reported median must land near it."""
    run_dir = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), reps=8, cv=cv)
    text = report.render_run(run_dir, tmp_path / "out").read_text()
    for lib in ("libzmq-4.3.5", "zlink"):
        for metric in ("Throughput", "Latency p50"):
            assert 0.5 * 100 * cv < _median_cv(text, metric, lib) < 1.6 * 100 * cv
