"""The history figure: one per metric (one question each: is zlink's throughput,
its p50, ... better than the reference's, and since which commit?). x: the published
runs in order, labelled by the zlink commit they measured; y: the candidate's speed-up
over the reference (candidate/reference for throughput, inverted for latency: > 1 is
always the candidate better), with each verdict's interval; one line per cell.
history_data() returns what is drawn; draw_history() draws it (plots.save writes it)."""
from __future__ import annotations

import matplotlib.ticker
import pandas as pd

from testbed.records import schema

from .history import IDENTITY
from .plots import LIB_COLORS, MARK, plt

LEGEND_MAX = 12  # more lines than this: no legend (the CSV beside the figure names them)


def _line_label(row: dict) -> str:
    where = " ".join(str(row[k]) for k in ("placement", "process_model") if row.get(k))
    return (f"{row['pattern']} {row['transport']} {row['msg_size']} B io{row['io_threads']} {row['config']}"
            f"{' ' + where if where else ''}: {row['library']}/{row['reference']}")


def history_data(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows of one metric with `x` (the run's place in time), `tick` and `line`."""
    d = rows[rows["metric"] == metric].copy()
    order = list(dict.fromkeys(d["run_id"]))
    d["x"] = [order.index(r) for r in d["run_id"]]
    d["tick"] = [f"{c[:7]}{'+' if dirty else ''}\n{r[:8]}" for c, dirty, r in zip(d["commit"], d["dirty"],
                                                                                  d["run_id"])]
    d["line"] = [_line_label(r) for r in d[IDENTITY].to_dict("records")]
    return d


def draw_history(data: pd.DataFrame, metric: str, experiment: str):
    m = schema.metric(metric)
    runs = data.drop_duplicates("x").sort_values("x")
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(runs) + 3), 4.2))
    lines = list(dict.fromkeys(data["line"]))
    for i, line in enumerate(lines):
        d = data[data["line"] == line].sort_values("x")
        color = LIB_COLORS[i % len(LIB_COLORS)]
        err = [(d["ratio"] - d["ratio_lo"]).clip(lower=0), (d["ratio_hi"] - d["ratio"]).clip(lower=0)]
        ax.errorbar(d["x"], d["ratio"], yerr=err, color=color, marker="o", ms=3, lw=1, capsize=2,
                    label=line if len(lines) <= LEGEND_MAX else None)
        for x, y, verdict in zip(d["x"], d["ratio"], d["verdict"]):
            ax.annotate(MARK.get(verdict, "?"), (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7,
                        color=color)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_yscale("log")  # ratios: x0.5 and x2 sit equally far from 1
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(list(runs["x"]), list(runs["tick"]), fontsize=7)
    ax.set_xlabel("zlink commit (+ = dirty tree) / run")
    oriented = "candidate / reference" if m.higher_is_better else "reference / candidate"
    ax.set_ylabel(f"{m.label}: {oriented} (> 1 = candidate better)", fontsize=8)
    ax.set_title(f"{experiment}: {m.label} over zlink's history ({len(runs)} published runs)")
    if len(lines) <= LEGEND_MAX:
        ax.legend(fontsize=6, loc="best")
    fig.tight_layout()
    return fig
