"""`./testbed notebook [EXPERIMENT] [--run DIR]`: Jupyter Lab on notebooks/ with the
project's Python, opening the experiment's notebook (its run: DIR, else the newest
published one). JupyterLab is the optional extra [notebook] of analysis/pyproject.toml,
installed on first use. `--html` opens the notebook's HTML rendering instead, no
Jupyter needed (the published one beside the report, or rendered now for --run);
`--generate` rewrites notebooks/ from the template (results/notebook_gen.py)."""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import webbrowser
from pathlib import Path

from testbed import paths

from . import notebook_exec, notebook_gen


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment", nargs="?", help="open this experiment's notebook (default: the folder)")
    parser.add_argument("--run", help="the run directory the notebook reads "
                                      "(default: the newest published run)")
    parser.add_argument("--html", action="store_true",
                        help="open the executed notebook as HTML instead of Jupyter Lab")
    parser.add_argument("--generate", action="store_true",
                        help="rewrite notebooks/ from the template and exit")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--port", type=int, help="port for Jupyter Lab")


def ensure_jupyterlab() -> bool:
    if importlib.util.find_spec("jupyterlab") is not None:
        return True
    uv = shutil.which("uv")
    if not uv:
        print("testbed notebook: JupyterLab is not installed and uv was not found; run "
              "`python -m pip install uv` first", file=sys.stderr)
        return False
    print("testbed notebook: installing the optional extra [notebook] (JupyterLab) into the project venv, "
          "once", file=sys.stderr)
    cmd = [uv, "pip", "install", "--python", sys.executable, "-e",
           f"{paths.REPO_ROOT / 'analysis'}[notebook]"]
    if subprocess.run(cmd).returncode != 0:
        print("testbed notebook: installing JupyterLab failed (see uv's message above)", file=sys.stderr)
        return False
    return True


def _notebook(experiment: str | None) -> Path | None:
    if experiment is None:
        return None
    path = paths.NOTEBOOKS_DIR / f"{experiment}.ipynb"
    if not path.is_file():
        known = sorted(p.stem for p in paths.NOTEBOOKS_DIR.glob("*.ipynb"))
        raise SystemExit(f"testbed notebook: no notebook for {experiment!r}; there are: {', '.join(known)}")
    return path


def html_path(experiment: str, run: str | None) -> Path:
    """The HTML rendering to open: the published one beside the run's report when it
    exists, else the notebook executed now on the run, into a temporary directory (a
    file left in reports/ would be one `regenerate --check` does not expect)."""
    from .runs import pick_published_run
    run_dir = pick_published_run(run, experiment)
    published = run_dir / notebook_exec.HTML_NAME
    if published.is_file():
        return published
    out = Path(tempfile.mkdtemp(prefix="testbed-notebook-")) / f"{experiment}-{Path(run_dir).name}.html"
    print(f"testbed notebook: executing {experiment}.ipynb on {run_dir} -> {out}", file=sys.stderr)
    return notebook_exec.render(experiment, run_dir, out)


def main(args) -> int:
    if args.generate:
        changed = notebook_gen.write(paths.EXPERIMENTS_DIR, paths.NOTEBOOKS_DIR)
        print("\n".join(changed) if changed else "notebooks are current")
        return 0
    notebook = _notebook(args.experiment)
    if args.run and not notebook:
        print("testbed notebook: --run needs an EXPERIMENT", file=sys.stderr)
        return 2
    if args.html:
        if not notebook:
            print("testbed notebook: --html needs an EXPERIMENT", file=sys.stderr)
            return 2
        path = html_path(args.experiment, args.run)
        print(path)
        if not args.no_browser:
            webbrowser.open(path.resolve().as_uri())
        return 0
    if not ensure_jupyterlab():
        return 1
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={paths.NOTEBOOKS_DIR}"]
    cmd += [str(notebook)] if notebook else []
    cmd += ["--no-browser"] if args.no_browser else []
    cmd += [f"--port={args.port}"] if args.port else []
    # The notebooks import testbed from this venv: the kernel is this interpreter; the
    # parameters cell reads the run from TESTBED_NOTEBOOK_RUN.
    env = dict(os.environ, PYTHONPATH=str(paths.REPO_ROOT / "analysis"))
    if args.run:
        env["TESTBED_NOTEBOOK_RUN"] = str(Path(args.run).resolve())
    return subprocess.call(cmd, env=env)
