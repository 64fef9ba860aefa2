"""One rule names the reference configuration for the sweep's adaptive loop, the
report's comparisons and the drift-noise measure (testbed.records.configs)."""
import pandas as pd

from testbed.records import configs
from testbed.results import compare
from testbed.sweep import adaptive
from testbed.sweep.plan import Cell


def test_the_configuration_without_overrides_is_the_reference():
    sets = {"default": configs.overrides([("batch", "unset")]),
            "b16": configs.overrides([("batch", 16384)]),
            "b32": configs.overrides([("batch", 32768)])}
    assert configs.reference_config(sets) == "default"


def test_no_reference_when_no_configuration_is_below_every_other():
    sets = {"a": configs.overrides([("x", 1)]), "b": configs.overrides([("y", 1)])}
    assert configs.reference_config(sets) is None
    assert configs.reference_config({"only": frozenset()}) is None


def test_a_missing_override_read_back_by_pandas_counts_as_unset():
    assert configs.overrides([("x", float("nan")), ("y", None), ("z", "")]) == frozenset()


def test_the_loop_the_report_and_drift_noise_name_the_same_reference():
    rows = [("default", ""), ("b16", "16384"), ("b64", "65536")]
    df = pd.DataFrame({"config": [c for c, _ in rows], "param_batch": [v for _, v in rows]})
    cells = [Cell(cell_id=name, group=name, library="zlink", library_name="zlink", kind="thr",
                  pattern="PAIR", transport="tcp", msg_size=64, io_threads=1,
                  params={"ZMQ_BATCH": value or "unset"}, config=name) for name, value in rows]
    assert compare.reference_config(df) == adaptive.reference_config(cells) == "default"
