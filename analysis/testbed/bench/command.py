"""Builds and runs one bench binary invocation. The sweep runner can use
`bench_argv` to get the exact command line (and wrap it, e.g. in perf stat)."""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from testbed.bench.patterns import normalise_pattern

# Flags passed through to the binary unchanged (name in argparse -> flag).
PASS_THROUGH = {"count": "--count", "warmup": "--warmup", "lat_count": "--lat-count",
                "lat_warmup": "--lat-warmup", "io_threads": "--io-threads", "hwm": "--hwm",
                "timeout_ms": "--timeout-ms", "mode": "--mode", "sndbuf": "--sndbuf", "rcvbuf": "--rcvbuf"}


def bench_argv(binary: Path, transport: str, size: int, **options: object) -> list[str]:
    """Command line for one run; options left as None use the binary's defaults."""
    argv = [str(binary), "--transport", transport, "--size", str(size)]
    for name, value in options.items():
        if name not in PASS_THROUGH:
            raise ValueError(f"unknown bench option {name!r}; allowed: {', '.join(PASS_THROUGH)}")
        if value is not None:
            argv += [PASS_THROUGH[name], str(value)]
    return argv


@dataclass
class BenchRun:
    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str
    result: dict | None  # the parsed JSON line, when there was one


def run_bench(argv: list[str], timeout_s: float | None = None) -> BenchRun:
    """Runs a bench binary and parses its JSON line (present on exit 0 and 4).
    The binary has its own timeouts; `timeout_s` is only a last resort."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    result = None
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if lines:
        try:
            result = json.loads(lines[-1])
        except json.JSONDecodeError:
            result = None
    return BenchRun(argv, proc.returncode, proc.stdout, proc.stderr, result)


def binary_for(lib, pattern: str) -> Path:
    """The bench binary of `pattern` in a LibraryBuild (testbed.toolchain.libraries)."""
    return lib.bench_binary(normalise_pattern(pattern))
