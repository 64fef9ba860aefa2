"""`./testbed history EXPERIMENT [--cell KEY=VALUE,...] [--metric M] [--out DIR]`: each
cell's verdict over the zlink commits of the experiment's published runs
(results/history.py): a table on stdout, history.csv and one figure per metric in DIR."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testbed import paths

from . import fmt


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment", help="a folder under reports/ with published runs")
    parser.add_argument("--cell", default=None, metavar="KEY=VALUE,...",
                        help="only these comparisons, e.g. pattern=PUSH_PULL,transport=tcp,msg_size=64")
    parser.add_argument("--metric", action="append", default=None,
                        help="only this metric (repeatable; default: every compared metric)")
    parser.add_argument("--out", type=Path, default=None,
                        help="where the CSV and figures go (default results/history/EXPERIMENT)")


def _table(rows) -> str:
    body = [[r["commit"][:12] + ("+" if r["dirty"] else ""), r["run_id"], r["pattern"], r["transport"],
             str(r["msg_size"]), r["config"], f"{r['placement']} {r['process_model']}", r["metric"],
             f"{r['library']}/{r['reference']}",
             f"{r['ratio']:.3f} [{r['ratio_lo']:.3f}, {r['ratio_hi']:.3f}]", r["verdict"]]
            for r in rows.to_dict("records")]
    head = ["zlink commit", "run", "pattern", "transport", "size", "config", "placement", "metric", "pair",
            "ratio [CI] (> 1 = candidate better)", "verdict"]
    return fmt.md_table(head, body)


def main(args: argparse.Namespace) -> int:
    from . import history, history_plot, plots
    try:
        select = history.parse_cell(args.cell)
        rows = history.history(args.experiment, select)
    except history.HistoryError as exc:
        print(f"testbed history: {exc}", file=sys.stderr)
        return 2
    if args.metric:
        rows = rows[rows["metric"].isin(args.metric)]
    out = args.out or paths.RESULTS_DIR / "history" / args.experiment
    out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(out / "history.csv", index=False)
    print(_table(rows))
    for metric in dict.fromkeys(rows["metric"]):
        figure = history_plot.draw_history(history_plot.history_data(rows, metric), metric, args.experiment)
        written = plots.save(figure, out / f"history-{metric}")
        print(f"testbed history: {metric}: {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0
