"""`./testbed merge RUN_DIR... --out DIR`: join the shards of one run into one run
directory (testbed.sweep.merge). `./testbed merge SLURM_DIR` joins the shards a Slurm
sweep left there (`./testbed run ... --slurm --no-wait`), naming its failed tasks."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testbed import paths
from testbed.records import manifest as manifestmod
from testbed.sweep import merge, slurm_run
from testbed.sweep.slurm_client import SlurmError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", type=Path,
                        help="run directories (shards) to merge, or the one directory of a Slurm sweep")
    parser.add_argument("--out", type=Path, default=None, help=f"results root (default {paths.RESULTS_DIR})")


def main(args: argparse.Namespace) -> int:
    out_root = args.out or paths.RESULTS_DIR
    try:
        if len(args.runs) == 1 and slurm_run.is_slurm_dir(args.runs[0]):
            code, out_dir = slurm_run.finish(args.runs[0], out_root)
            if out_dir is not None:
                print(f"testbed merge: report it with ./testbed report {out_dir}", file=sys.stderr)
                print(out_dir)
            return code
        out_dir = merge.merge(args.runs, out_root)
    except (manifestmod.ManifestError, merge.MergeError, SlurmError) as exc:
        print(f"testbed merge: {exc}", file=sys.stderr)
        return 2
    print(out_dir)
    return 0
