"""The `gcc14` suite (not in the default run): nix/offline/gcc14.sh builds libzmq
4.3.5, zlink (tests on) and bench/ with Debian trixie's GCC 14, CMake and Python 3.13
inside the trixie root the offline Nix check uses, with baselines/pins.toml's flags,
and runs zlink's ctest there: the toolchain versions nixos-25.11 ships, so drift shows
before a Nix user meets it (issue 29.6). Needs root (debootstrap, chroot, unshare).
Counted from the script's closing `N passed, N failed` line."""
from __future__ import annotations

import re

from testbed import paths
from testbed.suites.runners import SuiteResult, _stream
from testbed.toolchain.progress import Progress

SCRIPT = paths.REPO_ROOT / "nix" / "offline" / "gcc14.sh"
_COUNTS = re.compile(r"^(\d+) passed, (\d+) failed$")


def counts(lines: list[str]) -> tuple[int, int] | None:
    """The script's closing counts, or None when it stopped before them."""
    for line in reversed(lines):
        if match := _COUNTS.match(line.strip()):
            return int(match.group(1)), int(match.group(2))
    return None


def run(regex: str | None, progress: Progress) -> SuiteResult:
    progress.step("zlink with GCC 14 / Python 3.13 in the trixie root (nix/offline/gcc14.sh)")
    code, lines = _stream(["bash", str(SCRIPT)], paths.REPO_ROOT, {"GCC14_CTEST_REGEX": regex or ""})
    found = counts(lines)
    if found is None:
        return SuiteResult("gcc14", failed=1, notes=[f"nix/offline/gcc14.sh stopped (exit {code}) before "
                                                     "its counts; see its output above"])
    result = SuiteResult("gcc14", *found)
    if code != 0 and result.failed == 0:
        result.failed = 1
        result.notes.append(f"nix/offline/gcc14.sh exited {code}")
    return result
