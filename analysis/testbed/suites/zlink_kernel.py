"""`./testbed test --only zlink-kernel`: the project's notebook tests
(analysis/tests/test_results_notebooks.py: the scorecard notebook, generated from the
template of every experiment notebook, and the cross-run notebook, executed on small
fixture runs, and a failing cell) with every
Jupyter kernel running pyzmq compiled against zlink: the pyzmq-suite's cached build
(libzmq_suite_pyzmq.build), put in front of the kernel's path by
toolchain/notebook_kernel.py, which also checks each kernel's /proc/PID/maps for
zlink's libzmq.so.5. The kernels' log proves the check ran: a suite whose kernels
were never verified fails."""
from __future__ import annotations

import os
import subprocess

from testbed import paths
from testbed.suites import libzmq_suite_pyzmq as pyzmq_build
from testbed.suites.libzmq_suite_dropin import SONAME
from testbed.suites.runners import SuiteResult, run_pytest
from testbed.toolchain import libraries, notebook_kernel
from testbed.toolchain.progress import CommandFailed, Progress

NAME = "zlink-kernel"
LIBRARY = "zlink"
TESTS = "tests/test_results_notebooks.py"
# Left to the pytest suite, to keep this suite's CI minutes down: regenerate's test
# renders the same notebooks again through its own code path (two more kernels), the
# placement test runs the same experiment-notebook template as the scorecard test; the
# stream test checks nbclient's merging of a cell's outputs, on the client's side.
DESELECT = [arg for test in ("test_regenerate_renders_the_newest_runs_notebooks_only",
                             "test_the_notebook_on_a_run_that_varies_placement",
                             "test_output_split_by_the_kernels_flushes_renders_the_same")
            for arg in ("--deselect", f"{TESTS}::{test}")]
RUN_DIR = paths.BUILD_DIR / "zlink-kernel"


def _zmq_package(python, lib_dir) -> str:
    """Where that build's `zmq` package lives (asked of its own python)."""
    proc = subprocess.run([str(python), "-c", "import os, zmq; print(os.path.dirname(zmq.__file__))"],
                          env=dict(os.environ, LD_LIBRARY_PATH=str(lib_dir)), capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, check=True)
    return proc.stdout.strip()


def run(expr: str | None, progress: Progress) -> SuiteResult:
    try:
        library = libraries.find_built(LIBRARY, bench=False)
        python = pyzmq_build.build(library, progress)
        package = _zmq_package(python, library.prefix / "lib")
    except (CommandFailed, FileNotFoundError, libraries.LibraryUnavailable,
            subprocess.SubprocessError) as exc:
        first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        return SuiteResult(NAME, failed=1, notes=[f"pyzmq on {LIBRARY} unavailable: {first}"])
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    log = RUN_DIR / "kernels.log"
    log.write_text("")
    env = {notebook_kernel.ZMQ_ENV: package, notebook_kernel.LIBZMQ_ENV: str(library.prefix / "lib" / SONAME),
           notebook_kernel.LOG_ENV: str(log)}
    result = run_pytest(expr, DESELECT + ["--durations=3"], name=NAME, target=TESTS, env=env)
    kernels = [line for line in log.read_text().splitlines() if line.strip()]
    expected = os.path.realpath(library.prefix / "lib" / SONAME)
    result.notes.append(f"{len(kernels)} kernels verified on {expected}")
    if not kernels:
        result.failed += 1
        result.notes.append("no kernel was verified: the notebooks did not run on zlink")
    return result
