"""Which SLOW verdicts of published scorecard runs come back run after run.

Used by docs/profiling/2026-12-05-split-ipc-syscalls.md.  Reads each run's comparisons
as its report does (testbed.results.explore.open_run) and lists, per timing metric the
issue judges (throughput, p50, p99), every zlink-vs-libzmq comparison called SLOW in
any of the runs, with how many of the runs called it so and the differences.

    .venv/bin/python docs/profiling/scripts/slow_replication.py RUN_DIR...
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "analysis"))
from testbed.results import explore  # noqa: E402

METRICS = ("throughput_msgs", "lat_p50_us", "lat_p99_us")
KEY = ("placement", "io_threads", "pattern", "transport", "msg_size", "metric")


def main(run_dirs: list[str]) -> None:
    slow = collections.defaultdict(list)
    for run_dir in run_dirs:
        cmp = explore.open_run(Path(run_dir)).comparisons
        cmp = cmp[(cmp["kind"] == "library") & cmp["metric"].isin(METRICS)]
        run_id = Path(run_dir).name[-4:]
        calls = cmp["verdict"].value_counts()
        print(f"{run_id}: {len(cmp)} comparisons, {calls.get('FAST', 0)} FAST, {calls.get('SLOW', 0)} SLOW")
        for row in cmp[cmp["verdict"] == "SLOW"].to_dict("records"):
            slow[tuple(row[k] for k in KEY)].append(f"{run_id} {row['diff_pct']:+.1f}%")
    print(f"\n| SLOW in | {' | '.join(KEY)} | runs |")
    print("|---|" + "---|" * (len(KEY) + 1))
    for key, runs in sorted(slow.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"| {len(runs)} of {len(run_dirs)} | {' | '.join(str(k) for k in key)} | {', '.join(runs)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
