"""Re-judge a run from its raw files and check the verdicts reproduce: the report's
comparisons (results.jsonl + manifest.json, judged at the design's exact per-look
confidence on the repetitions of each loop's last planned look) against the verdicts
the sweep stopped on (manifest summary.groups[].decisions). No I/O beyond reading."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from testbed.records.run_dir import RunDir

from . import compare, load

LOOP_METRICS = {"throughput": "throughput_msgs", "p50_latency": "lat_p50_us", "p99_latency": "lat_p99_us"}
WHERE = ("pattern", "transport", "msg_size", "io_threads", "placement", "process_model", "link")


@dataclass
class Agreement:
    checked: int = 0
    agree: int = 0
    missing: list[str] = field(default_factory=list)        # a loop verdict the report lacks
    disagreements: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.checked > 0 and not self.missing and not self.disagreements


def _label(v) -> str:
    return str(v) if v not in (None, "") else "-"


def _find(cmp: pd.DataFrame, group: dict, d: dict) -> pd.DataFrame:
    sel = cmp["metric"] == LOOP_METRICS[d["metric"]]
    for k in WHERE:
        if k in group and group[k] is not None:
            sel &= cmp[k].astype(str) == (_label(group[k]) if k in ("placement", "process_model", "link")
                                          else str(group[k]))
    if d.get("kind", "library") == "config":
        sel &= cmp["kind"] == "config"
        sel &= (cmp["library"] == d["library"]) & (cmp["config"] == d["candidate"])
    else:
        sel &= cmp["kind"].isin(["library", "aa"]) & (cmp["library"] == d["candidate"])
        sel &= cmp["config"] == (d.get("config") or group.get("config") or "")
    return cmp[sel]


def rejudge(run_dir: Path) -> tuple[Agreement, pd.DataFrame]:
    run = RunDir.open(run_dir)
    manifest = run.manifest_json()
    cmp = compare.compare_run(load.load_run(run), run.manifest)
    out = Agreement()
    for group in (manifest.get("summary") or {}).get("groups") or []:
        for d in group.get("decisions") or []:
            if d.get("metric") not in LOOP_METRICS:
                continue
            out.checked += 1
            rows = _find(cmp, group, d)
            name = (f"{group.get('pattern')} {group.get('transport')} {group.get('msg_size')}B "
                    f"{d.get('config') or group.get('config')} {d['candidate']} vs {d['reference']} "
                    f"{d['metric']}")
            if len(rows) != 1:
                out.missing.append(f"{name}: {len(rows)} matching comparisons in the re-judgement")
            elif rows.iloc[0]["verdict"] != d["verdict"]:
                out.disagreements.append(f"{name}: sweep {d['verdict']}, re-judged {rows.iloc[0]['verdict']}")
            else:
                out.agree += 1
    return out, cmp
