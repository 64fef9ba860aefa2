"""The generated answers (issue 43): `./testbed regenerate` writes each current run's
answer into reports/index.md, the experiment README's "Current answer" block and the
bullet blocks of the checkout's READMEs; `--check` fails on a hand-edited block, on an
index row that disagrees with its report, and on a current run that predates its
toml until the block says so. A run published later flows in with regenerate alone."""
import argparse
import shutil

import pytest

from fixtures.factory import make_run
from testbed.results import answer_blocks, regenerate_cmd, report_cmd

TOML = """[experiment]
name = "batch-sweep"
question = "Does a static batch beat the default?"
seed = "none"

[workload]
hwm = 0
hwm_reason = "the fixture's records ran at HWM 0"

[run]
repetitions = 5

[answer]
sentence = "Against the baseline, 64 KiB batches are FAST in {static.FAST} and SLOW in {static.SLOW} \
of {static.n} comparisons ({static.counts})."
[[answer.comparison]]
name = "static"
kind = "configurations"
library = "zlink"
metrics = ["throughput"]
by = ["config"]
"""
RUN1, RUN2 = "20260101T000000Z-aaa1", "20260102T000000Z-bbb2"


def publish(root, run, run_id):
    report_cmd.compact(run, root / "reports" / "batch-sweep" / run_id)
    shutil.copyfile(run / "experiment.toml", root / "reports" / "batch-sweep" / run_id / "experiment.toml")


def regenerate_(root, check):
    args = argparse.Namespace(reports=root / "reports", seeds=root / "no-seeds", check=check,
                              no_notebooks=True, figures_by_name=False)
    return regenerate_cmd.main(args)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A checkout in miniature, regenerated once: one experiment (toml + README), a top
    README quoting it, and one published run of it that kept its toml. Each test edits
    a copy (regenerating is what costs)."""
    tmp = tmp_path_factory.mktemp("answers")
    root = tmp / "checkout"
    folder = root / "experiments" / "batch-sweep"
    folder.mkdir(parents=True)
    (folder / "experiment.toml").write_text(TOML)
    (folder / "README.md").write_text("# batch-sweep\n\nHow it runs.\n\n## Log\n\n- 2026-01-01: first run.\n")
    (root / "README.md").write_text("# top\n\nWhat we know:\n\n"
                                    "<!-- BEGIN generated answers: batch-sweep -->\n"
                                    "<!-- END generated answers -->\n\nMore.\n")
    run = make_run(tmp / "runs", patterns=("PAIR",), transports=("tcp",), sizes=(64, 65536), ceiling=False)
    (run / "experiment.toml").write_text(TOML)
    publish(root, run, RUN1)
    assert regenerate_(root, check=False) == 0
    return root, run


@pytest.fixture
def checkout(rendered, tmp_path):
    root, run = rendered
    copy = tmp_path / "checkout"
    shutil.copytree(root, copy)
    return copy, run


def test_regenerate_writes_the_answer_everywhere_and_check_passes(checkout, capsys):
    root, _ = checkout
    assert regenerate_(root, check=True) == 0, capsys.readouterr().out
    readme = (root / "experiments" / "batch-sweep" / "README.md").read_text()
    report = (root / "reports" / "batch-sweep" / RUN1 / "report.md").read_text()
    sentence = report.split("## Answer\n\n", 1)[1].split("\n", 1)[0]
    assert sentence.startswith("Against the baseline, 64 KiB batches are FAST in ")
    # the README opens with it (under its title), the log stays below
    assert readme.startswith(f"# batch-sweep\n\n{answer_blocks.BEGIN_ANSWER}\n## Current answer\n")
    assert sentence in readme and readme.index(sentence) < readme.index("## Log")
    assert "Settings, from its records: HWM 0" in readme
    top = (root / "README.md").read_text()
    assert f"(run [{RUN1}](reports/batch-sweep/{RUN1}/report.md)" in top and sentence in top
    index = (root / "reports" / "index.md").read_text()
    assert sentence in index and "| HWM 0 (unlimited; the default is 1000)" in index


def test_check_fails_on_a_hand_edited_readme_answer(checkout, capsys):
    root, _ = checkout
    readme = root / "experiments" / "batch-sweep" / "README.md"
    readme.write_text(readme.read_text().replace("FAST in ", "FAST in 9", 1))
    top = root / "README.md"
    top.write_text(top.read_text().replace("FAST in ", "FAST in 9", 1))
    capsys.readouterr()
    assert regenerate_(root, check=True) == 1
    out = capsys.readouterr().out
    assert "answers: experiments/batch-sweep/README.md" in out and "answers: README.md" in out


def test_check_fails_on_an_index_row_or_a_report_that_disagrees(checkout, capsys):
    root, _ = checkout
    index, report = root / "reports" / "index.md", root / "reports" / "batch-sweep" / RUN1 / "report.md"
    for path, line in ((index, "changed: index.md"), (report, f"changed: batch-sweep/{RUN1}/report.md")):
        good = path.read_text()
        path.write_text(good.replace("FAST in ", "FAST in 9", 1))
        capsys.readouterr()
        assert regenerate_(root, check=True) == 1
        assert capsys.readouterr().out.splitlines() == [line]
        path.write_text(good)


def test_a_current_run_that_predates_its_toml_fails_the_check_until_the_answer_says_stale(checkout, capsys):
    root, _ = checkout
    toml = root / "experiments" / "batch-sweep" / "experiment.toml"
    toml.write_text(toml.read_text().replace("repetitions = 5", "repetitions = 8"))
    capsys.readouterr()
    assert regenerate_(root, check=True) == 1
    out = capsys.readouterr().out
    assert "answers: experiments/batch-sweep/README.md" in out and "changed: index.md" in out
    regenerate_(root, check=False)
    for text in ((root / "experiments" / "batch-sweep" / "README.md").read_text(),
                 (root / "reports" / "index.md").read_text(), (root / "README.md").read_text()):
        assert "**Stale**: `experiments/batch-sweep/experiment.toml` changed since this run " \
               "(`run.repetitions`)" in text
    # an edit of the [answer] alone re-reads the run; it does not make it stale
    toml.write_text(toml.read_text().replace("repetitions = 8", "repetitions = 5").replace(
        "64 KiB batches are", "static 64 KiB batches are"))
    regenerate_(root, check=False)
    readme = (root / "experiments" / "batch-sweep" / "README.md").read_text()
    assert "Stale" not in readme and "static 64 KiB batches are" in readme


def test_a_run_published_later_becomes_the_answer_with_regenerate_alone(checkout):
    root, run = checkout
    publish(root, run, RUN2)
    assert regenerate_(root, check=True) == 1
    regenerate_(root, check=False)
    readme = (root / "experiments" / "batch-sweep" / "README.md").read_text()
    assert RUN2 in readme and RUN1 not in readme
    assert f"[{RUN2}](reports/batch-sweep/{RUN2}/report.md)" in (root / "README.md").read_text()


def test_an_unknown_experiment_in_a_marker_is_refused_by_name_before_anything_is_drawn(checkout, capsys):
    root, _ = checkout
    (root / "README.md").write_text("# top\n\n<!-- BEGIN generated answers: batch-sweap -->\n"
                                    "<!-- END generated answers -->\n")
    with pytest.raises(answer_blocks.BlockError, match="batch-sweap, which no toml"):
        answer_blocks.check_markers(root, {"batch-sweep"})
    assert regenerate_(root, check=True) == 2
    assert "README.md: generated answers name batch-sweap" in capsys.readouterr().err
