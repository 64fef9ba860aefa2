"""Run a notebook headless with parameters (papermill's convention: a cell tagged
`parameters` holds the defaults; a cell tagged `injected-parameters` inserted after it
sets the given values) and render it to HTML (nbconvert), so an executed notebook can
be read without Jupyter. Used by the tests, by `./testbed regenerate` (notebook.html
beside each experiment's newest published report) and by `./testbed notebook --html`.

The HTML is byte-stable for the same inputs: no execution timestamps are recorded,
cell ids are fixed by the generator, figures are PNGs without a software tag, and a
cell's printed text is one stdout and one stderr output however the kernel's flushes
split it."""
from __future__ import annotations

import copy
import html
import os
import tempfile
from pathlib import Path

import nbformat
from jupyter_client import KernelManager
from nbclient import NotebookClient

from testbed import paths
from testbed.records.run_dir import RunDir, RunDirError
from testbed.results import notebook_gen
from testbed.toolchain import notebook_kernel

HTML_NAME = "notebook.html"
CROSS_RUN_HTML = "compare-runs.html"
# Experiments whose newest run also gets the cross-run notebook against the run before it.
CROSS_RUN_EXPERIMENTS = ("scorecard",)
TIMEOUT_S = 600


def inject(nb: nbformat.NotebookNode, params: dict) -> nbformat.NotebookNode:
    """A copy of nb with `params` assigned right after its parameters cell."""
    nb = copy.deepcopy(nb)
    at = next((i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), None)
    if at is None:
        raise ValueError("the notebook has no cell tagged 'parameters'")
    if params:
        cell = nbformat.v4.new_code_cell("\n".join(f"{k} = {v!r}" for k, v in params.items()))
        cell.metadata["tags"] = ["injected-parameters"]
        cell["id"] = "injected-parameters"
        nb.cells.insert(at + 1, cell)
    return nb


