"""Both notebooks execute headless against the synthetic fixture run."""
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from fixtures.factory import make_run
from testbed import paths

NOTEBOOKS = ["batch-sweep.ipynb", "compare-runs.ipynb"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_stored_without_outputs(name):
    nb = nbformat.read(paths.NOTEBOOKS_DIR / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes(name, tmp_path, monkeypatch):
    run = make_run(tmp_path, configs={"no batch": {}, "64 KiB": {"ZMQ_ASIO_IN_BATCH_SIZE": "65536"}},
                   effect=lambda lib, cfg, *a: 1.0 if lib != "zlink" else (1.2 if cfg == "64 KiB" else 1.0),
                   patterns=("PUBSUB",), transports=("tcp",), failed=())
    monkeypatch.setenv("TESTBED_NOTEBOOK_RUN", str(run))
    nb = nbformat.read(paths.NOTEBOOKS_DIR / name, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    text = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "Traceback" not in text
    if name == "batch-sweep.ipynb":  # the new verdict columns and the calibration are shown
        assert "mde_pct" in text and "false_calls" in text and "decided %" in text
    if name == "compare-runs.ipynb":
        assert "cells in common" in text and "\n0 cells in common" not in "\n" + text
