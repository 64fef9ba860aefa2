"""The sweep loop: run (cell, repetition) pairs in order, append each result, keep the
manifest current, and leave a directory that `--resume` can always continue."""
from __future__ import annotations

import random
import shlex
import shutil
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from testbed.sweep import execute, flamegraphs, store
from testbed.sweep import manifest as hostinfo
from testbed.sweep import perf as perfmod
from testbed.sweep import plan as planmod
from testbed.sweep.config import Experiment
from testbed.sweep.libs import LibraryBuild, describe
from testbed.sweep.progress import Progress

MANIFEST_SCHEMA = "testbed.manifest/1"
TOML_COPY = "experiment.toml"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_id(shard: tuple[int, int] | None) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    rid = f"{stamp}-{random.randrange(16**4):04x}"
    return rid + (f"-shard{shard[0]}of{shard[1]}" if shard else "")


def warn(text: str) -> None:
    print(f"testbed run: warning: {text}", file=sys.stderr, flush=True)


@dataclass
class RunContext:
    exp: Experiment
    run_dir: Path
    manifest: dict
    cells: list[planmod.Cell]
    libs: dict[str, LibraryBuild]   # registered name -> build
    missing: dict[str, str]         # registered name -> reason
    resume_cmd: str


def library_table(exp: Experiment, libs: dict, missing: dict) -> list[dict]:
    rows = []
    for entry in exp.libraries:
        row = {"label": entry.label, "name": entry.name,
               "role": "reference" if entry.label == exp.reference else "candidate",
               "available": entry.name in libs}
        if entry.name in libs:
            lib = libs[entry.name]
            row.update(describe(lib))
            row["build_id"] = lib.info.get("build_id")
        else:
            row["reason"] = missing.get(entry.name, "unknown")
        rows.append(row)
    return rows


def initial_manifest(exp: Experiment, run_id: str, shard, seed: int, cells, libs, missing,
                     perf: perfmod.PerfSetup, estimate_s: float, argv: list[str]) -> dict:
    return {
        "schema": MANIFEST_SCHEMA, "run_id": run_id, "status": "running",
        "experiment": exp.name, "question": exp.question, "seed_report": exp.seed,
        "experiment_toml_sha256": exp.toml_sha256, "experiment_source": str(exp.path),
        "profile": exp.profile, "shard": {"index": shard[0], "total": shard[1]} if shard else None,
        "shuffle_seed": seed, "interleave": exp.interleave, "shuffle": exp.shuffle,
        "repetitions": exp.repetitions, "warmup_runs": exp.warmup_runs,
        "timeout_s": exp.timeout_s, "reference": exp.reference,
        "libraries": library_table(exp, libs, missing),
        "missing_libraries": [{"label": e.label, "name": e.name, "reason": missing[e.name]}
                              for e in exp.libraries if e.name in missing],
        "git": hostinfo.git_state(), "host": hostinfo.host(),
        "pinning": {"cpus": exp.pin, "tool": "taskset" if exp.pin else None},
        "perf": perf.as_manifest(), "tool_versions": hostinfo.tool_versions(),
        "cell_count": len(cells), "planned_runs": len(cells) * exp.repetitions,
        "estimated_seconds": round(estimate_s, 1),
        "created_at": now(), "finished_at": None, "command": argv,
        "warmup": [], "flamegraphs": [], "summary": None, "sessions": [],
    }


def write_manifest(run_dir: Path, manifest: dict) -> None:
    store.write_json_atomic(run_dir / "manifest.json", manifest)


def _label(cell: planmod.Cell, rep: int) -> str:
    return (f"{cell.library} {cell.pattern} {cell.transport} {cell.msg_size}B "
            f"io{cell.io_threads} {cell.config} rep{rep}")


def run(ctx: RunContext, seed: int, perf: perfmod.PerfSetup) -> int:
    exp, run_dir, m = ctx.exp, ctx.run_dir, ctx.manifest
    workdir = run_dir / ".work"
    workdir.mkdir(exist_ok=True)
    torn = store.repair(run_dir / store.RESULTS_NAME)
    if torn:
        warn(f"dropped a torn last line (kept in {run_dir / store.TORN_NAME})")
    records, _ = store.read_records(run_dir / store.RESULTS_NAME)
    done = store.done_keys(records)
    pairs = planmod.order(ctx.cells, exp.repetitions, seed, exp.shuffle, exp.interleave)
    runnable = [(c, r) for c, r in pairs if c.library_name in ctx.libs]
    todo = [(c, r) for c, r in runnable if (c.cell_id, r) not in done]
    m["sessions"].append({"started_at": now(), "resumed_with": len(done), "to_run": len(todo)})
    m["status"] = "running"
    write_manifest(run_dir, m)
    role = {e.label: ("reference" if e.label == exp.reference else "candidate") for e in exp.libraries}
    record_sel = exp.perf_record
    interrupted = False
    try:
        _warmup(ctx, todo, perf, workdir)
        with store.ResultStore(run_dir) as results, \
                Progress(total=len(runnable), done=len(runnable) - len(todo)) as progress:
            for cell, rep in todo:
                lib = ctx.libs[cell.library_name]
                rec = execute.run_cell(cell, rep, lib.bench_binary(cell.pattern),
                                       lib.info.get("build_id", ""), exp, perf, workdir, role[cell.library])
                results.append(rec)
                progress.step(_label(cell, rep), rec["status"])
                if rec["status"] != "ok":
                    progress.note(f"  failed: {_label(cell, rep)}: {rec['failure']}")
                if rep == 0 and record_sel and any(planmod.matches(s, cell.fields()) for s in record_sel):
                    m["flamegraphs"].append(flamegraphs.record(cell, lib, exp, run_dir))
                    write_manifest(run_dir, m)
    except KeyboardInterrupt:
        interrupted = True
    records, _ = store.read_records(run_dir / store.RESULTS_NAME)
    finished = store.done_keys(records)
    complete = all((c.cell_id, r) in finished for c, r in pairs)
    m["status"] = "interrupted" if interrupted else ("complete" if complete else "incomplete")
    m["finished_at"] = now()
    m["host"]["load_after"] = hostinfo.load_average()
    m["summary"] = summarize(records, pairs, ctx)
    m["sessions"][-1]["ended_at"] = now()
    if m["flamegraphs"]:
        flamegraphs.write_index(run_dir, m["flamegraphs"])
    write_manifest(run_dir, m)
    shutil.rmtree(workdir, ignore_errors=True)
    print_summary(m, run_dir, ctx)
    if interrupted:
        print(f"testbed run: interrupted; resume with:\n  {ctx.resume_cmd}", file=sys.stderr)
        return 130
    return 0 if m["summary"]["failed"] == 0 and m["summary"]["ok"] > 0 else 1


