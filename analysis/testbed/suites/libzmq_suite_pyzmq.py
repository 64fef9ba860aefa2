"""pyzmq built from source against a library's libzmq.so.5 (check `pyzmq_pair`):
the most used binding of libzmq, compiled the way a user on a distribution without
a libzmq package would (ZMQ_PREFIX=<prefix>, no bundled libzmq), must import and
carry PAIR messages over tcp and ipc.

The build goes into its own virtual environment in the keyed build cache (key: the
library build, the pinned pyzmq sdist and this Python), with Cython and
scikit-build-core from PyPI through uv. The sdist is the one pinned by version and
sha256 in baselines/pyzmq-suite/suite.toml, fetched once by pip into build/sources/;
the same venv carries pyzmq's test requirements for the pyzmq suite (pyzmq_suite.py).
It runs for every library except the
libzmq baselines themselves (their control would double the build time; the
drop-in perf tools are the control of the loader path).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from testbed import paths
from testbed.suites import pyzmq_suite_config as pins
from testbed.suites.libzmq_suite_build import SUITE_BUILD_DIR
from testbed.suites.libzmq_suite_dropin import SONAME
from testbed.suites.libzmq_suite_run import FAIL, PASS, SIGNAL, SKIPPED, TIMEOUT, TestOutcome
from testbed.toolchain import buildcache, keys
from testbed.toolchain.progress import CommandFailed, Progress

CHECK_NAME = "pyzmq_pair"
BUILD_REQUIREMENTS = ["cython>=3", "scikit-build-core", "packaging", "pip"]
LIMIT_SECONDS = 30.0

# Run inside the built venv: version, a PAIR round trip per transport, and which
# libzmq file the process mapped. Prints one "key=value" line per fact.
_SCRIPT = """\
import os, sys, tempfile, zmq
print("pyzmq=" + zmq.__version__, "libzmq=" + zmq.zmq_version())
ctx = zmq.Context()
folder = tempfile.mkdtemp()
for endpoint in ("tcp://127.0.0.1:*", "ipc://" + os.path.join(folder, "pair.ipc")):
    a, b = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
    a.bind(endpoint)
    b.connect(a.getsockopt_string(zmq.LAST_ENDPOINT))
    b.send_multipart([b"ping", b"x" * 1000])
    assert a.recv_multipart() == [b"ping", b"x" * 1000]
    a.send(b"pong")
    assert b.recv() == b"pong"
    a.close(); b.close()
    print("roundtrip=" + endpoint.split(":")[0])
