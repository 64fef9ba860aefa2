"""The report's host speed section: how fast the host ran a fixed reference workload
over the run (sweep/speedref.py writes speed.jsonl, one line per interleaved pair,
timed before and after it), which pairs were excluded as host-drift and why, and a
figure of the reference against wall time so slow periods can be seen.

A run from before the reference existed (its manifest does not mention it) gets no
section, so its report renders as it always did; a run that switched it off gets one
line saying so."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pandas as pd

from testbed.records import schema
from testbed.records import speed_reference as speedref  # read here, written by sweep/speedref.py

from . import fmt


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def series(pairs: list[dict]) -> pd.DataFrame:
    """One row per measurement: seconds since the first one, reference ms, before or
    after, and whether its pair was excluded (what the figure draws)."""
    rows = []
    for ln in pairs:
        for side in ("before", "after"):
            m = ln.get(side) or {}
            if m.get("at") and m.get("ms") is not None:
                rows.append({"at": _when(m["at"]), "ms": float(m["ms"]), "side": side,
                             "excluded": ln.get("exclusion") == speedref.HOST_DRIFT})
    df = pd.DataFrame(rows, columns=["at", "ms", "side", "excluded"])
    if df.empty:
        return df.assign(seconds=pd.Series(dtype=float))
    df = df.sort_values("at", kind="mergesort").reset_index(drop=True)
    return df.assign(seconds=[(t - df["at"].iloc[0]).total_seconds() for t in df["at"]])


def draw(data: pd.DataFrame):
    from . import plots  # matplotlib only when there is something to draw
    fig, ax = plots.plt.subplots(figsize=(8, 3))
    kept, dropped = data[~data["excluded"]], data[data["excluded"]]
    ax.plot(data["seconds"], data["ms"], color="#9a9a9a", linewidth=0.6, zorder=1)
    ax.scatter(kept["seconds"], kept["ms"], s=6, color=plots.LIB_COLORS[0], label="pair kept", zorder=2)
    if not dropped.empty:
        ax.scatter(dropped["seconds"], dropped["ms"], s=14, color=plots.LIB_COLORS[1], marker="x",
                   label="pair excluded (host-drift)", zorder=3)
    ax.set_xlabel("wall time since the first measurement (s)")
    ax.set_ylabel("reference (ms, lower = faster host)")
    ax.set_title("Host speed reference before and after each pair")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def _label(ln: dict, cells: pd.DataFrame) -> str:
    ids = set(ln.get("cell_ids") or [])
    sel = cells[cells["cell_id"].isin(ids)]
    if sel.empty:
        return str(ln.get("group"))
    r = sel.iloc[0]
    return f"{r['pattern']} {r['transport']} {schema.kib(r['msg_size'])} {r['config']}".strip()


def section(pairs: list[dict], present: bool | None, tolerance: float | None, df: pd.DataFrame,
            out_dir: Path, fig_rel: str, draw_figure: bool = True) -> list[str]:
    """`present`: the manifest's speed_reference.present (None: a run from before it).
    draw_figure=False: the same lines, the figure named but not drawn."""
    lines = ["## Host speed", ""]
    if not pairs:
        if present is None:
            return []
        why = "no pair finished" if present else "`speed_reference = false`"
        return lines + [f"No host speed reference was recorded for this run ({why}).", ""]
    s = speedref.summarize(pairs)
    rule = (f"a pair whose reference moved by more than {100 * tolerance:g}% between its start and its "
            f"end is excluded from the verdicts (host-drift)") if tolerance is not None else \
        "no `speed_drift_tolerance` was declared: the reference is recorded, no pair is excluded"
    lines += [f"A fixed CPU-bound workload ({speedref.WORKLOAD}, the same work every time) was timed on "
              f"the bench's CPUs before and after each interleaved pair; {rule}. Its spread across the run "
              f"is the host's own, not the libraries'. The thread's CPU time beside it tells the two causes "
              f"apart: close to the wall figure, the CPU itself ran slower; far below it, other work shared "
              f"the CPU.", "",
              fmt.md_table(["Pairs", "Measurements", "Median (ms)", "Min (ms)", "Max (ms)", "CV",
                            "CPU time median (ms)", "Largest change within a pair", "Excluded (host-drift)"],
                           [[str(s["pairs"]), str(s["measurements"]), f"{s['median_ms']:.2f}",
                             f"{s['min_ms']:.2f}", f"{s['max_ms']:.2f}", f"{100 * s['cv']:.1f}%",
                             "-" if s["median_cpu_ms"] is None else f"{s['median_cpu_ms']:.2f}",
                             f"{100 * s['max_drift']:.1f}%", f"{s['excluded']} of {s['pairs']}"]]), ""]
    dropped = [ln for ln in pairs if ln.get("exclusion") == speedref.HOST_DRIFT]
    if dropped:
        cells = df.drop_duplicates("cell_id")
        rows = [[_label(ln, cells), str(ln["repetition"]), f"{ln['before']['ms']:.2f}",
                 f"{ln['after']['ms']:.2f}", f"{100 * ln['drift']:.1f}%",
                 f"host-drift: > {100 * ln['tolerance']:g}%"] for ln in dropped]
        lines += ["Excluded pairs (kept in results.jsonl, left out of every verdict):", "",
                  fmt.md_table(["Configuration", "Repetition", "Before (ms)", "After (ms)", "Change", "Why"],
                               rows), ""]
    data = series(pairs)
    if len(data) >= 2:
        if draw_figure:
            from . import plots
            base = Path(out_dir) / fig_rel / "host-speed"
            base.parent.mkdir(parents=True, exist_ok=True)
            plots.save(draw(data), base)
        lines += [f"![Host speed reference against wall time]({fig_rel}/host-speed.svg)", ""]
    return lines
