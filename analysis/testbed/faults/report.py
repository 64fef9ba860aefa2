"""report.md of a faults run: the headline, then per fault the accounting of both
libraries side by side (summed over the repetitions) with the timing verdicts, then
what a user may lose per pattern and fault with each library, as this run saw it."""

from __future__ import annotations

from pathlib import Path

from testbed.records.fault_run_dir import FaultRunDir

from . import verdicts
from .accounting import PHASES
from .config import PATTERNS
from .verdicts import BAD, TIMINGS, CellSummary

SHORT = {
    "lost": "lost",
    "duplicated": "dup",
    "reordered": "reord",
    "corrupted": "corrupt",
    "phantom": "phantom",
}
DETECTION_FAULTS = ("partition", "freeze")  # the heartbeat criterion: a connection that carries nothing


def load(run_dir: Path) -> tuple[dict, list[dict]]:
    run = FaultRunDir.open(run_dir)
    return run.manifest(), run.records()


def _ms(v) -> str:
    return "-" if v is None else (f"{v:.0f}" if v >= 10 else f"{v:.1f}")


def _pair(a, b) -> str:
    return f"{a} / {b}"


def _verdict(v: dict) -> str:
    if "ratio" in v:
        return f"{v['verdict']} ({v['ratio']:.2f} [{v['low']:.2f}, {v['high']:.2f}])"
    return v["verdict"]


def _mib(kb) -> str:
    return "-" if kb is None else f"{kb / 1024:.1f}"


def headline(cells: dict[str, CellSummary], ref: str, cand: str, m: dict) -> list[str]:
    labels = (ref, cand)
    lossy = {lab: sorted(k for k, c in cells.items() if c.bad(lab)) for lab in labels}
    worse = {k: c.worse_than_reference(ref, cand) for k, c in cells.items()}
    worse = {k: v for k, v in worse.items() if v}
    lines = ["## Verdict", ""]  # the README's answer block quotes these bullets
    for lab in labels:
        flags = {f: sum(c.sides[lab].flags()[f] for c in cells.values()) for f in ("abort", "hang", "error")}
        lines.append(
            f"- **{lab}**: {len(lossy[lab])} of {len(cells)} cells lost, duplicated, reordered or "
            f"corrupted a message in some repetition; aborts {flags['abort']}, hangs {flags['hang']}, "
            f"process errors {flags['error']}."
        )
    if worse:
        lines.append(
            f"- **{cand} worse than {ref}** (a problem {ref} never had in that cell) in "
            f"{len(worse)} cells: " + "; ".join(f"`{k}` ({', '.join(v)})" for k, v in sorted(worse.items()))
        )
    else:
        lines.append(
            f"- **{cand} never lost, duplicated, reordered or corrupted a message in a cell where {ref} "
            "delivered every message intact, and never aborted or hung.**"
        )
    for metric in TIMINGS:
        counts: dict[str, int] = {}
        for c in cells.values():
            v = c.verdicts[metric]["verdict"]
            counts[v] = counts.get(v, 0) + 1
        slow = [f"`{k}`{_q(c.verdicts[metric])}" for k, c in sorted(cells.items())
                if c.verdicts[metric]["verdict"] == "SLOW"]
        lines.append(
            f"- {metric} ({cand} vs {ref}): "
            + ", ".join(f"{v} {n}" for v, n in sorted(counts.items()))
            + (f"; SLOW in: {', '.join(slow)}" if slow else "")
            + _discoveries(cells, metric)
        )
    lines += _heartbeat_check(cells, labels, m)
    return lines + [""]


def _q(v: dict) -> str:
    return f" (q {v['q']:.2f})" if v.get("q") is not None else ""


