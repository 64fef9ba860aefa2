"""[libraries] names and `./testbed run --libs` (sweep/config_libraries.py), and the
report header's line for a library built at a revision (results/run_table.py)."""
from __future__ import annotations

import pytest

from testbed.records.manifest import RunManifest
from testbed.results import run_table
from testbed.sweep import config, config_libraries
from testbed.sweep.config import ExperimentError

REGISTERED = ["libzmq-4.3.5", "zlink", "zlink-nocurve"]


@pytest.mark.parametrize("name,known", [
    ("zlink", True), ("zlink@main~3", True), ("zlink-nocurve@v1.0", True), ("zlink@feature/x", True),
    ("zlink@", False), ("zlinq@HEAD", False), ("zmq9", False), ("@HEAD", False),
])
def test_names_registered_or_at_a_revision(name, known):
    assert config_libraries.is_known(name, REGISTERED) is known


def _scorecard():
    return config.load(config.experiment_path("scorecard"), "quick", REGISTERED)


def test_libs_option_replaces_libraries_first_is_reference():
    exp = config_libraries.override(_scorecard(), ["zlink@main~3", "zlink"], REGISTERED)
    assert [(e.label, e.name) for e in exp.libraries] == [("zlink@main~3",) * 2, ("zlink",) * 2]
    assert exp.reference == "zlink@main~3"


@pytest.mark.parametrize("libs,message", [
    (["zlink"], "does not name two or more different libraries"),
    (["zlink", "zlink"], "does not name two or more different libraries"),
    (["zlink@main", "zlinq"], r"--libs: unknown library 'zlinq'; allowed: .*zlink@REV"),
])
def test_bad_libs_option_names_the_input(libs, message):
    with pytest.raises(ExperimentError, match=message):
        config_libraries.override(_scorecard(), libs, REGISTERED)


def test_report_header_names_the_commit():
    commit = "0123456789abcdef0123456789abcdef01234567"
    before = {"label": "zlink@HEAD~1", "name": "zlink@HEAD~1", "role": "reference", "build_id": "b1",
              "revision": "HEAD~1", "commit": commit, "info": {"version": "0.1"}}
    after = {"label": "zlink", "name": "zlink", "role": "candidate", "build_id": "b2",
             "info": {"version": "0.1"}}
    m = RunManifest.read({"schema": "testbed.manifest/2", "run_id": "r", "experiment": "e",
                     "reference": "zlink@HEAD~1", "libraries": [before, after]})
    rows = dict(run_table.brief(m))
    assert rows["library `zlink@HEAD~1`"] == ("zlink@HEAD~1 0.1 at commit `0123456789ab` build `b1` "
                                              "(reference)")
    assert rows["library `zlink`"] == "zlink 0.1 build `b2` (candidate)"


def test_experiment_toml_names_a_revision_in_use_and_aliases(tmp_path):
    text = config.experiment_path("scorecard").read_text().replace(
        'use = ["libzmq-4.3.5", "zlink"]\nreference = "libzmq-4.3.5"',
        'use = ["before", "zlink"]\nreference = "before"\n[libraries.aliases]\nbefore = "zlink@main~3"')
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    exp = config.load(path, "quick", REGISTERED)
    assert [(e.label, e.name) for e in exp.libraries] == [("before", "zlink@main~3"), ("zlink", "zlink")]
    path.write_text(text.replace('before = "zlink@main~3"', 'before = "libzmq@"'))
    with pytest.raises(ExperimentError, match=r"libraries.aliases.before: unknown library 'libzmq@'"):
        config.load(path, "quick", REGISTERED)
