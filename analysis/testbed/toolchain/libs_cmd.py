"""`./testbed libs`: every registered library, what it is built from and whether it
is built (and if not, why). Never builds anything (a zlink@REV named on the command
line is exported from git, not built)."""
from __future__ import annotations

import argparse
import json
import sys

from testbed.toolchain import libraries


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="only these (default: every registered one); zlink@REV names zlink at a revision",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per library")


def describe(name: str) -> dict:
    row = {"name": name, "built": False, "why_not": None, "prefix": None, "bench_dir": None}
    try:
        built = libraries.find_built(name, bench=False)
    except libraries.LibraryUnavailable as exc:
        row["why_not"] = str(exc)
        try:
            row.update(libraries.describe(name), name=name)
        except libraries.LibraryUnavailable:
            pass  # why_not says why
        return row
    row.update(built.info, built=True, prefix=str(built.prefix), name=name)  # zlink@REV: as asked
    try:
        row["bench_dir"] = str(libraries.find_built(name).bench_dir)
    except libraries.LibraryUnavailable as exc:
        row["bench_dir"] = f"not built: {exc}"
    return row


def _plain(rows: list[dict]) -> None:
    for row in rows:
        curve = {True: "on", False: "off"}.get(row.get("curve"), "?")
        print(f"{row['name']}")
        print(
            f"  version   {row.get('version', '?')}    CURVE {curve}    build id {row.get('build_id', '-')}"
        )
        print(f"  source    {row.get('source_hash', '?')}")
        if row.get("commit"):
            print(f"  commit    {row['commit']} (revision {row.get('revision')})")
        print(f"  compiler  {row.get('compiler', '?')}")
        print(f"  flags     {' '.join(row.get('flags', [])) or '?'}")
        if row["built"]:
            print(f"  prefix    {row['prefix']}")
            print(f"  bench     {row['bench_dir']}")
        else:
            print(f"  NOT BUILT {row['why_not']}")


def main(args: argparse.Namespace) -> int:
    rows = [describe(name) for name in args.names or libraries.registered_names()]
    if args.json:
        for row in rows:
            print(json.dumps(row, sort_keys=True))
        return 0
    _plain(rows)
    sys.stdout.flush()
    return 0
