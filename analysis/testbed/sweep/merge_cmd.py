"""`./testbed merge RUN_DIR... --out DIR`: join the shards of one run into one run
directory. Runs of different experiments, profiles or library builds are refused:
their results would not be comparable."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from testbed import paths
from testbed.sweep import runner, store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (shards) to merge")
    parser.add_argument("--out", type=Path, default=None, help=f"results root (default {paths.RESULTS_DIR})")


def _identity(m: dict) -> dict:
    """What must be equal for two runs to be merged."""
    return {
        "experiment": m["experiment"],
        "experiment.toml sha256": m["experiment_toml_sha256"],
        "profile": m["profile"],
        "repetitions": m["repetitions"],
        "library pins": [(lib["label"], lib["name"], lib.get("build_id")) for lib in m["libraries"]
                         if lib["available"]],
        "shard count": (m.get("shard") or {}).get("total"),
    }


def main(args: argparse.Namespace) -> int:
    manifests = []
    for run_dir in args.runs:
        path = run_dir / "manifest.json"
        if not path.is_file():
            print(f"testbed merge: {run_dir}: not a run directory (no manifest.json)", file=sys.stderr)
            return 2
        manifests.append(json.loads(path.read_text()))
    first = _identity(manifests[0])
    for run_dir, m in zip(args.runs[1:], manifests[1:]):
        other = _identity(m)
        for key, value in first.items():
            if other[key] != value:
                print(f"testbed merge: {run_dir}: {key} differs ({other[key]!r} vs {value!r} in "
                      f"{args.runs[0]}); refusing to merge", file=sys.stderr)
                return 2
    shards = [(m.get("shard") or {}).get("index") for m in manifests]
    if None not in shards and len(set(shards)) != len(shards):
        print(f"testbed merge: shard given twice: {sorted(shards)}", file=sys.stderr)
        return 2
    records, seen = [], set()
    for run_dir in args.runs:
        recs, torn = store.read_records(run_dir / store.RESULTS_NAME)
        if torn:
            print(f"testbed merge: warning: {run_dir}: ignoring a torn last line", file=sys.stderr)
        for r in recs:
            key = (r["cell_id"], r["repetition"])
            if key in seen:
                print(f"testbed merge: {run_dir}: cell {key[0]} repetition {key[1]} is in two inputs; "
                      "refusing to merge overlapping runs", file=sys.stderr)
                return 2
            seen.add(key)
        records += recs
    out_root = args.out or paths.RESULTS_DIR
    run_id = runner.new_run_id(None) + "-merged"
    out_dir = out_root / first["experiment"] / run_id
    out_dir.mkdir(parents=True)
    shutil.copyfile(args.runs[0] / runner.TOML_COPY, out_dir / runner.TOML_COPY)
    with store.ResultStore(out_dir) as results:
        for r in records:
            results.append(r)
    merged = dict(manifests[0])
    total = first["shard count"]
    missing_shards = sorted(set(range(1, total + 1)) - set(shards)) if total else []
    merged.update({
        "run_id": run_id, "shard": None,
        "status": "complete" if all(m["status"] == "complete" for m in manifests) and not missing_shards
        else "incomplete",
        "merged_from": [{"run_id": m["run_id"], "dir": str(d), "shard": m.get("shard"), "status": m["status"],
                         "host": m["host"], "git": m["git"]} for d, m in zip(args.runs, manifests)],
        "missing_shards": missing_shards,
        "cell_count": sum(m["cell_count"] for m in manifests),
        "planned_runs": sum(m["planned_runs"] for m in manifests),
        "summary": {"ok": sum(1 for r in records if r["status"] == "ok"),
                    "failed": sum(1 for r in records if r["status"] != "ok"),
                    "failures": [f for m in manifests for f in (m.get("summary") or {}).get("failures", [])]},
    })
    store.write_json_atomic(out_dir / "manifest.json", merged)
    if missing_shards:
        print(f"testbed merge: warning: shards {missing_shards} of {total} are not in the merge",
              file=sys.stderr)
    print(f"testbed merge: {len(records)} results from {len(args.runs)} runs -> {out_dir}", file=sys.stderr)
    print(out_dir)
    return 0
