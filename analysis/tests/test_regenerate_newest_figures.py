"""regenerate with superseded_figures=False (`--newest-figures-only`): a superseded run's
report.md is rebuilt byte for byte without drawing its figures; its committed figures are
neither checked nor touched; the newest run's figures still are."""
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


def _reports(tmp_path):
    """One experiment with two published runs of the same fixture: `old` is superseded."""
    run = make_run(tmp_path / "runs", patterns=("PAIR",), transports=("tcp",))
    reports = tmp_path / "reports"
    old, new = (reports / "batch-sweep" / f"20260101T00000{i}Z-aaa{i}" for i in (0, 1))
    report_cmd.compact(run, old)
    shutil.copytree(old, new)  # the same data: regenerate below renders both
    args = argparse.Namespace(reports=reports, seeds=tmp_path / "no-seeds", check=False, no_notebooks=True,
                              figures_by_name=False, newest_figures_only=False)
    assert regenerate_cmd.main(args) == 0
    return reports, old, new, args


def test_only_the_newest_runs_figures_are_checked_and_the_text_of_every_run(tmp_path, capsys):
    reports, old, new, args = _reports(tmp_path)
    old_png = sorted((old / report.FIGURES).glob("*.png"))[0]
    old_png.write_bytes(b"a superseded figure edited by hand")
    args.check = args.newest_figures_only = True
    assert regenerate_cmd.main(args) == 0
    assert "the figures of 1 superseded run(s) were NOT drawn or checked" in capsys.readouterr().err
    args.newest_figures_only = False
    assert regenerate_cmd.main(args) == 1
    assert f"changed: {old_png.relative_to(reports)}" in capsys.readouterr().out

    args.newest_figures_only = True
    new_png = sorted((new / report.FIGURES).glob("*.png"))[0]
    new_png.write_bytes(b"the newest run's figure edited")
    (old / "report.md").write_text("edited\n")
    assert regenerate_cmd.main(args) == 1
    out = capsys.readouterr().out
    assert f"changed: {new_png.relative_to(reports)}" in out
    assert f"changed: {(old / 'report.md').relative_to(reports)}" in out


def test_syncing_without_superseded_figures_keeps_them(tmp_path):
    """A sync must never delete what it did not draw: the superseded figures stay."""
    reports, old, new, args = _reports(tmp_path)
    before = sorted(p.name for p in (old / report.FIGURES).iterdir())
    (new / "report.md").write_text("stale\n")
    args.newest_figures_only = True
    assert regenerate_cmd.main(args) == 0
    assert sorted(p.name for p in (old / report.FIGURES).iterdir()) == before
    assert (new / "report.md").read_text() != "stale\n"
    changes, scratch, managed = regenerate.differences(reports, None, notebooks=False,
                                                       superseded_figures=False)
    shutil.rmtree(scratch, ignore_errors=True)
    assert changes == []
    assert old.relative_to(reports) / report.FIGURES not in managed
    assert new.relative_to(reports) / report.FIGURES in managed
