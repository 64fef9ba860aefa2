"""The end of a session: the manifest's `summary` (what ran, what failed and why, how
each configuration stopped and what was decided) and the lines printed for people."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from testbed.records import counting_runs
from testbed.sweep.adaptive import UNDECIDED, Group

MAX_PRINTED_FAILURES = 20


def _failures(latest: dict) -> list[dict]:
    return [{"cell_id": r["cell_id"], "repetition": r["repetition"], "library": r["library"],
             "pattern": r["pattern"], "transport": r["transport"], "msg_size": r["msg_size"],
             "config": r["config"], "placement": r.get("placement"), "process_model": r.get("process_model"),
             "link": r.get("link"), "status": r["status"], "exit_code": r["exit_code"],
             "failure": r.get("failure", "")}
            for r in latest.values() if r["status"] != "ok"]


def group_entry(group: Group) -> dict:
    first = group.cells[0]
    return {"group": group.group, "pattern": first.pattern, "transport": first.transport,
            "msg_size": first.msg_size, "io_threads": first.io_threads, "config": first.config,
            "placement": first.placement, "process_model": first.process_model, "link": first.link,
            "stop_reason": group.stop_reason, "decisions": group.decisions}


def decided_counts(groups: list[Group]) -> dict:
    """metric -> {"decided", "total"} over every library comparison of the run;
    "<metric> (configurations)" for the configuration comparisons."""
    out: dict[str, dict] = {}
    for g in groups:
        for d in g.decisions:
            key = d["metric"] if d.get("kind", "library") == "library" else f"{d['metric']} (configurations)"
            entry = out.setdefault(key, {"decided": 0, "total": 0})
            entry["total"] += 1
            entry["decided"] += d["verdict"] != UNDECIDED
    return out


def verdicts_by_candidate(groups: list[Group], same_build: set[str]) -> dict:
    """candidate -> metric -> verdict -> count. Candidates in `same_build` are the
    reference's own build under another label (A/A): any FAST or SLOW among them is a
    false call, and `false_call_rate` says how often that happened."""
    out: dict[str, dict] = {}
    for g in groups:
        for d in g.decisions:
            if d.get("kind", "library") != "library":
                continue
            per = out.setdefault(d["candidate"], {"aa": d["candidate"] in same_build, "metrics": {}})
            counts = per["metrics"].setdefault(d["metric"], {})
            counts[d["verdict"]] = counts.get(d["verdict"], 0) + 1
    for per in out.values():
        if per["aa"]:
            metrics = per["metrics"].values()
            calls = sum(c for m in metrics for v, c in m.items() if v in ("FAST", "SLOW"))
            total = sum(c for m in metrics for c in m.values())
            per["comparisons"], per["false_calls"] = total, calls
            per["false_call_rate"] = round(calls / total, 4) if total else None
    return out


def same_build(exp) -> set[str]:
    ref_name = next(e.name for e in exp.libraries if e.label == exp.reference)
    return {e.label for e in exp.libraries if e.name == ref_name and e.label != exp.reference}


def summarize(records: list[dict], ctx, groups: list[Group], spent_s: float) -> dict:
    latest: dict = {}
    for r in records:  # the last attempt of a (cell, repetition) counts
        latest[(r["cell_id"], r["repetition"])] = r
    by_status = Counter(r["status"] for r in latest.values())
    failures = _failures(latest)
    reps = ctx.design.min_repetitions
    skipped = sum(reps for c in ctx.cells if c.library_name in ctx.missing)
    return {"ok": by_status.get("ok", 0), "failed": len(failures), "by_status": dict(by_status),
            "planned": len(ctx.cells) * reps, "not_run_missing_library": skipped,
            "missing_libraries": sorted({c.library for c in ctx.cells if c.library_name in ctx.missing}),
            "wall_seconds": round(sum(r.get("wall_seconds", 0) for r in latest.values()), 1),
            "spent_seconds": round(spent_s, 1), "budget_seconds": ctx.design.time_budget_s,
            "stop_reasons": dict(Counter(g.stop_reason or "not stopped" for g in groups)),
            "decided": decided_counts(groups), "groups": [group_entry(g) for g in groups],
            "verdicts": verdicts_by_candidate(groups, same_build(ctx.exp)),
            "failures": failures}


def counting(records: list[dict], declared: int, blocks: int) -> dict:
    """The counting runs (sweep/counting.py): how many cells' records, by status, and
    why no system call was counted, where none was."""
    latest = counting_runs.latest(records)
    by_status = Counter(r["status"] for r in latest)
    return {"declared_per_block": declared, "blocks": blocks, "records": len(latest),
            "by_status": dict(by_status), "failed": sum(n for st, n in by_status.items() if st != "ok"),
            "not_counted": counting_runs.not_counted(latest)}


def print_summary(m, run_dir: Path) -> None:
    s = m.summary
    out = sys.stderr
    print(f"\n{m.experiment} ({m.profile}): {m.status}; {s['ok']} ok, {s['failed']} failed runs "
          f"({s['planned']} planned at the minimum)", file=out)
    if s["stop_reasons"]:
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(s["stop_reasons"].items()))
        print(f"  blocks stopped: {reasons}", file=out)
    for metric, c in sorted(s["decided"].items()):
        print(f"  {metric}: {c['decided']} of {c['total']} comparisons decided", file=out)
    for label, per in sorted(s.get("verdicts", {}).items()):
        counts = "; ".join(f"{metric} " + ", ".join(f"{n} {v}" for v, n in sorted(c.items()))
                           for metric, c in sorted(per["metrics"].items()))
        aa = (f" (A/A: {per['false_calls']} of {per['comparisons']} called FAST/SLOW, false-call rate "
              f"{per['false_call_rate']:.1%})") if per["aa"] and per["comparisons"] else ""
        print(f"  {label} vs {m.reference}: {counts}{aa}", file=out)
    for f in s["failures"][:MAX_PRINTED_FAILURES]:
        print(f"  {f['status']}: {f['library']} {f['pattern']} {f['transport']} {f['msg_size']}B "
              f"{f['config']} rep{f['repetition']}: {f['failure']}", file=out)
    if len(s["failures"]) > MAX_PRINTED_FAILURES:
        print(f"  ... {len(s['failures']) - MAX_PRINTED_FAILURES} more (manifest.json summary.failures)",
              file=out)
    cr = s.get("counting_runs")
    if cr:
        why = f"; system calls NOT counted: {cr['not_counted']}" if cr["not_counted"] else ""
        print(f"  counting runs ({cr['declared_per_block']} per block, never timed): {cr['records']} cell "
              f"records, {cr['failed']} failed{why}", file=out)
    for miss in m.missing_libraries:
        print(f"  MISSING LIBRARY {miss['label']} ({miss['name']}): {s['not_run_missing_library']} runs "
              f"not done: {miss['reason']}", file=out)
    ref = m.speed_reference
    if ref.get("present") and ref.get("measurements"):
        tol = ref.get("tolerance")
        rule = f"tolerance {100 * tol:g}%" if tol is not None else "no tolerance declared: none excluded"
        print(f"  host speed reference: {ref['pairs']} pairs, median {ref['median_ms']:.1f} ms "
              f"(min {ref['min_ms']:.1f}, max {ref['max_ms']:.1f}, CV {100 * ref['cv']:.1f}%); "
              f"{ref['excluded']} pairs excluded as host-drift ({rule})", file=out)
    if not m.perf["available"]:
        print(f"  perf unavailable: {m.perf['reason']} (results carry no counters)", file=out)
    print(f"raw results: {run_dir}", file=out)