def _discoveries(cells: dict[str, CellSummary], metric: str, fdr: float = 0.05) -> str:
    """Which FAST/SLOW calls a false-discovery rate of `fdr` keeps (BH over the run's
    cells judged on an interval, verdicts.add_q_values)."""
    judged = [(k, c.verdicts[metric]) for k, c in cells.items() if c.verdicts[metric].get("q") is not None]
    if not judged:
        return ""
    kept = {w: sum(1 for _k, v in judged if v["verdict"] == w and v["q"] <= fdr) for w in ("FAST", "SLOW")}
    return (f"; at a false-discovery rate of {fdr:g} over the {len(judged)} judged, "
            f"{kept['FAST']} FAST and {kept['SLOW']} SLOW remain")


def _heartbeat_check(cells: dict[str, CellSummary], labels, m: dict) -> list[str]:
    hb = m.get("heartbeat")
    if not hb:
        return []
    limit = hb["timeout_ms"] + hb["ivl_ms"]
    out = []
    for lab in labels:
        times, missing = [], 0
        for c in cells.values():
            if c.cell["heartbeat"] != "on" or c.cell["fault"] not in DETECTION_FAULTS:
                continue
            for r in c.sides[lab].ok_runs():
                t = r["timing"]["detect_ms"]
                if t is None:
                    missing += 1
                else:
                    times.append(t)
        if not times and not missing:
            continue
        late = [t for t in times if t > limit]
        out.append(
            f"- heartbeats on, {'/'.join(DETECTION_FAULTS)}: {lab} detected {len(times)} of "
            f"{len(times) + missing} runs, slowest {_ms(max(times) if times else None)} ms; "
            f"limit HEARTBEAT_TIMEOUT + IVL = {limit} ms: "
            + ("**within**" if not late and not missing else f"**{len(late)} late, {missing} never**")
        )
    return out


