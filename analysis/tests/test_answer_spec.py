"""An experiment's [answer] table (records/answer_spec.py): every shipped toml declares
one that parses, and a malformed one stops `./testbed run` with one line naming the
file, the key and what is allowed."""
import tomllib

import pytest

from testbed import paths
from testbed.records import answer_spec
from testbed.sweep import config

GOOD = {
    "sentence": "Static sizes: {static.counts}; split tcp 64 B: {tcp64}.",
    "comparison": [{"name": "static", "kind": "configurations", "metrics": ["throughput"], "by": ["config"],
                    "library": "zlink"}],
    "quote": [{"name": "tcp64", "metric": "throughput", "where": {"transport": "tcp", "msg_size": 64}}],
}


# The fault runner's experiments (analysis/testbed/faults/) count messages lost or
# corrupted, not verdicts: their report is their answer; [answer] has no kind for them.
FAULTS_KINDS = ("faults", "faults-soak")


def test_every_shipped_experiment_declares_an_answer_that_parses():
    tomls = sorted(paths.EXPERIMENTS_DIR.glob("*/*.toml"))
    assert len(tomls) >= 15
    for toml in tomls:
        if tomllib.loads(toml.read_text()).get("workload", {}).get("kind") in FAULTS_KINDS:
            continue
        doc, spec = answer_spec.read(toml)
        assert spec is not None, f"{toml}: no [answer] table"
        assert spec.comparisons and spec.sentence


def test_a_good_table_parses_into_comparisons_and_quotes():
    spec = answer_spec.parse("x.toml", GOOD)
    assert spec.comparisons[0].metrics == ("throughput_msgs",)
    assert spec.comparisons[0].by == ("config",)
    assert spec.quotes[0].where == {"transport": ("tcp",), "msg_size": (64,)}


@pytest.mark.parametrize("change, key, allowed", [
    ({"comparison": [{**GOOD["comparison"][0], "kind": "pairs"}]}, "answer.comparison[0].kind",
     "libraries, configurations, aa, spread"),
    ({"comparison": [{**GOOD["comparison"][0], "metrics": ["p95"]}]}, "answer.comparison[0].metrics",
     "throughput, p50_latency"),
    ({"comparison": [{**GOOD["comparison"][0], "by": ["colour"]}]}, "answer.comparison[0].by", "pattern"),
    ({"comparison": [{**GOOD["comparison"][0], "margin": 0.1}]}, "answer.comparison[0].margin", "kind"),
    ({"comparison": [{**GOOD["comparison"][0], "reference": "x", "kind": "libraries"}]},
     "answer.comparison[0].reference", "kind = \"configurations\""),
    ({"sentence": "{static.median}"}, "answer.sentence", "{static.<FAST|SLOW"),
    ({"sentence": "{nobody.counts}"}, "answer.sentence", "{run}"),
    ({"sentence": "two\nlines"}, "answer.sentence", "one sentence"),
    ({"quote": [{"name": "tcp64", "metric": "throughput"}]}, "answer.quote[0].where", "pattern"),
    ({"quote": [{"name": "static", "metric": "throughput", "where": {"msg_size": 64}}]},
     "answer.quote[0].name", "a name per comparison and quote"),
    ({"comparison": []}, "answer.comparison", "at least one"),
    ({"colour": "red"}, "answer.colour", "comparison"),
])
def test_a_malformed_table_names_the_file_the_key_and_what_is_allowed(change, key, allowed):
    with pytest.raises(answer_spec.AnswerSpecError) as err:
        answer_spec.parse("experiments/x/experiment.toml", {**GOOD, **change})
    text = str(err.value)
    assert text.startswith(f"experiments/x/experiment.toml: {key}: "), text
    assert "allowed: " in text and allowed in text.split("allowed: ", 1)[1], text


def test_the_sweep_refuses_a_malformed_answer_before_it_runs(tmp_path):
    shipped = paths.EXPERIMENTS_DIR / "noise-floor" / "experiment.toml"
    text = shipped.read_text().replace('kind = "aa"', 'kind = "a/a"')
    assert text != shipped.read_text()
    bad = tmp_path / "experiment.toml"
    bad.write_text(text)
    with pytest.raises(config.ExperimentError,
                       match=r"experiment.toml: answer.comparison\[0\].kind: unknown kind"):
        config.load(bad)
    assert tomllib.loads(text)["experiment"]["name"] == "noise-floor"
