"""`./testbed SUBCOMMAND ...`: dispatch to the module that implements each command.

Each command module exposes `add_arguments(parser)` and `main(args) -> int`, and is
imported only when its command runs, so a slow import (pandas, matplotlib) never
delays `./testbed bench`.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# name -> (module, one-line help). The only list of commands.
COMMANDS: dict[str, tuple[str, str]] = {
    "setup": ("testbed.toolchain.setup_cmd", "install tools, fetch+verify+build baselines, zlink and bench"),
    "libs": ("testbed.toolchain.libs_cmd", "list the registered libraries and their builds"),
    "bench": ("testbed.bench.bench_cmd", "run one benchmark and print its JSON"),
    "arms": ("testbed.bench.arms_cmd", "run one arms bench: several arms interleaved in one process pair"),
    "ceiling": ("testbed.bench.ceiling_cmd", "measure the host's raw TCP/UDS/memcpy limits"),
    "profile": (
        "testbed.bench.profile_cmd",
        "per-message instructions and syscalls (callgrind, perf, strace)",
    ),
    "test": ("testbed.suites.test_cmd", "run every test (ctest and pytest)"),
    "run": ("testbed.commands.run_cmd", "run an experiment's sweep"),
    "merge": ("testbed.sweep.merge_cmd", "merge shards of one run"),
    "agree": (
        "testbed.results.agreement_cmd",
        "compare a perf-tools run's verdicts with a bench run's, cell by cell",
    ),
    "report": ("testbed.results.report_cmd", "render the markdown report of a run"),
    "inflection": ("testbed.results.inflection_cmd", "find where a configuration's gain changes sign"),
    "history": ("testbed.results.history_cmd", "a cell's verdict over the zlink commits of published runs"),
    "bisect": ("testbed.sweep.bisect_cmd", "the first commit at which a cell's zlink verdict changed"),
    "regenerate": ("testbed.results.regenerate_cmd", "re-render every report under reports/"),
    "store": ("testbed.commands.store_cmd", "the results store: sizes, and compacting runs to Parquet"),
    "rejudge": (
        "testbed.results.rejudge_cmd",
        "re-judge a run from its raw files; do the sweep's verdicts reproduce?",
    ),
    "notebook": ("testbed.results.notebook_cmd", "open Jupyter Lab with the analysis kernel"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="testbed",
        description="Reproducible benchmarks of zlink against libzmq 4.3.5.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module_name, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    name = argv[0]
    if name not in COMMANDS:
        parser.error(f"unknown command {name!r}; choose from: {', '.join(COMMANDS)}")
    module_name, help_text = COMMANDS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            print(f"testbed: command {name!r} is not available yet ({module_name} missing)", file=sys.stderr)
            return 2
        raise
    sub = argparse.ArgumentParser(prog=f"testbed {name}", description=help_text)
    module.add_arguments(sub)
    args = sub.parse_args(argv[1:])
    try:
        return int(module.main(args) or 0)
    except KeyboardInterrupt:
        print(f"testbed {name}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
