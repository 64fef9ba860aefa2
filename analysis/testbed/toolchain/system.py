"""Host tools the testbed relies on, and installing the missing ones on Debian/Ubuntu.

Each requirement is probed by what it provides (a command, a header, a runtime
library), not by package name, so tools that came some other way count as present.
Only when running as root on Debian/Ubuntu are missing ones installed (one
`apt-get update`, then one `apt-get install --no-install-recommends`); anywhere else
the exact missing packages are named and nothing is changed.

To add a requirement: one Requirement line below (others' needs welcome).
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from testbed import paths
from testbed.toolchain.progress import CommandFailed, Progress


def _cmd(*tools: str) -> Callable[[], bool]:
    return lambda: all(shutil.which(tool) for tool in tools)


def _file(*candidates: str) -> Callable[[], bool]:
    return lambda: any(Path(c).exists() for c in candidates)


@functools.lru_cache(maxsize=1)
def _include_dirs() -> tuple[Path, ...]:
    """The C++ compiler's own header search list (`c++ -E -v`), so headers that come
    from elsewhere than /usr/include (a Nix dev shell's compiler wrapper) count."""
    cxx = os.environ.get("CXX") or "c++"
    if not shutil.which(cxx):
        return (Path("/usr/include"),)
    err = subprocess.run([cxx, "-x", "c++", "-E", "-v", "-"], input="", capture_output=True,
                         text=True).stderr.splitlines()
    start = next((i for i, line in enumerate(err) if line.startswith("#include <...>")), None)
    if start is None:
        return (Path("/usr/include"),)
    dirs = []
    for line in err[start + 1:]:
        if line.startswith("End of search list"):
            break
        dirs.append(Path(line.strip().removesuffix(" (framework directory)")))
    return tuple(dirs)


def _header(name: str) -> Callable[[], bool]:
    return lambda: any((d / name).exists() for d in _include_dirs())


def _fuzzer_runtime() -> bool:
    if not shutil.which("clang"):
        return False
    out = subprocess.run(["clang", "-print-file-name=libclang_rt.fuzzer-x86_64.a"],
                         capture_output=True, text=True).stdout.strip()
    return os.path.isabs(out) and Path(out).exists()


@dataclass(frozen=True)
class Requirement:
    package: str                 # Debian package name
    why: str
    present: Callable[[], bool]
    ubuntu: str | None = None    # package name on Ubuntu when it differs


REQUIREMENTS: list[Requirement] = [
    Requirement("build-essential", "C/C++ compiler and make", _cmd("cc", "c++", "make")),
    Requirement("cmake", "builds libzmq, zlink and bench", _cmd("cmake")),
    Requirement("ninja-build", "CMake generator", _cmd("ninja")),
    Requirement("pkg-config", "libzmq's CMake finds libsodium with it", _cmd("pkg-config")),
    Requirement("cargo", "fetches the pinned libzmq/libsodium crates", _cmd("cargo")),
    Requirement("libasio-dev", "zlink's IO layer (standalone Asio)", _header("asio.hpp")),
    Requirement("libgtest-dev", "zlink's unit tests", _header("gtest/gtest.h")),
    Requirement("linux-perf", "perf stat around benchmark cells", _cmd("perf"), ubuntu="linux-tools-generic"),
    Requirement("hyperfine", "command timing", _cmd("hyperfine")),
    Requirement("iperf3", "host TCP ceiling", _cmd("iperf3")),
    Requirement("clang", "libFuzzer builds of zlink", _cmd("clang", "clang++")),
    Requirement("libclang-rt-14-dev", "libFuzzer runtime for clang", _fuzzer_runtime),
    Requirement("valgrind", "callgrind instruction counts", _cmd("valgrind")),
    # Debian's nix 2.8 for `nix hash path` in the NAR tests; nix/offline/check.sh runs
    # a modern Nix of its own (nix/offline/modern-nix.sh).
    Requirement("nix-bin", "the NAR hash tests compare with `nix hash path`", _cmd("nix")),
    Requirement("jq", "JSON in shell scripts", _cmd("jq")),
    Requirement("ccache", "cheap rebuilds of zlink at many revisions (./testbed bisect)", _cmd("ccache")),
    Requirement("strace", "syscall counts per message (./testbed profile)", _cmd("strace")),
    # A private single-node Slurm for the test of `./testbed run --slurm`
    # (tests/slurm_cluster.py); sbatch/squeue are what --slurm itself calls.
    Requirement("slurm-client", "sbatch and squeue for ./testbed run --slurm", _cmd("sbatch", "squeue")),
    Requirement("slurmctld", "the Slurm test's controller", _cmd("slurmctld")),
    Requirement("slurmd", "the Slurm test's node daemon", _cmd("slurmd")),
    Requirement("munge", "the Slurm test's authentication daemon", _cmd("munged")),
]


@dataclass(frozen=True)
class CargoTool:
    crate: str
    version: str
    binary: str                  # one binary it installs, to probe for
    why: str


# Not packaged by Debian: installed with cargo into build/tools (pinned version).
CARGO_TOOLS: list[CargoTool] = [
    CargoTool("inferno", "0.12.8", "inferno-flamegraph", "flamegraph SVGs of perf record profiles"),
]


def tool_path(binary: str) -> str | None:
    """A tool from build/tools/bin if setup installed it there, else from PATH."""
    local = paths.TOOLS_DIR / "bin" / binary
    return str(local) if local.exists() else shutil.which(binary)


def ensure_cargo_tools(progress: Progress) -> list[CargoTool]:
    """cargo install the pinned tools that are missing; return those still missing."""
    still = []
    for tool in CARGO_TOOLS:
        if tool_path(tool.binary):
            continue
        progress.say(
            f"    installing {tool.crate} {tool.version} with cargo ({tool.why}; a few minutes, once)"
        )
        try:
            progress.run(["cargo", "install", "--locked", "--quiet", "--root", str(paths.TOOLS_DIR),
                          "--version", tool.version, tool.crate], cwd=paths.REPO_ROOT,
                         log=paths.TOOLS_DIR / f"{tool.crate}.log", title=f"cargo install {tool.crate}")
        except CommandFailed as exc:
            progress.say(f"    {exc}")
        if not tool_path(tool.binary):
            still.append(tool)
            progress.say(f"    STILL MISSING: {tool.crate} ({tool.why})")
    return still


def _os_release() -> dict[str, str]:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return {}
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {key: value.strip().strip('"') for key, value in pairs}


def distro() -> str:
    info = _os_release()
    ids = {info.get("ID", "")} | set(info.get("ID_LIKE", "").split())
    if "ubuntu" in ids:
        return "ubuntu"
    return "debian" if "debian" in ids else info.get("ID", "unknown")


def package_name(req: Requirement, dist: str) -> str:
    return req.ubuntu if dist == "ubuntu" and req.ubuntu else req.package


def missing() -> list[Requirement]:
    return [req for req in REQUIREMENTS if not req.present()]


def ensure(progress: Progress, install: bool = True) -> list[Requirement]:
    """Install what is missing where possible; return what is still missing."""
    lacking = missing()
    if not lacking:
        progress.say(f"    all {len(REQUIREMENTS)} host requirements present")
        return []
    dist = distro()
    names = [package_name(req, dist) for req in lacking]
    can_install = install and os.geteuid() == 0 and dist in ("debian", "ubuntu") and shutil.which("apt-get")
    if not can_install:
        why = ("--no-install given" if not install else "not root" if os.geteuid() != 0
               else f"not Debian/Ubuntu ({dist})")
        for req, name in zip(lacking, names):
            progress.say(f"    MISSING {name}: {req.why}")
        progress.say(f"    not installing ({why}); as root on Debian/Ubuntu run: "
                     f"apt-get install --no-install-recommends {' '.join(names)}")
        return lacking
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    log = Path(os.environ.get("TMPDIR", "/tmp")) / "testbed-apt.log"
    progress.say(f"    installing: {' '.join(names)}")
    # Wait for another apt/dpkg (e.g. unattended-upgrades on a fresh machine) instead of failing.
    wait = ["-o", "DPkg::Lock::Timeout=600"]
    try:
        progress.run(["apt-get", *wait, "update"], cwd=Path("/"), log=log, env=env, title="apt-get update")
        # --no-install-recommends: libasio-dev's recommends alone would pull in all of Boost.
        progress.run(["apt-get", *wait, "install", "-y", "--no-install-recommends", *names], cwd=Path("/"),
                     log=log, env=env, title="apt-get install")
    except CommandFailed as exc:
        progress.say(f"    {exc}")
    still = missing()
    for req in still:
        progress.say(f"    STILL MISSING after install: {package_name(req, dist)} ({req.why})")
    return still


@dataclass(frozen=True)
class MissingTool:
    package: str                 # what setup's closing line names
    why: str


def ensure_go_tools(progress: Progress) -> list[MissingTool]:
    """The fault proxy, built from its pinned Go module (testbed.toolchain.go_tools)."""
    from testbed.toolchain import go_tools
    reason = go_tools.ensure(progress)
    if reason is None:
        return []
    progress.say(f"    STILL MISSING: toxiproxy-server ({reason})")
    return [MissingTool("toxiproxy-server", reason)]


def ensure_all(progress: Progress, install: bool = True) -> list:
    """Host packages, then (only when those are complete) the pinned cargo tools and
    the Go-built fault proxy. Returns what is still missing: Requirements, CargoTools
    and MissingTools."""
    still: list = ensure(progress, install=install)
    if install and not still:
        still += ensure_cargo_tools(progress)
        still += ensure_go_tools(progress)
    return still
