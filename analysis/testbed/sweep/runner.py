"""One session of a run: set up the hosts, warm up, run the measurement loop, record
everything in the run directory and the manifest, and leave a directory that
`--resume` can always continue (after Ctrl-C, kill -9 or a crash of a bench)."""
from __future__ import annotations

import dataclasses
import random
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from testbed.records import run_writer
from testbed.records.manifest import RunManifest
from testbed.sweep import (
    adaptive,
    ceiling,
    execute,
    flamegraphs,
    hostinfo,
    hostload,
    library_settings,
    perf_tools,
    placement,
    speedref,
    summary,
    work,
)
from testbed.sweep import perf as perfmod
from testbed.sweep import plan as planmod
from testbed.sweep.config import Experiment
from testbed.sweep.config_run import Design
from testbed.sweep.libs import LibraryBuild, describe
from testbed.sweep.loop import Loop
from testbed.sweep.topology import Topology
from testbed.toolchain import tracefs
from testbed.toolchain.progress import Progress


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
    manifest: RunManifest
    cells: list[planmod.Cell]
    libs: dict[str, LibraryBuild]   # registered name -> build
    missing: dict[str, str]         # registered name -> reason
    resume_cmd: str
    design: Design                  # the experiment's design after the planner's check
    decider: adaptive.Decider | None = None  # the stats piece's decide(), if available
    cell_by_id: dict = field(default_factory=dict)
    layout: str = "blocks"          # how blocks run (sweep/arms.py): "arms" or "blocks"

    def __post_init__(self):
        self.cell_by_id = {c.cell_id: c for c in self.cells}


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
            # zlink@REV: the revision as asked and the full commit it was built from.
            row.update({k: lib.info[k] for k in ("revision", "commit") if k in lib.info})
        else:
            row["reason"] = missing.get(entry.name, "unknown")
        rows.append(row)
    return rows


def missing_table(exp: Experiment, missing: dict) -> list[dict]:
    return [{"label": e.label, "name": e.name, "reason": missing[e.name]}
            for e in exp.libraries if e.name in missing]


def initial_manifest(exp: Experiment, run_id: str, shard, seed: int, cells, libs, missing,
                     perf: perfmod.PerfSetup, estimate_s: float, argv: list[str], design: Design,
                     design_note: str = "") -> RunManifest:
    return RunManifest(
        run_id=run_id, experiment=exp.name, question=exp.question, seed_report=exp.seed,
        experiment_toml_sha256=exp.toml_sha256, experiment_source=str(exp.path),
        profile=exp.profile, shard={"index": shard[0], "total": shard[1]} if shard else None,
        shuffle_seed=seed, interleave=exp.interleave, shuffle=exp.shuffle,
        repetitions=design.min_repetitions, warmup_runs=exp.warmup_runs,
        timeout_s=exp.timeout_s, reference=exp.reference,
        libraries=library_table(exp, libs, missing), missing_libraries=missing_table(exp, missing),
        git=hostinfo.git_state(), host=hostinfo.host(),
        pinning={"placement": list(exp.placement), "cpus": exp.cpus, "tool": "bench --pin-* / taskset"},
        perf=perf.as_manifest(), tool_versions=hostinfo.tool_versions(),
        cell_count=len(cells), planned_runs=len(cells) * design.min_repetitions,
        estimated_seconds=round(estimate_s, 1), created_at=now(), command=argv,
        design={**design.as_manifest(), "note": design_note, "declared": exp.design.as_manifest(),
                "process_model": list(exp.process_model), "link": list(exp.link)},
        library_settings={"declared": library_settings.declared(exp), "observed": {}},
        ceiling=({**exp.ceiling.as_manifest(), "file": run_writer.side_file_name("ceiling")}
                 if exp.ceiling else {}),
    )


def _runtime(ctx: RunContext, perf: perfmod.PerfSetup, workdir: Path, topo: Topology) -> execute.Runtime:
    try:
        cpus = placement.usable_cpus(ctx.exp.cpus)
    except (placement.PlacementError, ValueError) as exc:
        warn(str(exc))
        cpus = []
    ctx.manifest.placement = {"cpus": cpus, "declared_cpus": ctx.exp.cpus,
                              "placements": list(ctx.exp.placement)}
    return execute.Runtime(ctx.exp, perf, workdir, cpus, topo.two_host, topo.problem)


def _judge(ctx: RunContext) -> adaptive.Judge | None:
    if ctx.decider is None:
        return None
    if ctx.exp.kind == perf_tools.KIND:  # each program family is judged on its own figure
        return perf_tools.judge_for(ctx.decider, ctx.design, ctx.exp.reference)
    metrics = adaptive.metrics_for(ctx.exp.mode, ctx.exp.kind, ctx.design.stop_on)
    return adaptive.Judge(ctx.decider, ctx.design, ctx.exp.reference, metrics)


