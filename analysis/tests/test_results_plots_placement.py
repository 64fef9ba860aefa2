"""Figures of a run over several placements (perf-tools: one-core, split, free): one
line per placement, never three points per size on one line; and numeric series even
where a metric is absent (a run with only mean latencies broke the latency figure)."""
from __future__ import annotations

import pandas as pd

from testbed.results import plots


def cells(placements, metric="lat_mean_us"):
    rows = []
    for placement in placements:
        for library, base in (("libzmq-4.3.5", 10.0), ("zlink", 20.0)):
            values = [base, base + 1, base + 2]
            rows.append({"pattern": "REQ_REP", "transport": "tcp", "config": "default", "library": library,
                         "msg_size": 64, "metric": metric, "n": 3, "values": values, "median": base + 1,
                         "placement": placement})
    return pd.DataFrame(rows)


def test_each_placement_is_its_own_series_when_a_run_has_several():
    data = plots.size_series_data(cells(["one-core", "split"]), "lat_mean_us")
    assert sorted(set(data["config"])) == ["one-core", "split"]
    single = plots.size_series_data(cells(["one-core"]), "lat_mean_us")
    assert set(single["config"]) == {"default"}


def test_series_are_numeric_even_when_empty_so_concatenation_keeps_them_drawable():
    mean = plots.size_series_data(cells(["one-core", "split"]), "lat_mean_us")
    p99 = plots.size_series_data(cells(["one-core", "split"]), "lat_p99_us")  # none measured
    both = pd.concat([mean, p99])
    assert p99.empty and str(both["lo"].dtype) == "float64" and str(both["msg_size"].dtype) == "int64"
    figure = plots.draw_size_series(both, "REQ_REP", "us", "latency", log_y=True)
    assert figure is not None
