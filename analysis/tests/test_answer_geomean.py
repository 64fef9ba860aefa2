"""`{name.geomean}` of an [answer] comparison (results/answer.py): the geometric mean of the
candidate's ratios per by-group and metric, oriented so that above 1 is better, the
figure issue 42 judges libzmq's perf programs by ("geometric mean of throughput >= 1.5 in
every placement")."""
from types import SimpleNamespace

import pandas as pd
import pytest

from testbed.records import answer_spec
from testbed.results import answer, compare


def _cmp(rows):
    """A comparison table with only the columns the answer reads."""
    return pd.DataFrame([{"kind": "library", "library": "zlink", "reference": "libzmq-4.3.5",
                          "pattern": "PUSH_PULL", "transport": "tcp", "msg_size": size,
                          "placement": placement, "metric": metric, "diff_pct": diff, "verdict": verdict}
                         for placement, size, metric, diff, verdict in rows])


SPEC = answer_spec.parse("x.toml", {
    "sentence": "{tools.geomean}",
    "comparison": [{"name": "tools", "kind": "libraries", "metrics": ["throughput", "mean_latency"],
                    "by": ["placement"]}]})
RUN = SimpleNamespace(run_id="r", profile="default", margin=0.03, config_margin=None)


def test_the_geometric_mean_is_taken_per_group_and_metric_over_planned_comparisons():
    cmp = _cmp([
        ("free", 64, "throughput_msgs", +100.0, "FAST"),     # 2.0x
        ("free", 65536, "throughput_msgs", -50.0, "SLOW"),   # 0.5x: the mean of 2 and 1/2 is 1
        ("free", 64, "lat_mean_us", +21.0, "FAST"),          # 1.21x
        ("free", 65536, "lat_mean_us", 0.0, "SAME"),         # 1.00x: sqrt(1.21) = 1.1
        ("split", 64, "throughput_msgs", +50.0, "AMBIGUOUS"),
        ("split", 65536, "throughput_msgs", +50.0, "FAST"),
        ("split", 1024, "throughput_msgs", -90.0, compare.NOT_PLANNED),   # no verdict: left out
    ])
    got = answer.compute(SPEC, cmp, pd.DataFrame(), RUN)
    assert got.sentence == ("free: throughput 1.00x of 2, mean latency 1.10x of 2; "
                            "split: throughput 1.50x of 2")
    rows = {(r.label, r.metric): r for r in got.results[0].rows}
    assert rows[("split", "throughput_msgs")].gmean == pytest.approx(1.5)
    assert rows[("free", "lat_mean_us")].planned == 2


def test_a_group_without_a_planned_comparison_says_not_measured():
    cmp = _cmp([("one-core", 64, "throughput_msgs", 10.0, compare.NOT_PLANNED)])
    assert answer.compute(SPEC, cmp, pd.DataFrame(), RUN).sentence == "one-core: throughput not measured"