def execute(path: Path, params: dict | None = None, cwd: Path | None = None) -> nbformat.NotebookNode:
    """Execute the notebook at `path` with `params`; raises nbclient's CellExecutionError
    (naming the cell and the traceback) when a cell fails."""
    nb = inject(nbformat.read(Path(path), as_version=4), params or {})
    with tempfile.TemporaryDirectory(prefix="testbed-kernel-") as runtime:
        # The kernel's connection file in a place of its own (a Nix build has no HOME;
        # renderings run in parallel), the package on the kernel's path, no GUI backend.
        # Nothing here changes this process's environment, so threads may call it.
        km = KernelManager(kernel_name="python3", connection_file=os.path.join(runtime, "kernel.json"))
        pythonpath = [str(paths.REPO_ROOT / "analysis")] + ([os.environ["PYTHONPATH"]]
                                                            if os.environ.get("PYTHONPATH") else [])
        env = dict(os.environ, JUPYTER_RUNTIME_DIR=runtime, PYTHONPATH=os.pathsep.join(pythonpath),
                   MPLBACKEND="Agg")
        # A chosen pyzmq build for the kernel (notebook_kernel: zlink in ./testbed test),
        # checked on the kernel's own memory map as soon as it answers.
        choice = notebook_kernel.from_environ()
        check = notebook_kernel.Check(choice, km) if choice is not None else None
        if choice is not None:
            env = notebook_kernel.kernel_env(choice, env, Path(runtime))
        # coalesce_streams: the kernel sends a cell's prints in one message per flush
        # (~0.2 s apart), so a loaded host splits the same text differently and may put
        # stderr first; one stdout then one stderr output per cell keeps the HTML stable.
        client = NotebookClient(nb, km=km, timeout=TIMEOUT_S, kernel_name="python3", record_timing=False,
                                coalesce_streams=True,
                                resources={"metadata": {"path": str(cwd or paths.REPO_ROOT)}},
                                on_notebook_start=check)
        try:
            client.execute(env=env)
        finally:
            # nbclient leaves a kernel it did not create running; stop it here.
            if km.has_kernel:
                km.shutdown_kernel(now=True)
            if check is not None:
                check.raise_mismatch()  # over a failing cell too: the library comes first
        if check is not None:
            check.raise_unverified()
    return nb


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em; line-height: 1.4; }}
.jp-InputArea, .input_area {{ background: #f5f5f5; font-family: monospace; overflow-x: auto; }}
pre {{ overflow-x: auto; }}
table {{ border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }}
th, td {{ border: 1px solid #ccc; padding: 2px 6px; text-align: right; }}
img {{ max-width: 100%; }}
</style>
</head>
<body>
{body}
</body>
</html>
"""


def to_html(nb: nbformat.NotebookNode, title: str = "notebook") -> str:
    """The executed notebook as one self-contained page: nbconvert's `basic` template
    (the cells, no theme) in a page of our own, so the bytes depend on the notebook
    and not on the theme CSS a given nbconvert version ships."""
    from nbconvert import HTMLExporter
    body, _ = HTMLExporter(template_name="basic").from_notebook_node(nb)
    return PAGE.format(title=html.escape(title), body=body.strip())


def outputs_text(nb: nbformat.NotebookNode) -> str:
    """Every output's text (stream, plain text and markdown), in order."""
    parts = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            parts.append(o.get("text", ""))
            data = o.get("data", {})
            parts += [data.get("text/markdown", ""), data.get("text/plain", "")]
            if o.get("output_type") == "error":
                parts.append("\n".join(o.get("traceback", [])))
    return "\n".join(p for p in parts if p)


def _shown(run_dir: Path) -> str:
    """The path a rendering shows: relative to the clone, so no machine paths."""
    run = Path(run_dir).resolve()
    return str(run.relative_to(paths.REPO_ROOT) if run.is_relative_to(paths.REPO_ROOT) else run)


def notebook_for(experiment: str, run_dir: Path, notebooks_dir: Path | None = None) -> Path:
    """The experiment's notebook; for a second experiment file in a folder (e.g.
    experiments/scorecard/placements.toml, experiment `scorecard-placements`), the
    folder's notebook, named by the run's manifest (`experiment_source`)."""
    root = Path(notebooks_dir or paths.NOTEBOOKS_DIR)
    own = root / f"{experiment}.ipynb"
    if own.is_file():
        return own
    try:
        source = RunDir.open(run_dir).manifest_json().get("experiment_source") or ""
    except RunDirError:
        source = ""
    folder = root / f"{Path(source).parent.name}.ipynb"
    if source and folder.is_file():
        return folder
    return own  # missing: execute() reports it


def render(experiment: str, run_dir: Path, out: Path, notebooks_dir: Path | None = None) -> Path:
    """Execute the experiment's notebook on run_dir and write its HTML to `out`. A run
    of an experiment file outside experiments/ (e.g. a before/after made in /tmp) has
    no notebook of its own: it gets the one every experiment notebook is generated
    from (results/notebook_gen.py), under its own name."""
    path = notebook_for(experiment, run_dir, notebooks_dir)
    with tempfile.TemporaryDirectory() as tmp:
        if not path.is_file():
            path = Path(tmp) / f"{experiment}.ipynb"
            nbformat.write(notebook_gen.experiment_notebook(experiment), path)
        nb = execute(path, {"RUN": _shown(run_dir)}, cwd=paths.REPO_ROOT)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(to_html(nb, f"{experiment} · {Path(run_dir).name}"))
    return out


def render_cross_run(a: Path, b: Path, out: Path, notebooks_dir: Path | None = None) -> Path:
    """Execute the cross-run notebook on runs a and b and write its HTML to `out`."""
    nb = execute(Path(notebooks_dir or paths.NOTEBOOKS_DIR) / "compare-runs.ipynb",
                 {"A": _shown(a), "B": _shown(b)}, cwd=paths.REPO_ROOT)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(to_html(nb, f"{Path(a).name} against {Path(b).name}"))
    return out