def _warmup(ctx: RunContext, todo, perf, workdir: Path) -> None:
    """Unrecorded runs of the first cell of each library: page cache, CPU clocks."""
    if not todo or ctx.exp.warmup_runs == 0:
        return
    seen = set()
    for cell, _ in todo:
        if cell.library_name in seen:
            continue
        seen.add(cell.library_name)
        lib = ctx.libs[cell.library_name]
        for _ in range(ctx.exp.warmup_runs):
            rec = execute.run_cell(cell, -1, lib.bench_binary(cell.pattern), "", ctx.exp,
                                   perfmod.PerfSetup(False, "warm-up"), workdir, "warmup")
            ctx.manifest["warmup"].append({"library": cell.library, "cell_id": cell.cell_id,
                                           "status": rec["status"], "wall_seconds": rec["wall_seconds"]})


def summarize(records: list[dict], pairs, ctx: RunContext) -> dict:
    latest: dict = {}
    for r in records:  # the last attempt of a (cell, repetition) counts
        latest[(r["cell_id"], r["repetition"])] = r
    by_status: dict[str, int] = {}
    for r in latest.values():
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    failures = [{"cell_id": r["cell_id"], "repetition": r["repetition"], "library": r["library"],
                 "pattern": r["pattern"], "transport": r["transport"], "msg_size": r["msg_size"],
                 "config": r["config"], "status": r["status"], "exit_code": r["exit_code"],
                 "failure": r.get("failure", "")}
                for r in latest.values() if r["status"] != "ok"]
    skipped = sum(1 for c, _ in pairs if c.library_name in ctx.missing)
    return {"ok": by_status.get("ok", 0), "failed": len(failures), "by_status": by_status,
            "planned": len(pairs), "not_run_missing_library": skipped,
            "missing_libraries": sorted({c.library for c, _ in pairs if c.library_name in ctx.missing}),
            "wall_seconds": round(sum(r.get("wall_seconds", 0) for r in latest.values()), 1),
            "failures": failures}


def print_summary(m: dict, run_dir: Path, ctx: RunContext) -> None:
    s = m["summary"]
    out = sys.stderr
    print(f"\n{m['experiment']} ({m['profile']}): {m['status']}; "
          f"{s['ok']} ok, {s['failed']} failed of {s['planned']} planned runs", file=out)
    for f in s["failures"][:20]:
        print(f"  {f['status']}: {f['library']} {f['pattern']} {f['transport']} {f['msg_size']}B "
              f"{f['config']} rep{f['repetition']}: {f['failure']}", file=out)
    if len(s["failures"]) > 20:
        print(f"  ... {len(s['failures']) - 20} more (manifest.json summary.failures)", file=out)
    for miss in m["missing_libraries"]:
        print(f"  MISSING LIBRARY {miss['label']} ({miss['name']}): {s['not_run_missing_library']} runs "
              f"not done: {miss['reason']}", file=out)
    if not m["perf"]["available"]:
        print(f"  perf unavailable: {m['perf']['reason']} (results carry no counters)", file=out)
    print(f"raw results: {run_dir}", file=out)


def resume_command(exp: Experiment, run_dir: Path) -> str:
    from testbed import paths
    shipped = exp.path.resolve().parent.parent == paths.EXPERIMENTS_DIR.resolve()
    return shlex.join(["./testbed", "run", exp.name if shipped else str(exp.path), "--resume", str(run_dir)])


def load_history(results_root: Path) -> dict:
    """Median wall seconds of ok cells in earlier runs, keyed by the work they did
    (library-independent, so zlink cells borrow libzmq's time until zlink has its own)."""
    import statistics
    times: dict[tuple, list[float]] = {}
    for path in results_root.glob("*/*/results.jsonl"):
        try:
            records, _ = store.read_records(path)
        except (OSError, ValueError):
            continue
        for r in records:
            if r.get("status") != "ok" or "count" not in r:
                continue
            key = planmod.history_key(r["pattern"], r["transport"], r["msg_size"], r["io_threads"],
                                      r["count"], r["lat_count"], r.get("kind", "bench"))
            times.setdefault(key, []).append(r["wall_seconds"])
    return {k: statistics.median(v) for k, v in times.items()}


def wall_estimate(cells, exp: Experiment, history: dict | None = None) -> float:
    per_rep = sum(planmod.estimate_cell_seconds(c, exp, exp.hyperfine_runs, history) for c in cells)
    warm = exp.warmup_runs * len({c.library_name for c in cells}) * planmod.PROCESS_OVERHEAD_S * 3
    return per_rep * exp.repetitions + warm
