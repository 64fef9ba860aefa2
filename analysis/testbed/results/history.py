"""A cell's verdict over zlink's history: every published run of an experiment
(reports/<experiment>/<run>/), its library comparisons judged as the run's own
report judges them (compare.compare_run), each placed at the zlink commit the
candidate was built from: the library's own `commit` when it ran as zlink@REV,
else the commit of the checkout the run started from (manifest `git`).

One row per (run, comparison): the ratio candidate/reference oriented so that
> 1 is the candidate better (throughput up, latency down), with its interval and
verdict. A comparison keeps its reference in its identity, so a before/after run
(`--libs zlink@A,zlink`) never joins the line of zlink against libzmq.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from testbed.records import cell_selector
from testbed.records.manifest import RunManifest
from testbed.records.run_dir import RunDir

from . import compare, load
from .runs import published_runs

# What `--cell KEY=VALUE,...` may select on (columns of a comparison).
CELL_KEYS = ("pattern", "transport", "msg_size", "io_threads", "config", "placement", "process_model", "link",
             "metric", "library", "reference")
IDENTITY = ["pattern", "transport", "msg_size", "io_threads", "config", "placement", "process_model", "link",
            "metric", "library", "reference"]
COLUMNS = ["run_id", "created_at", "commit", "dirty", *IDENTITY, "ratio", "ratio_lo", "ratio_hi", "verdict",
           "n_cand", "n_ref"]


class HistoryError(ValueError):
    """Bad input to the history (a cell selector, an experiment without runs)."""


def parse_cell(text: str | None) -> dict:
    """'pattern=PUSH_PULL,transport=tcp,msg_size=64' -> {column: value}."""
    try:
        return cell_selector.parse(text, CELL_KEYS)
    except cell_selector.CellSelectorError as exc:
        raise HistoryError(str(exc)) from None


def _commits(m: RunManifest) -> tuple[dict[str, str], str, bool]:
    """(label -> commit for libraries built at a revision, the checkout's commit, dirty)."""
    git = m.git or {}
    at = {lib.label: lib.commit for lib in m.library_info if lib.commit}
    return at, str(git.get("commit") or "?"), bool(git.get("dirty"))


def run_history(run_dir: Path, select: dict | None = None) -> pd.DataFrame:
    """The library comparisons of one run as history rows (see the module docstring)."""
    run = RunDir.open(run_dir)
    m = run.manifest
    cmp = compare.compare_run(load.load_run(run), m)
    cmp = cmp[(cmp["kind"] == "library") & cmp["diff_pct"].notna()]
    for key, value in (select or {}).items():
        cmp = cmp[cmp[key] == value]
    at, checkout, dirty = _commits(m)
    out = cmp[IDENTITY + ["verdict", "n_cand", "n_ref"]].copy()
    out["ratio"] = 1 + cmp["diff_pct"] / 100
    out["ratio_lo"] = 1 + cmp["ci_lo_pct"] / 100
    out["ratio_hi"] = 1 + cmp["ci_hi_pct"] / 100
    out["commit"] = [at.get(lib, checkout) for lib in cmp["library"]]
    out["dirty"] = [dirty and lib not in at for lib in cmp["library"]]
    out["run_id"] = m.run_id
    out["created_at"] = str(m.created_at or "")
    return out[COLUMNS].reset_index(drop=True)


def history(experiment: str, select: dict | None = None, reports_dir: Path | None = None) -> pd.DataFrame:
    """Every published run's rows, oldest run first."""
    runs = published_runs(experiment, reports_dir)
    if not runs:
        raise HistoryError(f"no published run of {experiment!r} (reports/{experiment}/<run>/ with "
                           "manifest.json and results.parquet or results.jsonl)")
    frames = [run_history(run, select) for run in runs]
    frames = [f for f in frames if not f.empty]
    if not frames:
        raise HistoryError(f"no library comparison of {experiment!r} matches {select or 'anything'}")
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["created_at", "run_id"], kind="mergesort").reset_index(drop=True)
