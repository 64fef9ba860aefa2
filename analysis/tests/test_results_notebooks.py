"""The notebooks execute headless (real kernels, nbclient) against small fixture runs:
an experiment notebook (the template every experiment's notebook is generated from;
test_results_explore checks they are all the template's), the same on a run that
varies placement, and the cross-run notebook. What the experiment notebook shows is
checked against the report of the same run, and its HTML rendering is parsed. A
failing cell is reported with its traceback. `./testbed test --only zlink-kernel`
runs this file again with every kernel on pyzmq built on zlink (notebook_kernel)."""
import json
import shutil
from html.parser import HTMLParser

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

from fixtures.factory import CAND, add_speed_reference, make_run
from testbed import paths
from testbed.results import explore, notebook_exec, regenerate, report

NOTEBOOKS = sorted(p.name for p in paths.NOTEBOOKS_DIR.glob("*.ipynb"))
SMALL = dict(patterns=("PAIR",), transports=("tcp",), sizes=(64, 65536), failed=(), configs={"baseline": {}})


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_stored_without_outputs(name):
    nb = nbformat.read(paths.NOTEBOOKS_DIR / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def _markdown_outputs(nb) -> list[str]:
    return [o["data"]["text/markdown"] for c in nb.cells for o in c.get("outputs", [])
            if "text/markdown" in o.get("data", {})]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    run = make_run(root, experiment="scorecard", work=True, **SMALL)
    add_speed_reference(run)
    nb = notebook_exec.execute(paths.NOTEBOOKS_DIR / "scorecard.ipynb", {"RUN": str(run)}, cwd=root)
    return run, nb, root


def test_the_experiment_notebook_shows_the_reports_tables(executed):
    run, nb, root = executed
    text = notebook_exec.outputs_text(nb)
    assert "Traceback" not in text
    report_text = report.render_run(run, root / "report").read_text()
    shown = _markdown_outputs(nb)
    summary = next(m for m in shown if m.startswith("## Summary"))
    assert summary in report_text and "### zlink vs libzmq-4.3.5" in summary
    detail = next(m for m in shown if m.startswith("## PATTERN: PAIR"))
    tables = [b for b in detail.split("\n\n") if b.startswith("| Size")]
    assert len(tables) == 2 and all(t in report_text for t in tables)
    # the drill-down, the counters and the host speed ran on this run's data
    assert "recomputed" in text and "work_instructions_per_msg" in text and "median_ms" in text
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 3 + 1  # PAIR: throughput, heatmap, latency; host speed


def test_the_html_rendering_parses_and_carries_the_figures(executed):
    _, nb, _ = executed
    html = notebook_exec.to_html(nb)

    class Count(HTMLParser):
        tables = images = 0

        def handle_starttag(self, tag, attrs):
            self.tables += tag == "table"
            self.images += tag == "img" and dict(attrs).get("src", "").startswith("data:image/png;base64,")

    parser = Count()
    parser.feed(html)
    assert parser.tables >= 5 and parser.images == 4
    assert html == notebook_exec.to_html(nb)  # same notebook, same bytes


def test_the_notebook_on_a_run_that_varies_placement(tmp_path):
    run = make_run(tmp_path, cell_fields=lambda lib, p, t, size, cfg: {"placement": "split" if size == 64 else
                                                                       "one-core"}, **SMALL)
    drill = {"pattern": "PAIR", "transport": "tcp", "msg_size": 64, "metric": "throughput_msgs"}
    nb = notebook_exec.execute(paths.NOTEBOOKS_DIR / "placement.ipynb", {"RUN": str(run), "DRILL": drill},
                               cwd=tmp_path)
    text = notebook_exec.outputs_text(nb)
    assert "Traceback" not in text
    assert "placement" in text and "split" in text and "one-core" in text
    assert "no host speed reference recorded in this run" in text


def test_the_cross_run_notebook_lists_replicated_and_flipped_verdicts(tmp_path):
    a = make_run(tmp_path, run_id="a", **SMALL)
    b = make_run(tmp_path, run_id="b", effect=lambda lib, *x: 0.85 if lib == CAND else 1.0, **SMALL)
    nb = notebook_exec.execute(paths.NOTEBOOKS_DIR / "compare-runs.ipynb", {"A": str(a), "B": str(b)},
                               cwd=tmp_path)
    text = notebook_exec.outputs_text(nb)
    assert "Traceback" not in text
    assert "2 comparisons in common" in text and "flipped" in text and "intervals disjoint" in text
    table = explore.replication(explore.open_run(a), explore.open_run(b))
    assert f"{int((table['status'] != 'replicated').sum())} did not replicate" in text


def test_regenerate_renders_the_newest_runs_notebooks_only(tmp_path):
    reports = tmp_path / "reports"
    old = make_run(reports, experiment="scorecard", run_id="20260101T000000Z-aaaa", **SMALL)
    make_run(reports, experiment="scorecard", run_id="20260102T000000Z-bbbb", **SMALL)
    (old / notebook_exec.HTML_NAME).write_text("left over\n")
    changes, scratch, _ = regenerate.differences(reports, None)
    assert "new: scorecard/20260102T000000Z-bbbb/notebook.html" in changes
    assert "stale: scorecard/20260101T000000Z-aaaa/notebook.html" in changes
    assert "new: scorecard/20260102T000000Z-bbbb/compare-runs.html" in changes  # against the run before
    assert not [c for c in changes if "aaaa/compare-runs" in c]
    page = (scratch / "scorecard" / "20260102T000000Z-bbbb" / notebook_exec.HTML_NAME).read_text()
    assert page.startswith("<!DOCTYPE html>") and "## Summary" not in page and "<h2" in page
    assert "Traceback" not in page
    shutil.rmtree(scratch)


def test_a_failing_cell_stops_the_run_with_its_traceback(tmp_path):
    # The error travels as the kernel's iopub error message and execute_reply status.
    parameters = nbformat.v4.new_code_cell("X = 1", metadata={"tags": ["parameters"]})
    cells = [parameters, nbformat.v4.new_code_cell("print('before', X)"),
             nbformat.v4.new_code_cell("raise ValueError(f'deliberate {X}')"),
             nbformat.v4.new_code_cell("print('never reached')")]
    path = tmp_path / "fails.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    with pytest.raises(CellExecutionError) as failure:
        notebook_exec.execute(path, {"X": 7}, cwd=tmp_path)
    assert "ValueError" in str(failure.value) and "deliberate 7" in str(failure.value)


def test_output_split_by_the_kernels_flushes_renders_the_same(tmp_path):
    # ipykernel sends a cell's prints in one stream message per flush (every ~0.2 s), so
    # on a loaded host the same cell's text arrives in more pieces, and stderr before or
    # after stdout: the rendering must not show where the flushes fell.
    parameters = nbformat.v4.new_code_cell("X = 1", metadata={"tags": ["parameters"]})
    flushes = nbformat.v4.new_code_cell(
        "import sys, time\n"
        "print('first line')\nsys.stdout.flush()\ntime.sleep(0.4)\n"
        "print('a warning', file=sys.stderr)\nsys.stderr.flush()\ntime.sleep(0.4)\n"
        "print('second line')")
    path = tmp_path / "flushes.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[parameters, flushes]), path)
    nb = notebook_exec.execute(path, {}, cwd=tmp_path)
    outputs = [(o["name"], o["text"]) for o in nb.cells[1].outputs]
    assert outputs == [("stdout", "first line\nsecond line\n"), ("stderr", "a warning\n")]
    page = notebook_exec.to_html(nb)
    assert page.count("output_stream output_stdout") == 1 and page.count("output_stream output_stderr") == 1


def test_a_second_experiment_file_uses_its_folders_notebook(tmp_path):
    books = tmp_path / "notebooks"
    books.mkdir()
    (books / "scorecard.ipynb").write_text("{}")
    run = tmp_path / "run"
    run.mkdir()
    source = {"experiment_source": "experiments/scorecard/placements.toml"}
    (run / "manifest.json").write_text(json.dumps(source))
    assert notebook_exec.notebook_for("scorecard-placements", run, books) == books / "scorecard.ipynb"
    assert notebook_exec.notebook_for("scorecard", run, books) == books / "scorecard.ipynb"
    (run / "manifest.json").write_text(json.dumps({"experiment_source": "experiments/nowhere/x.toml"}))
    assert notebook_exec.notebook_for("x", run, books) == books / "x.ipynb"  # missing: execute() says so


def test_an_experiment_file_outside_experiments_gets_the_template_notebook(tmp_path, monkeypatch):
    """A before/after run from a toml in /tmp has no notebook of its own: render() runs
    the template's notebook under the run's experiment name instead of failing."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"experiment_source": "/tmp/ab.toml"}))
    seen = {}

    def fake_execute(path, params, cwd=None):
        seen["text"] = path.read_text()
        return nbformat.v4.new_notebook()

    monkeypatch.setattr(notebook_exec, "execute", fake_execute)
    out = notebook_exec.render("engine-ab", run, tmp_path / "out.html", tmp_path / "no-notebooks")
    assert out.is_file()
    assert 'EXPERIMENT = \\"engine-ab\\"' in seen["text"]