def cell_table(cells: list[CellSummary], ref: str, cand: str) -> list[str]:
    head = (
        "| pattern | sec | hb | sent | "
        + " | ".join(SHORT[k] for k in BAD)
        + " | detect ms | verdict | resume ms | verdict | reconnect ms | peak RSS MiB | peak fds"
        + " | abort/hang |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for c in cells:
        r, z = c.sides[ref], c.sides[cand]
        fr, fz = r.flags(), z.flags()
        row = [
            c.cell["pattern"],
            c.cell["security"],
            c.cell["heartbeat"],
            _pair(r.total("sent"), z.total("sent")),
        ]
        row += [_count_cell(r, z, k) for k in BAD]
        for metric in ("detect_ms", "resume_ms"):
            row += [
                _pair(
                    _ms(verdicts.median(r.timing(metric).values())),
                    _ms(verdicts.median(z.timing(metric).values())),
                ),
                _verdict(c.verdicts[metric]),
            ]
        row += [
            _pair(
                _ms(verdicts.median(r.timing("reconnect_ms").values())),
                _ms(verdicts.median(z.timing("reconnect_ms").values())),
            ),
            _pair(_mib(r.peak("peak_rss_kb")), _mib(z.peak("peak_rss_kb"))),
            _pair(r.peak("peak_fds") or "-", z.peak("peak_fds") or "-"),
            _pair(f"{fr['abort']}/{fr['hang']}", f"{fz['abort']}/{fz['hang']}"),
        ]
        lines.append("| " + " | ".join(str(x) for x in row) + " |")
    return lines


def _count_cell(r, z, key: str) -> str:
    """`ref / cand`; reorders across connections (ROUTER receivers) in parentheses."""
    text = _pair(r.total(key), z.total(key))
    if key == "reordered" and (r.total("reordered_across") or z.total("reordered_across")):
        text += f" (across conns {_pair(r.total('reordered_across'), z.total('reordered_across'))})"
    return text


def _loss_text(side) -> str:
    runs = side.ok_runs()
    if not runs:
        return "no run"
    parts = []
    for k in BAD:
        total = side.total(k)
        if total:
            text = f"{SHORT[k]} {total} in {side.runs_with(k)}/{len(runs)} runs"
            if k == "lost":
                phases = {p: sum(r["accounting"]["lost_by_phase"][p] for r in runs) for p in PHASES}
                text += " (sent " + ", ".join(f"{p} the fault {n}" for p, n in phases.items() if n) + ")"
            if k == "reordered" and side.total("reordered_across"):
                text += f" ({side.total('reordered_across')} across connections)"
            parts.append(text)
    return "; ".join(parts) or "nothing"


def semantics(cells: dict[str, CellSummary], ref: str, cand: str, patterns, faults) -> list[str]:
    lines = [
        "## What a user may lose, per pattern (as this run saw it)",
        "",
        f"Each entry sums every security and heartbeat setting of the cell; {ref} first, then {cand}. "
        '"nothing": every message sent was delivered intact, once, in order.',
        "",
    ]
    for pattern in patterns:
        lines += [f"### {pattern}", "", f"| fault | {ref} | {cand} |", "|---|---|---|"]
        for fault in faults:
            mine = [c for c in cells.values() if c.cell["pattern"] == pattern and c.cell["fault"] == fault]
            if not mine:
                continue
            merged = {lab: verdicts.Side([r for c in mine for r in c.sides[lab].runs]) for lab in (ref, cand)}
            lines.append(f"| {fault} | {_loss_text(merged[ref])} | {_loss_text(merged[cand])} |")
        lines.append("")
    return lines


def render(run_dir: Path, out_dir: Path | None = None) -> Path:
    m, records = load(run_dir)
    ref = m["reference"]
    cand = next(lib["label"] for lib in m["libraries"] if lib["label"] != ref)
    cells = verdicts.group(records)
    verdicts.judge(cells, ref, cand, margin=m["timing_margin"], confidence=m["confidence"])
    seen_patterns = {c.cell["pattern"] for c in cells.values()}
    patterns = [p for p in PATTERNS if p in seen_patterns]
    seen_faults = {r["cell"]["fault"] for r in records}
    faults = [f for f in m.get("faults", {}) if f in seen_faults] or sorted(seen_faults)
    libs = ", ".join(f"{lib['label']} (build {lib['build_id']})" for lib in m["libraries"])
    lines = [
        f"# {m['experiment']} · run {m['run_id']}",
        "",
        f"**Question.** {m['question']}",
        "",
        f"Profile `{m['profile']}`, {m['repetitions']} repetitions of {m['cells']} cells per library; "
        f"libraries {libs}; proxy {m['proxy']['provenance']}; "
        f"host {m['host']['node']} ({m['host']['cpus']} CPUs, kernel {m['host']['kernel']}, load "
        f"{m['host']['load_at_start']:.1f} at start); status {m['status']}; "
        f"measure lock {m.get('lock') or 'none'}; seed {m['seed']}; "
        f"{m.get('concurrency', 1)} pair(s) of cell runs at a time"
        + (f" ({m['concurrency_reason']})" if m.get("concurrency", 1) > 1 else "")
        + ".",
        "",
        f"Each table cell reads `{ref} / {cand}`: counts summed over the repetitions, times the "
        "median over them. Verdicts: zlink against libzmq (lower is better), the testbed's "
        f"Hodges-Lehmann interval at {m['confidence']:g} confidence, SAME within "
        f"±{m['timing_margin']:.0%} (declared in experiment.toml with its reason).",
        "",
    ]
    lines += headline(cells, ref, cand, m)
    for fault in faults:
        mine = sorted(
            (c for c in cells.values() if c.cell["fault"] == fault),
            key=lambda c: (patterns.index(c.cell["pattern"]), c.cell["security"], c.cell["heartbeat"]),
        )
        lines += [f"## Fault: {fault}", "", *cell_table(mine, ref, cand), ""]
    lines += semantics(cells, ref, cand, patterns, faults)
    out = FaultRunDir.at(run_dir).report_path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines).rstrip() + "\n")
    return out