maps = open("/proc/self/maps").read().split()
print("mapped=" + ",".join(sorted({p for p in maps if os.path.basename(p).startswith("libzmq.so.5")})))
ctx.term()
print("terminated=yes")
"""


def wanted(library) -> bool:
    return (library.prefix / "lib" / SONAME).exists() and library.info.get("link_name") != "zmq"


def _uv() -> str | None:
    """uv, which ./testbed itself installs (pip puts it in ~/.local/bin when not root)."""
    return shutil.which("uv") or shutil.which("uv", path=str(Path.home() / ".local" / "bin"))


def fetch_sdist(config: pins.SuiteConfig, python: str, progress: Progress, log: Path) -> Path:
    """build/sources/pyzmq/<sha256[:16]>/<sdist>: pip's download (--require-hashes), checked
    again here. `python` is a venv with the build requirements, so pip's metadata step
    needs no isolated build environment."""
    folder = paths.SOURCES_DIR / "pyzmq" / config.sha256[:16]
    sdist = folder / config.sdist_name
    if not sdist.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        requirement = folder / "requirement.txt"
        requirement.write_text(f"pyzmq=={config.version} --hash=sha256:{config.sha256}\n")
        progress.run([python, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", "pyzmq",
                      "--no-build-isolation", "--require-hashes", "-r", str(requirement), "-d", str(folder)],
                     cwd=folder, log=log, title=f"pyzmq: fetch sdist {config.sdist_name}")
        if not sdist.is_file():
            raise CommandFailed(f"pyzmq: pip download left no {sdist}")
    pins.check_sdist(config, sdist)
    return sdist


def build(library, progress: Progress) -> Path:
    """The venv's python with pyzmq compiled against `library` from the pinned sdist, and
    pyzmq's test requirements (cached per library build)."""
    uv = _uv()
    if uv is None:
        raise FileNotFoundError("uv is not on PATH (./testbed installs it); cannot build pyzmq")
    config = pins.load_config()
    key = keys.build_key(kind="pyzmq-on-library", pyzmq_recipe=3, library=library.name,
                         pyzmq=config.version, sdist=config.sha256, tests=config.test_requirements,
                         library_id=library.info.get("build_id") or str(library.prefix),
                         python=sys.version, tools=keys.toolchain_id())

    def make(work: Path) -> None:
        venv, log = work / "venv", work / "build.log"
        python = str(venv / "bin" / "python")
        progress.step(f"pyzmq {config.version} from source against {library.name} (about a minute, once)")
        progress.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], cwd=work, log=log,
                     title="pyzmq: venv")
        progress.run([uv, "pip", "install", "--quiet", "--python", python, *BUILD_REQUIREMENTS], cwd=work,
                     log=log, title="pyzmq: build requirements")
        sdist = fetch_sdist(config, python, progress, log)
        env = {"ZMQ_PREFIX": str(library.prefix),
               "PKG_CONFIG_PATH": str(library.prefix / "lib" / "pkgconfig")}
        # --no-cache: uv would otherwise reuse a pyzmq wheel it built against another prefix.
        progress.run([uv, "pip", "install", "--quiet", "--no-cache", "--python", python,
                      "--no-build-isolation", str(sdist)], cwd=work, log=log, env=env,
                     title=f"pyzmq: build against {library.name}")
        progress.run([uv, "pip", "install", "--quiet", "--python", python, *config.test_requirements],
                     cwd=work, log=log, title="pyzmq: test requirements")
        (work / "done").write_text(key + "\n")

    return buildcache.cached(SUITE_BUILD_DIR / "pyzmq" / library.name, key, "done", make) / "venv/bin/python"


def judge(returncode: int | None, output: str, expected: str, seconds: float) -> TestOutcome:
    """The check's outcome from the script's exit and its key=value lines."""
    facts = dict(word.split("=", 1) for word in output.split() if "=" in word and not word.startswith("="))
    lines = [line for line in output.splitlines() if line.strip()]
    if returncode is None:
        return TestOutcome(CHECK_NAME, TIMEOUT, seconds, f"not finished after {LIMIT_SECONDS:g} s; "
                                                         f"last: {lines[-1][:200] if lines else 'no output'}")
    if returncode < 0:
        return TestOutcome(CHECK_NAME, SIGNAL, seconds, f"python ended by signal {-returncode}")
    if returncode != 0:
        last = lines[-1][:200] if lines else "no output"
        return TestOutcome(CHECK_NAME, FAIL, seconds, f"exit {returncode}: {last}")
    if facts.get("mapped") != expected:
        return TestOutcome(CHECK_NAME, FAIL, seconds, f"mapped {facts.get('mapped') or 'no libzmq.so.5'}, "
                                                      f"not {expected}")
    return TestOutcome(CHECK_NAME, PASS, seconds, f"pyzmq {facts.get('pyzmq')} on {expected} "
                                                  f"(zmq_version {facts.get('libzmq')}): PAIR tcp and ipc")


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


def run_check(library, progress: Progress) -> TestOutcome:
    started = time.monotonic()
    try:
        python = build(library, progress)
    except (CommandFailed, FileNotFoundError, pins.PyzmqSuiteError) as exc:
        status = SKIPPED if isinstance(exc, FileNotFoundError) else FAIL
        return TestOutcome(CHECK_NAME, status, time.monotonic() - started, str(exc).splitlines()[0][:300])
    env = {**os.environ, "LD_LIBRARY_PATH": str(library.prefix / "lib")}
    try:
        proc = subprocess.run([str(python), "-u", "-c", _SCRIPT], capture_output=True, text=True, env=env,
                              timeout=LIMIT_SECONDS, stdin=subprocess.DEVNULL)
        code, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:  # it is killed; what it printed so far says where it hung
        code, output = None, _text(exc.stdout) + _text(exc.stderr)
    expected = os.path.realpath(library.prefix / "lib" / SONAME)
    return judge(code, output, expected, time.monotonic() - started)
