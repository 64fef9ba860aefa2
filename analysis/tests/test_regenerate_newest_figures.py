"""Superseded runs keep their data and report.md; their figures are drawn on demand and
never committed (issue 43.6: reports/ must fit a clone). regenerate draws only each
experiment's newest run's figures, removes the committed figures of a run that became
superseded, leaves figures drawn on demand (`--draw-superseded`) alone, and gives every
superseded run a .gitignore that keeps them out of git."""
import argparse
import shutil

from fixtures.factory import make_run
from testbed.results import regenerate, regenerate_cmd, report, report_cmd


def test_a_report_without_drawing_has_the_same_text_and_no_figure_file(tmp_path):
    run = make_run(tmp_path / "runs", patterns=("PAIR",), transports=("tcp",))
    drawn = report.render_run(run, tmp_path / "drawn")
    bare = report.render_run(run, tmp_path / "bare", draw=False)
    assert bare.read_text() == drawn.read_text()
    assert "![PAIR throughput vs size](figures/" in drawn.read_text()
    assert sorted((tmp_path / "drawn" / report.FIGURES).glob("*.svg"))
    assert not (tmp_path / "bare" / report.FIGURES).exists()


def _args(reports, tmp_path, check=False, **more):
    return argparse.Namespace(reports=reports, seeds=tmp_path / "no-seeds", check=check, no_notebooks=True,
                              figures_by_name=False, **more)


def test_a_run_that_becomes_superseded_loses_its_committed_figures(tmp_path, capsys):
    run = make_run(tmp_path / "runs", patterns=("PAIR",), transports=("tcp",))
    reports = tmp_path / "reports"
    old, new = (reports / "batch-sweep" / f"20260101T00000{i}Z-aaa{i}" for i in (0, 1))
    report_cmd.compact(run, old)
    assert regenerate_cmd.main(_args(reports, tmp_path)) == 0
    figures = sorted((old / report.FIGURES).glob("*.svg"))
    assert figures and not (old / regenerate.GITIGNORE).exists()   # current: drawn and committed
    shutil.copytree(old, new, ignore=shutil.ignore_patterns(report.FIGURES, "report.md"))
    capsys.readouterr()
    assert regenerate_cmd.main(_args(reports, tmp_path, check=True)) == 1
    out = capsys.readouterr().out
    assert f"stale: {figures[0].relative_to(reports)}" in out       # old's figures must go
    assert f"new: {(old / regenerate.GITIGNORE).relative_to(reports)}" in out
    assert regenerate_cmd.main(_args(reports, tmp_path)) == 0
    assert not (old / report.FIGURES).exists() and sorted((new / report.FIGURES).glob("*.svg"))
    assert (old / regenerate.GITIGNORE).read_text().splitlines()[-1] == f"{report.FIGURES}/"
    text = (old / "report.md").read_text()
    assert "Its figures are not committed: `./testbed regenerate --draw-superseded` draws them." in text
    assert regenerate_cmd.main(_args(reports, tmp_path, check=True)) == 0

    # drawn on demand: there, linked from its report, and neither checked nor removed
    assert regenerate_cmd.main(_args(reports, tmp_path, draw_superseded=True)) == 0
    drawn = sorted(p.name for p in (old / report.FIGURES).glob("*.svg"))
    assert drawn == [p.name for p in figures] and (old / report.FIGURES / regenerate.ON_DEMAND).is_file()
    assert regenerate_cmd.main(_args(reports, tmp_path, check=True)) == 0
    assert regenerate_cmd.main(_args(reports, tmp_path)) == 0
    assert sorted(p.name for p in (old / report.FIGURES).glob("*.svg")) == drawn
