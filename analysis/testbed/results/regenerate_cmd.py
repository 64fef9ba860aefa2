"""`./testbed regenerate [--check] [--no-notebooks] [--draw-superseded]`: re-render every report
under reports/ from its stored data, each experiment's notebook executed on its newest
run as HTML, reports/index.md and the generated answer blocks of the checkout's READMEs
(results/answer_blocks.py); with --check, change nothing and exit 1 naming every file
that differs (`answers: FILE` for a README whose answer block is not current)."""
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
    parser.add_argument("--draw-superseded", action="store_true",
                        help="only draw the figures of every superseded run into its folder (they are not "
                             "committed: each superseded run's .gitignore names them), then stop")
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
    if getattr(args, "draw_superseded", False):
        drawn = regenerate.draw_superseded(args.reports)
        print(f"figures drawn for {len(drawn)} superseded run(s) (not committed: see each run's .gitignore)",
              file=sys.stderr)
        return 0
    by_name = bool(getattr(args, "figures_by_name", False))
    if by_name and not args.check:
        print("testbed regenerate: --figures-by-name only goes with --check", file=sys.stderr)
        return 2
    from testbed.results.answer_blocks import BlockError
    try:
        changes, scratch, managed = regenerate.differences(
            args.reports, seeds, notebooks=not getattr(args, "no_notebooks", False), figures_by_name=by_name)
    except BlockError as exc:
        print(f"testbed regenerate: {exc}", file=sys.stderr)
        return 2
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
