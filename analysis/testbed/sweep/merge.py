"""Join the shards of one run into one run directory (`./testbed merge`, and the end
of a Slurm sweep). Runs of different experiments, profiles or library builds are
refused: their results would not be comparable."""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from testbed.records import manifest as manifestmod
from testbed.records import run_writer
from testbed.records.manifest import RunManifest
from testbed.sweep import calibrate, ceiling, runner, work


class MergeError(ValueError):
    """Inputs that must not be merged; the message names the run and the reason."""


def _identity(m: RunManifest) -> dict:
    """What must be equal for two runs to be merged."""
    return {
        "experiment": m.experiment,
        "experiment.toml sha256": m.experiment_toml_sha256,
        "profile": m.profile,
        "repetitions": m.repetitions,
        "library pins": [(lib["label"], lib["name"], lib.get("build_id")) for lib in m.libraries
                         if lib["available"]],
        "shard count": (m.shard or {}).get("total"),
    }


def _check(runs: list[Path], manifests: list[RunManifest]) -> None:
    first = _identity(manifests[0])
    for run_dir, m in zip(runs[1:], manifests[1:], strict=True):
        other = _identity(m)
        for key, value in first.items():
            if other[key] != value:
                raise MergeError(f"{run_dir}: {key} differs ({other[key]!r} vs {value!r} in {runs[0]}); "
                                 "refusing to merge")
    shards = [(m.shard or {}).get("index") for m in manifests]
    if None not in shards and len(set(shards)) != len(shards):
        raise MergeError(f"shard given twice: {sorted(shards)}")


def _records(runs: list[Path]) -> list[dict]:
    records, seen = [], set()
    for run_dir in runs:
        recs, torn = run_writer.any_records(run_dir)
        if torn:
            print(f"testbed merge: warning: {run_dir}: ignoring a torn last line", file=sys.stderr)
        for r in recs:
            key = (r["cell_id"], r["repetition"])
            if key in seen:
                raise MergeError(f"{run_dir}: cell {key[0]} repetition {key[1]} is in two inputs; "
                                 "refusing to merge overlapping runs")
            seen.add(key)
        records += recs
    return records


def _side_files(runs: list[Path], out_dir: Path) -> None:
    """Calibrations, work-per-message records and in-run ceiling probes travel with
    their results (shards hold whole blocks, so no probe is in two of them)."""
    for run_dir in runs:
        for cal in calibrate.load(run_dir).values():
            calibrate.append(out_dir, cal)
        for rec in work.load(run_dir).values():
            work.append(out_dir, rec)
        for line in run_writer.lines(run_dir, "ceiling"):
            ceiling.append(out_dir, line)


def _merged_manifest(runs, manifests: list[RunManifest], run_id: str, records: list[dict]) -> RunManifest:
    total = _identity(manifests[0])["shard count"]
    shards = [(m.shard or {}).get("index") for m in manifests]
    missing_shards = sorted(set(range(1, total + 1)) - set(shards)) if total else []
    complete = all(m.status == "complete" for m in manifests) and not missing_shards
    groups = [g for m in manifests for g in (m.summary or {}).get("groups", [])]
    merged = dataclasses.replace(
        manifests[0], run_id=run_id, shard=None, status="complete" if complete else "incomplete",
        cell_count=sum(m.cell_count for m in manifests), planned_runs=sum(m.planned_runs for m in manifests),
        summary={"ok": sum(1 for r in records if r["status"] == "ok"),
                 "failed": sum(1 for r in records if r["status"] != "ok"),
                 "groups": groups,
                 "failures": [f for m in manifests for f in (m.summary or {}).get("failures", [])]})
    sources = [{"run_id": m.run_id, "dir": str(d), "shard": m.shard, "status": m.status, "host": m.host,
                "git": m.git} for d, m in zip(runs, manifests, strict=True)]
    merged.extra = {**merged.extra, "missing_shards": missing_shards, "merged_from": sources}
    return merged


def merge(runs: list[Path], out_root: Path, extra: dict | None = None) -> Path:
    """The merged run directory (a new run under out_root); MergeError or ManifestError
    when the inputs must not be merged. `extra` joins the merged manifest verbatim."""
    manifests = [manifestmod.load(run_dir) for run_dir in runs]
    _check(runs, manifests)
    records = _records(runs)
    run_id = runner.new_run_id(None) + "-merged"
    out_dir = out_root / manifests[0].experiment / run_id
    out_dir.mkdir(parents=True)
    run_writer.keep_toml(out_dir, run_writer.toml_copy(runs[0]))
    with run_writer.results(out_dir) as results:
        for r in records:
            results.append(r)
    _side_files(runs, out_dir)
    merged = _merged_manifest(runs, manifests, run_id, records)
    merged.extra.update(extra or {})
    merged.save(out_dir)
    if merged.status == "complete":
        run_writer.finish(out_dir)
    missing = merged.extra["missing_shards"]
    if missing:
        print(f"testbed merge: warning: shards {missing} are not in the merge", file=sys.stderr)
    print(f"testbed merge: {len(records)} results from {len(runs)} runs -> {out_dir}", file=sys.stderr)
    return out_dir
