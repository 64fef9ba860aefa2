"""`./testbed setup` a second time does no work, within seconds."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from testbed import paths
from testbed.toolchain import libraries
from testbed.toolchain.progress import Progress

BASELINES = ["libzmq-4.3.5", "libzmq-4.3.5-nocurve"]


@pytest.mark.slow
def test_second_setup_is_a_fast_no_op():
    built = [libraries.ensure_built(name, bench=False, progress=Progress(plain=True, quiet=True))
             for name in BASELINES]  # the first setup (whatever it costs)
    stamps = {b.name: (b.prefix / libraries.INFO_FILE).stat().st_mtime_ns for b in built}
    cmd = [sys.executable, "-m", "testbed.cli", "setup", "--no-install", "--no-bench"]
    for name in BASELINES:
        cmd += ["--lib", name]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=paths.REPO_ROOT / "analysis", capture_output=True, text=True,
                          env={**__import__("os").environ, "CI": "true"})
    seconds = time.monotonic() - started
    output = proc.stdout + proc.stderr
    assert "==> building" not in output and "configure" not in output, output
    assert seconds < 10, f"second setup took {seconds:.1f} s"
    for b in built:
        assert (b.prefix / libraries.INFO_FILE).stat().st_mtime_ns == stamps[b.name]
    # Exit 0 needs every host requirement present; if one is missing it must be named.
    assert proc.returncode == 0 or "MISSING" in output, output
