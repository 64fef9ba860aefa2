"""drift_noise: a pair whose host speed moved is compared with the pairs whose did not,
on synthetic runs whose answer is known."""
import numpy as np
import pandas as pd

from testbed.results import drift_noise

LIBS, CONFIGS = ("libzmq-4.3.5", "zlink"), (("default", "unset"), ("16 KiB", "16384"))


def _run(drifted: set[int], extra_noise: float, reps: int = 40, seed: int = 5):
    """Tidy rows and speed lines: every cell of repetition r runs in one pair; pairs in
    `drifted` moved 20% and carry `extra_noise` (log sd) on top of a 2% base noise."""
    rng = np.random.default_rng(seed)
    rows, lines = [], []
    for rep in range(reps):
        ids = []
        for lib in LIBS:
            for config, batch in CONFIGS:
                cid = f"{lib}/{config}"
                ids.append(cid)
                sd = 0.02 + (extra_noise if rep in drifted else 0.0)
                rows.append({"cell_id": cid, "repetition": rep, "library": lib, "config": config,
                             "param_batch": batch, "pattern": "PAIR", "transport": "tcp", "msg_size": 64,
                             "io_threads": 1, "placement": "one-core", "process_model": "two-process",
                             "link": "", "status": "ok", "metric": "throughput_msgs",
                             "value": 1e6 * (2 if lib == "zlink" else 1) * rng.lognormal(0, sd)})
        lines.append({"repetition": rep, "cell_ids": ids, "drift": 0.2 if rep in drifted else 0.001})
    return pd.DataFrame(rows), lines


def _median(table, kind, band):
    row = table[(table["kind"] == kind) & (table["band"] == band)]
    return float(row["median"].iloc[0])


def test_noisier_drifted_pairs_show_in_the_top_band():
    df, lines = _run(drifted=set(range(0, 40, 4)), extra_noise=0.15)
    table = drift_noise.by_band(drift_noise.deviations(df, lines, "libzmq-4.3.5"))
    for kind in ("library", "config"):
        assert _median(table, kind, "10-inf%") > 3 * _median(table, kind, "0-1%")
    # every pair of every comparison is counted once: 40 reps x (2 library + 2 config)
    assert table["pairs"].sum() == 40 * 4


def test_drift_that_does_not_add_noise_leaves_the_bands_level():
    df, lines = _run(drifted=set(range(0, 40, 4)), extra_noise=0.0)
    table = drift_noise.by_band(drift_noise.deviations(df, lines, "libzmq-4.3.5"))
    for kind in ("library", "config"):
        assert _median(table, kind, "10-inf%") < 2.5 * _median(table, kind, "0-1%")
