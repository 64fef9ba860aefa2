"""The Nix files pass the offline nixfmt stand-in (nix/offline/nixpkgs/nixfmt_standin.py),
the rules CI's nix-offline `formatting` check builds: caught here, in `./testbed test`,
before a Nix build (a 108-column line in nix/checks.nix failed CI's last step)."""
from __future__ import annotations

import subprocess
import sys

from testbed import paths

STANDIN = paths.REPO_ROOT / "nix" / "offline" / "nixpkgs" / "nixfmt_standin.py"


def _nix_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "*.nix"], cwd=paths.REPO_ROOT, capture_output=True,
                         text=True, check=False)
    if out.returncode == 0 and out.stdout.strip():
        return out.stdout.split()
    return [str(p.relative_to(paths.REPO_ROOT)) for p in paths.REPO_ROOT.rglob("*.nix")
            if ".git" not in p.parts and "build" not in p.parts]


def test_nix_files_pass_the_formatting_standin():
    files = _nix_files()
    assert len(files) >= 10
    done = subprocess.run([sys.executable, str(STANDIN), "--check", *files], cwd=paths.REPO_ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_standin_fails_a_long_line(tmp_path):
    bad = tmp_path / "bad.nix"
    bad.write_text("{ x = \"" + "a" * 120 + "\"; }\n")
    done = subprocess.run([sys.executable, str(STANDIN), "--check", str(bad)], capture_output=True,
                          text=True, check=False)
    assert done.returncode != 0 and "columns" in done.stdout + done.stderr
