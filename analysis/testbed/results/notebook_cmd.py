"""`./testbed notebook`: Jupyter Lab on notebooks/ with the project's Python. JupyterLab
is the optional extra [notebook] of analysis/pyproject.toml, installed on first use."""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys

from testbed import paths


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
    print("testbed notebook: installing the optional extra [notebook] (JupyterLab) into the project venv, once",
          file=sys.stderr)
    cmd = [uv, "pip", "install", "--python", sys.executable, "-e", f"{paths.REPO_ROOT / 'analysis'}[notebook]"]
    if subprocess.run(cmd).returncode != 0:
        print("testbed notebook: installing JupyterLab failed (see uv's message above)", file=sys.stderr)
        return False
    return True


def main(args) -> int:
    if not ensure_jupyterlab():
        return 1
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={paths.NOTEBOOKS_DIR}"]
    cmd += ["--no-browser"] if args.no_browser else []
    cmd += [f"--port={args.port}"] if args.port else []
    # The notebooks import testbed from this venv: the kernel is this interpreter.
    env = dict(os.environ, PYTHONPATH=str(paths.REPO_ROOT / "analysis"))
    return subprocess.call(cmd, env=env)
