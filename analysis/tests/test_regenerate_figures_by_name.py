"""regenerate.compare: byte for byte by default; with figures_by_name the files the
plotting toolchain draws (.png/.svg/.html) count by name only, while markdown and data
still differ byte for byte (the Nix reports-unchanged check relies on both halves)."""
from pathlib import Path

from testbed.results import regenerate


def _tree(root: Path, png: bytes = b"png-a", md: str = "# report\n", extra: bool = False) -> Path:
    run = root / "exp" / "run1"
    (run / "figures").mkdir(parents=True)
    (run / "report.md").write_text(md)
    (run / "figures" / "throughput.png").write_bytes(png)
    (run / "figures" / "throughput.svg").write_text("<svg>" + png.decode() + "</svg>")
    (run / "notebook.html").write_text("<html>" + png.decode() + "</html>")
    (root / "data.csv").write_text("a,b\n1,2\n")
    if extra:
        (run / "figures" / "latency.png").write_bytes(b"extra")
    return root


RELS = [Path("exp/run1"), Path("data.csv")]


def test_a_redrawn_figure_is_a_change_byte_for_byte_but_not_by_name(tmp_path):
    fresh = _tree(tmp_path / "fresh", png=b"png-b")
    current = _tree(tmp_path / "current", png=b"png-a")
    assert regenerate.compare(fresh, current, RELS) == [
        "changed: exp/run1/figures/throughput.png",
        "changed: exp/run1/figures/throughput.svg",
        "changed: exp/run1/notebook.html",
    ]
    assert regenerate.compare(fresh, current, RELS, figures_by_name=True) == []


def test_markdown_and_data_stay_byte_for_byte_by_name(tmp_path):
    fresh = _tree(tmp_path / "fresh", md="# report\n1.00x\n")
    current = _tree(tmp_path / "current", md="# report\n1.01x\n")
    (fresh / "data.csv").write_text("a,b\n1,3\n")
    assert regenerate.compare(fresh, current, RELS, figures_by_name=True) == [
        "changed: data.csv",
        "changed: exp/run1/report.md",
    ]


def test_a_missing_or_extra_figure_counts_by_name(tmp_path):
    fresh = _tree(tmp_path / "fresh", extra=True)
    current = _tree(tmp_path / "current")
    assert regenerate.compare(fresh, current, RELS, figures_by_name=True) == [
        "new: exp/run1/figures/latency.png"]
    assert regenerate.compare(current, fresh, RELS, figures_by_name=True) == [
        "stale: exp/run1/figures/latency.png"]


def test_the_command_passes_a_redrawn_figure_by_name_and_says_so(tmp_path, capsys):
    """`regenerate --check --figures-by-name` on a rendered fixture run: an SVG with other
    bytes fails the plain --check and passes by name (the run says how many files it did
    not compare by content); an edited report.md fails both."""
    import argparse

    from fixtures.factory import make_run
    from testbed.results import regenerate_cmd, report_cmd

    run = make_run(tmp_path / "runs", patterns=("PAIR",), transports=("tcp",))
    reports = tmp_path / "reports"
    report_cmd.compact(run, reports / "batch-sweep" / "fixture")
    args = argparse.Namespace(reports=reports, seeds=tmp_path / "no-seeds", check=False, no_notebooks=True,
                              figures_by_name=False)
    assert regenerate_cmd.main(args) == 0
    png = sorted((reports / "batch-sweep" / "fixture").rglob("*.svg"))[0]
    png.write_bytes(png.read_bytes() + b"drawn by another matplotlib")
    args.check = True
    assert regenerate_cmd.main(args) == 1
    assert f"changed: {png.relative_to(reports)}" in capsys.readouterr().out
    args.figures_by_name = True
    assert regenerate_cmd.main(args) == 0
    assert "compared by name only, NOT by content" in capsys.readouterr().err
    (reports / "batch-sweep" / "fixture" / "report.md").write_text("edited\n")
    assert regenerate_cmd.main(args) == 1
    assert "changed: batch-sweep/fixture/report.md" in capsys.readouterr().out
    args.check = False
    assert regenerate_cmd.main(args) == 2  # --figures-by-name only with --check
