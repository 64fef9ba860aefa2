"""`./testbed regenerate [--check] [--no-notebooks] [--newest-figures-only]`: re-render every report under
reports/ from its stored data, and each experiment's notebook executed on its newest
run as HTML; with --check, change nothing and exit 1 naming every file that differs."""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from testbed import paths


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true", help="exit 1 and name the files that would change")
    parser.add_argument(
        "--reports", type=Path, default=paths.REPORTS_DIR, help="reports directory (default: reports/)"
    )
    parser.add_argument("--seeds", type=Path, default=paths.SEEDS_DIR,
                        help="published seed reports (default: TESTBED_SEEDS_DIR or ../shared/seeds)")
    parser.add_argument("--figures-by-name", action="store_true",
                        help="with --check: compare figures and HTML (.png/.svg/.html, drawn by the plotting "
                             "toolchain) by name only; markdown and data stay byte for byte (the Nix check, "
                             "whose matplotlib is not analysis/uv.lock's)")
    parser.add_argument("--newest-figures-only", action="store_true",
                        help="draw only each experiment's newest run's figures (and the published "
                             "reports'); a superseded run's report.md is still rebuilt, its figures are "
                             "left as they are and NOT checked (drawing is most of the time)")
    parser.add_argument("--no-notebooks", action="store_true",
                        help="leave out the notebooks' HTML renderings (notebook.html beside each "
                             "experiment's newest report), which execute every experiment's notebook")


def main(args) -> int:
    from testbed.results import regenerate
    if not args.reports.is_dir():
        print(f"testbed regenerate: {args.reports}: no such directory", file=sys.stderr)
        return 2
    seeds = args.seeds if args.seeds.is_dir() else None
    if seeds is None:
        print(f"testbed regenerate: {args.seeds} absent: published reports rebuilt from their stored data",
              file=sys.stderr)
    by_name = bool(getattr(args, "figures_by_name", False))
    if by_name and not args.check:
        print("testbed regenerate: --figures-by-name only goes with --check", file=sys.stderr)
        return 2
    changes, scratch, managed = regenerate.differences(
        args.reports, seeds, notebooks=not getattr(args, "no_notebooks", False), figures_by_name=by_name,
        superseded_figures=not getattr(args, "newest_figures_only", False))
    try:
        if args.check:
            for c in changes:
                print(c)
            if by_name:
                drawn = [f for f in regenerate._files(scratch, managed)
                         if f.suffix in regenerate.TOOLCHAIN_DRAWN]
                print(f"{len(drawn)} toolchain-drawn file(s) ({', '.join(regenerate.TOOLCHAIN_DRAWN)}) "
                      "compared by name only, NOT by content; markdown and data byte for byte",
                      file=sys.stderr)
            if getattr(args, "newest_figures_only", False):
                runs = regenerate.run_dirs(args.reports)
                left = len(runs) - len(regenerate.newest_runs(runs))
                print(f"the figures of {left} superseded run(s) were NOT drawn or checked "
                      "(--newest-figures-only); their report.md was", file=sys.stderr)
            print(f"{len(changes)} file(s) out of date" if changes else "reports are current",
                  file=sys.stderr)
            return 1 if changes else 0
        regenerate.sync(args.reports, scratch, changes)
        for c in changes:
            print(c)
        print(f"{len(changes)} file(s) updated", file=sys.stderr)
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