def run(ctx: RunContext, seed: int, perf: perfmod.PerfSetup) -> int:
    exp, run_dir, m = ctx.exp, ctx.run_dir, ctx.manifest
    workdir = run_dir / ".work"
    workdir.mkdir(exist_ok=True)
    # Resuming: a compacted run back to its journal, a torn last line cut off.
    for done in run_writer.prepare_resume(run_dir):
        warn(done)
    needs_hosts = any(c.process_model == "two-host" for c in ctx.cells)
    if ctx.design.counting_runs:
        mounted, why_not = tracefs.ensure()
        if why_not:  # the counting runs go on and record what they could not count
            warn(f"system calls will not be counted: {why_not}")
        elif mounted:
            print(f"testbed run: mounted tracefs at {tracefs.MOUNT_POINT} for the counting runs' "
                  "syscall tracepoints", file=sys.stderr, flush=True)
    work_setup = work.detect(exp.work_per_message and exp.kind == "bench", arms=ctx.layout == "arms")
    m.work_per_message = work_setup.as_manifest()
    m.speed_reference = {"present": ctx.design.speed_reference, **speedref.describe(),
                         "tolerance": ctx.design.drift_tolerance}
    interrupted, loop = False, None
    with Topology(exp, needs_hosts) as topo:
        m.hosts, m.links = topo.manifest_hosts, topo.manifest_links
        if topo.problem:
            warn(f"two-host cells cannot run here and will fail: {topo.problem}")
        rt = _runtime(ctx, perf, workdir, topo)
        progress = Progress()
        try:
            with run_writer.results(run_dir) as results:
                loop = Loop(ctx, rt, seed, _judge(ctx), progress, results, work_setup)
                todo = [p for p in loop.minimum_pairs() if (p[0].cell_id, p[1]) not in loop.done]
                m.sessions.append({"started_at": now(), "resumed_with": len(loop.done), "to_run": len(todo)})
                m.status = "running"
                m.save(run_dir)
                _warmup(ctx, rt, todo)
                with progress.counting(total=len(loop.done) + len(todo), done=len(loop.done)):
                    loop.run()
                loop.measure_work()
        except KeyboardInterrupt:
            interrupted = True
            if loop is not None:
                loop.stop_all("interrupted")
        m.links = topo.manifest_links  # the shaper filled in what it applied
    return _finish(ctx, loop, interrupted, workdir)


def _finish(ctx: RunContext, loop: Loop | None, interrupted: bool, workdir: Path) -> int:
    m, run_dir = ctx.manifest, ctx.run_dir
    records, _ = run_writer.records(run_dir)
    groups = loop.groups.values() if loop else []
    complete = bool(groups) and all(g.stop_reason not in (None, "interrupted") for g in groups) \
        and not ctx.missing
    m.status = "interrupted" if interrupted else ("complete" if complete else "incomplete")
    m.finished_at = now()
    m.host["load_after"] = hostinfo.load_average()
    m.host["competing_after"] = hostload.competing_cpu()
    m.summary = summary.summarize(records, ctx, list(groups), loop.spent if loop else 0.0)
    if ctx.design.counting_runs:
        m.summary["counting_runs"] = summary.counting(run_writer.lines(run_dir, "counting"),
                                                      ctx.design.counting_runs, len(groups))
    m.placement["threads"] = placement.summarize(records)
    if m.library_settings:
        m.library_settings["observed"] = library_settings.observed(records)
    if m.speed_reference.get("present"):
        m.speed_reference.update(speedref.summarize(run_writer.lines(run_dir, "speed")))
    if m.ceiling:
        m.ceiling.update(ceiling.summarize(run_writer.lines(run_dir, "ceiling")))
    if m.sessions:
        m.sessions[-1]["ended_at"] = now()
    if m.flamegraphs:
        flamegraphs.write_index(run_dir, m.flamegraphs)
    m.save(run_dir)
    if m.status == "complete":  # finished: the journal's records, compacted (records/columnar.py)
        run_writer.finish(run_dir)
    shutil.rmtree(workdir, ignore_errors=True)
    summary.print_summary(m, run_dir)
    if interrupted:
        print(f"testbed run: interrupted; resume with:\n  {ctx.resume_cmd}", file=sys.stderr)
        return 130
    failed = m.summary["failed"] + (m.summary.get("counting_runs") or {}).get("failed", 0)
    return 0 if failed == 0 and m.summary["ok"] > 0 else 1


def _warmup(ctx: RunContext, rt: execute.Runtime, todo) -> None:
    """Unrecorded runs of the first cell of each library: page cache, CPU clocks."""
    if not todo or ctx.exp.warmup_runs == 0:
        return
    quiet = dataclasses.replace(rt, perf=perfmod.PerfSetup(False, "warm-up"))
    seen = set()
    for cell, _ in todo:
        if cell.library_name in seen:
            continue
        seen.add(cell.library_name)
        lib = ctx.libs[cell.library_name]
        for _ in range(ctx.exp.warmup_runs):
            att = execute.Attempt(cell, -1, lib.bench_binary(cell.pattern), "", "warmup")
            rec = execute.run_cell(att, quiet)
            ctx.manifest.warmup.append({"library": cell.library, "cell_id": cell.cell_id,
                                        "status": rec["status"], "wall_seconds": rec["wall_seconds"]})


def resume_command(exp: Experiment, run_dir: Path) -> str:
    from testbed import paths
    # `./testbed run NAME` finds experiments/NAME/experiment.toml only; another file of a
    # shipped folder (experiments/noise-floor/arms.toml) is named by its path
    shipped = exp.path.resolve() == (paths.EXPERIMENTS_DIR / exp.name / "experiment.toml").resolve()
    return shlex.join(["./testbed", "run", exp.name if shipped else str(exp.path), "--resume", str(run_dir)])
