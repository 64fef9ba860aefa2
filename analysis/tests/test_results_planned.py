"""Paired configurations, only planned verdicts, q-values and the error budget
(issue 32): compare() on small tidy tables with known answers."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fixtures.factory import tidy_pair
from testbed.records.manifest import LookPlan
from testbed.records.run_dir import RunDir
from testbed.results import compare, report_summary


def two_configs(effect: float, n: int = 8, seed: int = 3, **cell) -> pd.DataFrame:
    """Two configurations of one library pair whose repetition i shares a drifting host
    state (as in a block): config "16 KiB" is `effect` times the baseline."""
    rng = np.random.default_rng(seed)
    host = np.exp(rng.normal(0, 0.15, n))          # large drift common to one repetition
    frames = []
    for config, batch, scale in (("baseline", "unset", 1.0), ("16 KiB", "16384", effect)):
        ref = 1e6 * host * scale * np.exp(rng.normal(0, 0.005, n))
        cand = 1.1e6 * host * scale * np.exp(rng.normal(0, 0.005, n))
        t = tidy_pair(ref, cand, config=config, **cell)
        t["param_batch"] = batch
        frames.append(t)
    return pd.concat(frames, ignore_index=True)


def test_configurations_of_a_block_are_paired_and_decided():
    df = two_configs(1.08)
    paired = compare.compare(df, paired_configurations=True)
    unpaired = compare.compare(df)
    cfg_p, cfg_u = (c[c["kind"] == "config"] for c in (paired, unpaired))
    assert set(cfg_p["test"]) == {"paired"} and set(cfg_u["test"]) == {"unpaired"}
    # the host's 15% drift hides an 8% gain from the unpaired test; the pairs cancel it
    assert set(cfg_p["verdict"]) == {"FAST"}
    assert set(cfg_u["verdict"]) == {"AMBIGUOUS"}


def test_same_is_a_decision_for_paired_configurations():
    out = compare.compare(two_configs(1.0), paired_configurations=True)
    assert set(out[out["kind"] == "config"]["verdict"]) == {"SAME"}


def test_a_comparison_the_loop_never_looked_at_is_not_planned():
    looks = LookPlan(start=7, cap=12, every=2)
    rng = np.random.default_rng(5)
    ref, cand = 1e6 * np.exp(rng.normal(0, 0.01, 6)), 2e6 * np.exp(rng.normal(0, 0.01, 6))
    budget = compare.compare(tidy_pair(ref, cand, stop_reason="budget"), looks=looks)
    assert list(budget["verdict"]) == ["NOT PLANNED"] and list(budget["basis"]) == ["not planned"]
    # the same six pairs at the cap were looked at (the cap's look takes what is usable)
    capped = compare.compare(tidy_pair(ref, cand, stop_reason="cap"), looks=LookPlan(4, 6, 2))
    assert list(capped["verdict"]) == ["FAST"]
    # without a plan (fixed design) nothing changes
    assert list(compare.compare(tidy_pair(ref, cand, stop_reason="budget"))["verdict"]) == ["FAST"]


def test_pairs_run_after_the_last_look_never_enter_the_verdict():
    looks = LookPlan(start=7, cap=12, every=2)
    rng = np.random.default_rng(6)
    ref, cand = 1e6 * np.exp(rng.normal(0, 0.01, 10)), 2e6 * np.exp(rng.normal(0, 0.01, 10))
    out = compare.compare(tidy_pair(ref, cand, stop_reason="budget"), looks=looks)
    assert out.iloc[0]["n_ref"] == out.iloc[0]["n_cand"] == 9    # looks at 7, 9: the 10th is after


def test_last_look_rule():
    looks = LookPlan(start=7, cap=12, every=2)
    assert [looks.last_look(n, "budget") for n in (6, 7, 8, 9, 12)] == [None, 7, 7, 9, 12]
    assert looks.last_look(10, "cap") == 10 and looks.last_look(7, "decided") == 7


def test_q_values_and_error_budget():
    base = [1e6, 1.01e6, 0.99e6, 1e6, 1.02e6]
    frames = [tidy_pair(base, [v * f for v in base], size=size)
              for size, f in ((64, 1.5), (1024, 1.0), (4096, 1.01))]
    out = compare.compare(pd.concat(frames, ignore_index=True))
    assert out["q_value"].notna().all() and (out["q_value"] >= out["p_value"] - 1e-12).all()
    text = "\n".join(report_summary.error_budget(out, 0.95))
    assert "### Error budget" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| library"))
    assert "| 3 | 5% | 0.15 | 1 | 1 |" in row    # 50% faster at 64 B: the one call


def test_rejudge_finds_the_sweep_verdicts_and_flags_a_changed_one(tmp_path):
    import json

    from fixtures.factory import make_run
    from testbed.results import load, rejudge
    run_dir = make_run(tmp_path, patterns=("PAIR",), transports=("tcp",), sizes=(1024, 65536), reps=6)
    cmp = compare.compare_run(load.load_run(run_dir), RunDir.open(run_dir).manifest)
    lib = cmp[(cmp["kind"] == "library") & (cmp["metric"] == "throughput_msgs")]
    groups = [{"pattern": r["pattern"], "transport": r["transport"], "msg_size": int(r["msg_size"]),
               "io_threads": int(r["io_threads"]), "config": r["config"],
               "decisions": [{"kind": "library", "candidate": r["library"], "reference": r["reference"],
                              "metric": "throughput", "config": r["config"], "verdict": r["verdict"]}]}
              for r in lib.to_dict("records")]
    m = json.loads((run_dir / "manifest.json").read_text())
    m["summary"] = {"groups": groups}
    (run_dir / "manifest.json").write_text(json.dumps(m))
    agreement, _ = rejudge.rejudge(run_dir)
    assert agreement.ok and agreement.agree == agreement.checked == len(groups) > 0
    flipped = "SLOW" if groups[0]["decisions"][0]["verdict"] != "SLOW" else "FAST"
    groups[0]["decisions"][0]["verdict"] = flipped
    (run_dir / "manifest.json").write_text(json.dumps(m))
    agreement, _ = rejudge.rejudge(run_dir)
    assert not agreement.ok and len(agreement.disagreements) == 1


def test_block_order_balances_libraries_and_configurations():
    from testbed.sweep.plan import Cell, block_order
    cells = [Cell(f"{cfg}-{lib}", cfg, lib, lib, "bench", "PAIR", "tcp", 64, 1, {}, config=cfg, block="b")
             for cfg in ("default", "16", "32", "64") for lib in ("libzmq", "zlink")]
    for rep in range(8):
        order = [c.cell_id for c in block_order(cells, rep)]
        assert sorted(order) == sorted(c.cell_id for c in cells)
        for cfg in ("default", "16", "32", "64"):   # a configuration's libraries back to back
            i = order.index(f"{cfg}-libzmq")
            assert f"{cfg}-zlink" in order[max(0, i - 1):i + 2]
    # over repetitions 2m and 2m+1 each pair of configurations swaps who runs first, and
    # within a configuration each library goes first once
    for m in range(4):
        a, b = ([c.cell_id for c in block_order(cells, r)] for r in (2 * m, 2 * m + 1))
        for x, y in (("default-zlink", "16-zlink"), ("default-zlink", "64-zlink"),
                     ("32-libzmq", "16-libzmq")):
            assert (a.index(x) < a.index(y)) != (b.index(x) < b.index(y))
        assert (a.index("default-libzmq") < a.index("default-zlink")) != \
            (b.index("default-libzmq") < b.index("default-zlink"))
