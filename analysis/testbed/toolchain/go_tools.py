"""The fault proxy (Toxiproxy), built from its pinned Go module into
build/tools/bin/toxiproxy-server by `./testbed setup` (baselines/toxiproxy/pin.toml).

`go install MODULE/cmd/server@VERSION` fetches the module through the Go module proxy
and checks its dependencies against the module's own go.sum; the build is then
accepted only if `go version -m` of the binary lists exactly the pinned modules,
versions and h1 hashes. GOPATH and GOCACHE live under build/tools so nothing is
written outside the checkout; GOTOOLCHAIN=local never downloads another Go.

Where `go` is missing: a toxiproxy-server already on PATH (the Nix dev shell's, from
nixpkgs) is used and named as unpinned; otherwise setup says exactly what to install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from testbed import paths
from testbed.toolchain.progress import CommandFailed, Progress

PIN_FILE = paths.BASELINES_DIR / "toxiproxy" / "pin.toml"
MARKER_SUFFIX = ".pin.json"
# Where the Go distribution's installer puts it when it is not on PATH.
GO_FALLBACKS = ("/usr/local/go/bin/go",)


class PinError(ValueError):
    """The pin file is unreadable or lacks a key (one line naming file and key)."""


@dataclass(frozen=True)
class GoTool:
    package: str
    module: str
    version: str
    binary: str
    modules: dict[str, str]  # module path -> "VERSION h1:HASH"


def pinned(path: Path = PIN_FILE) -> GoTool:
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PinError(f"{path}: {exc}") from None
    table = doc.get("toxiproxy")
    if not isinstance(table, dict):
        raise PinError(f"{path}: toxiproxy: missing table")
    for key in ("package", "module", "version", "binary"):
        if not isinstance(table.get(key), str) or not table[key]:
            raise PinError(f"{path}: toxiproxy.{key}: missing or not a string")
    modules = table.get("modules")
    if not isinstance(modules, dict) or table["module"] not in modules:
        raise PinError(f"{path}: toxiproxy.modules: missing, or lacks the main module {table['module']}")
    if modules[table["module"]].split()[0] != table["version"]:
        raise PinError(f"{path}: toxiproxy.modules: the main module's version differs from toxiproxy.version")
    return GoTool(table["package"], table["module"], table["version"], table["binary"], dict(modules))


def go_command() -> str | None:
    found = shutil.which("go")
    if found:
        return found
    return next((p for p in GO_FALLBACKS if os.access(p, os.X_OK)), None)


def built_path(tool: GoTool) -> Path:
    return paths.TOOLS_DIR / "bin" / tool.binary


def module_lines(go: str, binary: Path) -> dict[str, str]:
    """`go version -m`: module path -> "VERSION h1:HASH" of the main module and deps."""
    out = subprocess.run(
        [go, "version", "-m", str(binary)], capture_output=True, text=True, check=True
    ).stdout
    found = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0] in ("mod", "dep"):
            found[fields[1]] = f"{fields[2]} {fields[3]}"
    return found


def mismatches(tool: GoTool, found: dict[str, str]) -> list[str]:
    """What differs between the binary's modules and the pin (empty: identical)."""
    out = [
        f"{m}: pinned {want}, built {found.get(m, 'absent')}"
        for m, want in sorted(tool.modules.items())
        if found.get(m) != want
    ]
    out += [f"{m}: built {found[m]}, not pinned" for m in sorted(set(found) - set(tool.modules))]
    return out


def is_current(tool: GoTool) -> bool:
    """Our build exists and its marker says it was checked against this pin."""
    binary = built_path(tool)
    marker = binary.with_name(binary.name + MARKER_SUFFIX)
    try:
        return binary.is_file() and json.loads(marker.read_text()).get("modules") == tool.modules
    except (OSError, ValueError):
        return False


def build(tool: GoTool, go: str, progress: Progress) -> None:
    """go install into a scratch GOBIN, check the modules, then move into place."""
    tools = paths.TOOLS_DIR
    env = {
        "GOPATH": str(tools / "go"),
        "GOCACHE": str(tools / "go-cache"),
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
        "GOFLAGS": "-modcacherw",
    }
    tools.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tools) as scratch:
        env["GOBIN"] = scratch
        progress.run(
            [go, "install", f"{tool.package}@{tool.version}"],
            cwd=tools,
            log=tools / "toxiproxy-build.log",
            env=env,
            title=f"go install toxiproxy {tool.version}",
        )
        made = Path(scratch) / Path(tool.package).name
        bad = mismatches(tool, module_lines(go, made))
        if bad:
            raise CommandFailed(f"the built {tool.binary} differs from {PIN_FILE}: " + "; ".join(bad))
        target = built_path(tool)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(made), target)
    marker = target.with_name(target.name + MARKER_SUFFIX)
    marker.write_text(
        json.dumps(
            {"package": tool.package, "version": tool.version, "go": go, "modules": tool.modules}, indent=1
        )
        + "\n"
    )


def ensure(progress: Progress) -> str | None:
    """Build the pinned proxy if needed. None when a usable proxy exists; otherwise
    the reason (one line saying what to install)."""
    try:
        tool = pinned()
    except PinError as exc:
        return str(exc)
    if is_current(tool):
        return None
    go = go_command()
    if go is None:
        on_path = shutil.which(tool.binary)
        if on_path:
            progress.say(f"    {tool.binary}: using {on_path} from PATH (not the pinned build: no Go here)")
            return None
        return (
            f"go not found: the fault proxy (Toxiproxy {tool.version}) is built from its Go module; "
            "install Go (Debian: apt-get install golang-go) or put a toxiproxy-server on PATH"
        )
    progress.say(
        f"    building Toxiproxy {tool.version} from its Go module (a minute or a few on a loaded host, once)"
    )
    try:
        build(tool, go, progress)
    except (CommandFailed, subprocess.CalledProcessError, OSError) as exc:
        return f"toxiproxy build failed: {exc}"
    return None


def proxy_binary() -> tuple[Path, str] | None:
    """(binary, provenance) of the proxy the runner should start: the pinned build,
    else one on PATH (named as such); None when there is none."""
    try:
        tool = pinned()
    except PinError:
        return None
    if is_current(tool):
        return built_path(tool), f"pinned build {tool.module} {tool.version}"
    on_path = shutil.which(tool.binary)
    if on_path:
        return Path(on_path), f"{on_path} from PATH (not the pinned build)"
    return None
