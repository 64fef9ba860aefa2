"""A fault-runner experiment's generated answer quotes its newest published report's
verdict (fault runs have no manifest.json, so the sweep's RunSummary never sees them;
the block once said "no published run yet" beside a published soak)."""
from __future__ import annotations

from pathlib import Path

from testbed.records.fault_run_dir import FaultRunDir
from testbed.results import answer_blocks

TOML = """[experiment]
name = "faults-soak"
question = "Is every message accounted for?"
"""


def _publish(reports: Path, run_id: str, verdict: list[str]) -> None:
    run = reports / "faults-soak" / run_id
    run.mkdir(parents=True)
    FaultRunDir.at(run).write_manifest({})
    body = "\n".join(f"- {v}" for v in verdict)
    (run / "report.md").write_text(f"# faults-soak\n\n## Verdict\n\n{body}\n\n"
                                   "## Faults applied\n\n- FAULTS-APPLIED-ROW\n")


def test_the_block_quotes_the_newest_fault_report_and_never_says_no_run(tmp_path):
    (tmp_path / "experiments/faults-soak").mkdir(parents=True)
    (tmp_path / "experiments/faults-soak/experiment.toml").write_text(TOML)
    reports = tmp_path / "reports"
    _publish(reports, "20261201T000000Z-aaaa", ["OLD-VERDICT"])
    _publish(reports, "20261202T000000Z-bbbb", ["**zlink**: every message accounted for", "**libzmq**: same"])
    by_name = answer_blocks.currents({}, {}, tmp_path / "experiments", reports)
    readme = tmp_path / "experiments/faults-soak/README.md"
    text = "\n".join(answer_blocks.answer_section([by_name["faults-soak"]], readme, reports))
    assert "no published run" not in text
    assert "[20261202T000000Z-bbbb](../../reports/faults-soak/20261202T000000Z-bbbb/report.md)" in text
    assert "- **zlink**: every message accounted for" in text and "- **libzmq**: same" in text
    assert "OLD-VERDICT" not in text and "FAULTS-APPLIED-ROW" not in text


def test_without_a_published_fault_run_the_block_says_so(tmp_path):
    (tmp_path / "experiments/faults-soak").mkdir(parents=True)
    (tmp_path / "experiments/faults-soak/experiment.toml").write_text(TOML)
    by_name = answer_blocks.currents({}, {}, tmp_path / "experiments", tmp_path / "reports")
    line = answer_blocks.bullet(by_name["faults-soak"], tmp_path / "README.md", tmp_path / "reports")
    assert "no published run yet" in line
