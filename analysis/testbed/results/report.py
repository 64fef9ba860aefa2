"""Markdown report of a run or of an imported published report: the run in brief, how
to read it, the summary (report_summary: per candidate, configurations, A/A
calibration), cells that broke the host ceiling, the inflection analysis, failed cells,
and per pattern the seeds' layout (| Size | Metric | libzmq | zlink | Diff (%) |)
extended with interval, verdict, MDE, n, ceiling share and work per message
(report_detail), with the figures.

Deterministic: no rendering timestamps, everything sorted, fixed number formats,
byte-stable figures (plots.save). Same input, same bytes.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from testbed import paths
from testbed.records import answer_spec, counted, schema
from testbed.records.manifest import DEFAULT_CONFIDENCE, DEFAULT_MARGIN, is_reference_name
from testbed.records.run_dir import RunDir
from testbed.stats import decide, signed_rank

from . import (
    answer,
    compare,
    drift_whatif,
    fmt,
    host_speed,
    inflection,
    latency_shapes,
    load,
    plots,
    report_ceiling,
    report_counting,
    report_detail,
    report_summary,
    report_work,
    run_settings,
    run_table,
)
from . import ceiling as ceil

REPORT_NAME = "report.md"


@dataclass(frozen=True)
class RunSummary:
    """What the index and the READMEs say of a run: all of it from its report."""
    experiment: str
    run_id: str
    profile: str
    question: str
    answer: answer.Answer
    settings: dict

FIGURES = "figures"
AA_FLOOR = 0.27  # the largest A/A difference the old harness family showed (FACTS.md)


# --- entry points ----------------------------------------------------------------------

def render_run(run_dir: Path, out_dir: Path | None = None, calibration_run: Path | None = None,
               draw: bool = True, experiments_dir: Path | None = None) -> Path:
    """Render <out_dir>/report.md (default: inside the run directory) and its figures
    (draw=False: the same report.md, its figures named but not drawn). An A/A run
    (`calibration_run`, or the manifest's `noise_floor_run`, relative to the run
    directory) adds its false-call rate to the report's calibration block. The answer
    that opens the report is the one its experiment declares in `experiments_dir`."""
    return render_run_answer(run_dir, out_dir, calibration_run, draw, experiments_dir)[0]


def render_run_answer(run_dir: Path, out_dir: Path | None = None, calibration_run: Path | None = None,
                      draw: bool = True, experiments_dir: Path | None = None) -> tuple[Path, RunSummary]:
    """render_run, and the run's answer and settings as the report states them (what
    the index and the READMEs copy: results/answer_blocks.py)."""
    run = RunDir.open(run_dir)
    df, cmp, ctx = run_inputs(run, calibration_run, experiments_dir)
    path = _render(df, cmp, ctx, Path(out_dir) if out_dir else run.path, REPORT_NAME, FIGURES, draw)
    m = ctx["manifest"]
    # The run is named by its folder (a published run's id), as the index names it.
    return path, RunSummary(m.experiment_name, run.name, m.profile, m.question_text, ctx["answer"],
                            ctx["settings"])


def run_inputs(run_dir: Path | RunDir, calibration_run: Path | None = None,
               experiments_dir: Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(tidy table, comparisons, context) of a run: what its report is rendered from,
    and what the notebooks (results/explore.py) show. The run directory is opened here,
    once; the modules below get what it holds, not where it is."""
    run = RunDir.open(run_dir)
    manifest = run.manifest
    df = load.load_run(run)
    cmp = compare.compare_run(df, manifest)
    referenced, ref_name = _calibration_run(run, calibration_run or manifest.calibration_run)
    ctx = {
        "title": f"{manifest.experiment_name} · run {manifest.run_id}", "question": manifest.question_text,
        "brief": run_table.brief(manifest), "notes": [], "skipped": [], "margin": manifest.margin,
        "config_margin": manifest.config_margin,
        "confidence": manifest.confidence, "looks": manifest.looks,
        "overall_confidence": manifest.overall_confidence,
        "calibration": referenced, "calibration_name": ref_name, "ceiling": ceil.table(run.host_ceiling()),
        "ceiling_run": ceil.shares(run.ceiling_probes(), df),
        "failed": load.failed_attempts(df), "published": False,
        "host_speed": run.speed_pairs(), "speed_present": manifest.speed_reference_present,
        "speed_tolerance": manifest.speed_tolerance,
        "manifest": manifest,
        "answer_spec": answer_spec.for_run(manifest.experiment_name, run.path,
                                           experiments_dir or paths.EXPERIMENTS_DIR),
        "settings": run_settings.of_records(run.raw_records()[0], manifest),
        "counting": report_counting.context(manifest.design or {}, run.counting_cells()),
        # both sides of every SLOW latency call, pooled (only those cells are read)
        "latency_shapes": latency_shapes.merged(
            latency_shapes.pooled(run, df, latency_shapes.wanted_keys(cmp))),
    }
    ctx["brief"] += [("settings, from the records", run_settings.line(ctx["settings"]))]
    return df, cmp, ctx


def _calibration_run(run: RunDir, given) -> tuple[pd.DataFrame | None, str | None]:
    if not given:
        return None, None
    ref = run.relative(given)
    return compare.compare_run(load.load_run(ref), ref.manifest), ref.name


def render_published(data_csv: Path, out_dir: Path, name: str, notes: list[str], skipped: list[str]) -> Path:
    """Render <out_dir>/<name>.md from an imported seed's stored tidy CSV."""
    df = load.read_csv(data_csv)
    primary = _primary_tables(df)
    main = df[df["table"].isin(primary)]
    cmp = compare.compare(main)
    notes = list(notes)
    ref_cfg = cmp[(cmp["kind"] == "config") & cmp["library"].map(is_reference_name)]
    if not ref_cfg.empty and (ref_cfg["diff_pct"].abs() < 1e-9).all():
        notes.append("libzmq's figures are identical in every configuration section: it was measured once "
                     "and reused, so each configuration's 'Diff' compares zlink now against libzmq then.")
    ctx = {"title": f"Published report {name}, re-analysed", "question": "", "published": True,
           "brief": [("source", f"`{name}.txt` (seed report), imported as `{Path(data_csv).name}`"),
                     ("tables used", ", ".join(primary)),
                     ("runs behind each figure", _runs_text(main))],
           "notes": notes, "skipped": skipped, "margin": DEFAULT_MARGIN, "confidence": DEFAULT_CONFIDENCE,
           "ceiling": None,
           "failed": pd.DataFrame(), "claims": _claims(df, cmp), "sensitivity": _sensitivity(cmp)}
    return _render(main, cmp, ctx, Path(out_dir), f"{name}.md", f"figures/{name}")


# --- context helpers -------------------------------------------------------------------

def _primary_tables(df):
    tables = set(df["table"])
    picked = [t for t in ("diff-table", "mean-std", "results-block") if t in tables]
    return picked or sorted(tables)


def _runs_text(df):
    ns = sorted(set(int(n) for n in df["n_summarized"].dropna()))
    return ", ".join(str(n) for n in ns)


def _claims(df, cmp_main) -> list[list[str]] | None:
    """Seed 000 states its own 'Improvement' per cell; set it beside what its raw
    blocks give and beside our verdict."""
    ana = df[df["table"] == "analysis"]
    if ana.empty:
        return None
    claimed = compare.compare(ana)
    claimed = claimed[(claimed["kind"] == "library") & (claimed["metric"] == "throughput_msgs")]
    rows = []
    keys = ["pattern", "transport", "msg_size", "library"]
    ours = cmp_main[(cmp_main["kind"] == "library")
                    & (cmp_main["metric"] == "throughput_msgs")].set_index(keys)
    for r in claimed.sort_values(keys).to_dict("records"):
        k = tuple(r[x] for x in keys)
        o = ours.loc[k] if k in ours.index else None
        rows.append([r["pattern"], r["transport"], schema.kib(r["msg_size"]), fmt.pct(r["diff_pct"], 1),
                     fmt.pct(o["diff_pct"], 1) if o is not None else "-",
                     o["verdict"] if o is not None else "-"])
    return rows


def _sensitivity(cmp) -> str:
    """How many calls would survive the A/A spread later measured for the old harness."""
    lib = cmp[(cmp["kind"] == "library") & (cmp["metric"] == "throughput_msgs")]
    dec = lib[lib["verdict"].isin(["FAST", "SLOW"])]
    big = int((dec["diff_pct"].abs() > 100 * AA_FLOOR).sum())
    return (f"The harness family behind these figures later showed A/A differences of -18% to +27% at 3 runs "
            f"(libzmq against itself; /work/shared/FACTS.md). Of the {len(dec)} throughput comparisons of "
            f"zlink (or its predecessor) with libzmq called FAST or SLOW here, {big} differ by more than "
            f"{100 * AA_FLOOR:.0f}% (of {len(lib)} comparisons in all).")


# --- rendering -------------------------------------------------------------------------

def _render(df, cmp, ctx, out_dir: Path, name: str, fig_rel: str, draw: bool = True) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    all_cells = compare.cell_table(df)
    cells = all_cells[all_cells["metric"].isin(schema.COMPARED_METRICS)]
    ctx["work_cells"] = all_cells[all_cells["metric"].isin(schema.WORK_METRICS)]
    infl = inflection.inflections(cmp)
    best = inflection.best_config(cmp)
    figs = plots.render_all(cells, cmp, infl, out_dir / fig_rel, draw=draw) if not cells.empty else {}
    parts = [f"# {ctx['title']}", ""]
    if ctx.get("question"):
        parts += [f"> {ctx['question']}", ""]
    if not ctx["published"]:
        ctx["answer"] = answer.compute(ctx["answer_spec"], cmp, cells, ctx["manifest"])
        parts += ctx["answer"].markdown(settings=run_settings.line(ctx["settings"]))
    parts += ["## " + ("Source" if ctx["published"] else "Run"), "",
              fmt.md_table(["", ""], [[k, v] for k, v in ctx["brief"]]), ""]
    parts += [f"- {n}" for n in ctx["notes"]] + ([""] if ctx["notes"] else [])
    parts += _how_to_read(ctx)
    parts += summary_lines(cmp, ctx, cells)
    if not ctx["published"]:
        parts += host_speed.section(ctx["host_speed"], ctx["speed_present"], ctx["speed_tolerance"], df,
                                    out_dir, fig_rel, draw)
        if _answers(ctx):
            parts += drift_whatif.section(df, cmp, ctx.get("manifest"), ctx["host_speed"])
    parts += report_detail.broken_ceiling(ctx, cmp)
    parts += report_ceiling.section(ctx.get("ceiling_run"), cmp)
    parts += _inflection_section(infl, best) if _answers(ctx) else _inflection_section_v1(infl, best)
    if "latency_shapes" in ctx:  # a run's report (an imported table has no histograms)
        parts += latency_shapes.section(cmp, ctx["latency_shapes"], out_dir, fig_rel, draw)
    if ctx.get("claims"):
        parts += ["## The report's own claims against its raw figures", "",
                  fmt.md_table(["Pattern", "Transport", "Size", "Claimed", "From raw blocks", "Verdict"],
                               ctx["claims"]), ""]
    if ctx.get("sensitivity"):
        parts += ["## Sensitivity to the A/A spread", "", ctx["sensitivity"], ""]
    parts += _failed(ctx["failed"])
    if ctx["skipped"]:
        parts += ["## Tables not imported", ""] + [f"- {s}" for s in ctx["skipped"]] + [""]
    parts += report_detail.detail(cmp, all_cells, figs, out_dir, ctx)
    text = "\n".join(parts).rstrip() + "\n"
    path = out_dir / name
    path.write_text(text)
    return path


def summary_lines(cmp: pd.DataFrame, ctx: dict, cells: pd.DataFrame) -> list[str]:
    """The report's summary section (cells: compare.cell_table of the compared metrics)."""
    return report_summary.summary(cmp, ctx.get("calibration"), ctx.get("calibration_name"), ctx["published"],
                                  cells, ctx.get("overall_confidence", DEFAULT_CONFIDENCE),
                                  answers=_answers(ctx), counting=_with_reference(ctx.get("counting"), ctx),
                                  work=report_work.lines(ctx.get("work_cells"), _reference_config(ctx)))


def _reference_config(ctx: dict) -> str | None:
    """The configuration the experiment's [answer] judges the others against, if any
    (where no configuration is the no-override one: security-cost's NULL)."""
    spec = ctx.get("answer_spec")
    return next((c.reference for c in getattr(spec, "comparisons", ()) if c.kind == "configurations"
                 and c.reference), None)


def _with_reference(counting: dict | None, ctx: dict) -> dict | None:
    return None if counting is None else {**counting, "reference": _reference_config(ctx)}


def _answers(ctx: dict) -> bool:
    """Does this report show issue 41's answers beside the verdicts (equivalence bounds,
    counted work, a decided answer per inflection row, the drift filter's what-if)?
    Runs of the sweep that records its layout (2026-12-02 on) do; earlier runs' reports
    stay as they were rendered (their bytes are committed)."""
    m = ctx.get("manifest")
    return m is not None and "layout" in (m.design or {})


def _config_margin_text(ctx) -> str:
    """The configuration pairs' own SAME margin, where the run declared one."""
    cm = ctx.get("config_margin")
    return f" (+/-{100 * cm:g}% for configuration pairs: the run's declared `config_margin`)" \
        if cm is not None else ""


def _how_to_read(ctx):
    margin, conf = 100 * ctx["margin"], ctx["confidence"]
    need, pairs = decide.min_samples(conf), decide.min_samples(conf, paired=True)
    lines = ["## How to read", "",
             "Diff is oriented so that **positive means the candidate is better**: for throughput "
             "(candidate / reference - 1), for latency (reference / candidate - 1), marked `(inv)`.",
             "",
             f"Verdicts (analysis/README.md, Verdicts): **SAME** when the {100 * conf:.4g}% interval of the "
             f"ratio lies inside +/-{margin:g}%{_config_margin_text(ctx)}; otherwise **FAST**/**SLOW** when "
             "the whole interval is on the better/worse side of no change; otherwise **AMBIGUOUS**: the data "
             "cannot tell. The ratio is the Hodges-Lehmann estimate on log values and the interval the exact "
             "Mann-Whitney interval; **MDE** is the change this cell would detect with 80% power at its n "
             f"and spread. Fewer than {need} repetitions a side cannot reach {100 * conf:.4g}%: such cells "
             f"are AMBIGUOUS (`n<{need}`).",
             "",
             f"**Paired** where a run's two cells share at least {pairs} repetition indices: repetition i of "
             "the candidate ran back to back with repetition i of the reference, so the verdict comes from "
             "the per-pair log ratios (Hodges-Lehmann on their Walsh averages, exact Wilcoxon signed-rank "
             "interval and p), which cancels drift common to both. With fewer pairs the unpaired test "
             "above decides. The `Test` column says which one judged each comparison.",
             ""]
    if conf != DEFAULT_CONFIDENCE:
        lines += [f"The interval is {100 * conf:.4g}%, not 95%: the sweep looked at each configuration more "
                  f"than once while repeating it, and judged every look at this stricter confidence so that "
                  f"all looks together keep the run's own.", ""]
    lines += _looks_lines(ctx.get("looks"), conf)
    if ctx["published"]:
        lines += ["Published figures are single numbers (medians or means of runs that were not kept): "
                  "they get **no interval**, can never be SAME, and are FAST/SLOW only beyond "
                  f"{100 * compare.POINT_THRESHOLD:.0f}%, marked `point`. Mean +/- std tables give a Welch "
                  f"interval, marked `summary`, judged like the rest.", ""]
    return lines


def _looks_lines(looks, conf: float) -> list[str]:
    """The exact per-look level and, per planned look, the paired test's critical rank:
    what a re-judgement needs (`./testbed rejudge RUN_DIR` does it)."""
    if looks is None:
        return []
    sizes = sorted({*range(looks.start, looks.cap, looks.every), looks.cap})
    ranks = ", ".join(f"{n} pairs: k = {signed_rank.critical_rank(n, conf)}" for n in sizes)
    return [f"Per-look confidence, exact: `{conf!r}` (looks at {', '.join(map(str, sizes))} usable pairs). "
            f"The paired interval runs from the k-th smallest to the k-th largest Walsh average of the "
            f"per-pair log ratios: {ranks}. A comparison is judged on the repetitions of the loop's last "
            f"look; one the loop never looked at is `not planned`.", ""]


def _inflection_section(infl, best):
    if infl.empty:
        return []
    syscalls = (infl["metric"] == inflection.SYSCALLS).any()
    work = ("counted work: system calls per message (counting runs; the cause batching changes), with "
            "context switches per message beside them" if syscalls
            else "counted work (context switches per message, arms runs)")
    lines = ["## Where the gain changes sign", "",
             "One row per series (a configuration against the default, or a library against the reference, "
             f"along message size) and judge: the wall clock (throughput) and {work}. **Answer**: a "
             "crossover where decisive cells of opposite sign bracket one; "
             "`none` (decided) where every size is decided (FAST, SLOW or SAME) without a sign change; "
             "`undecided` otherwise.", ""]
    rows = []
    for r in infl.to_dict("records"):
        rows.append([r["kind"], r["pattern"], r["transport"], r["config"], r["library"], r["reference"],
                     _judge(r["metric"], syscalls), r["status"],
                     schema.kib(r["flip_from"]) if r["status"] == "flip" else "-",
                     schema.kib(r["flip_to"]) if r["status"] == "flip" else "-",
                     f"{r['n_decisive']}/{r['n_sizes']}", r["answer"]])
    header = ["Kind", "Pattern", "Transport", "Config", "Library", "Reference", "Judge", "Status",
              "Last of old sign", "First of new sign", "Decisive", "Answer"]
    lines += [fmt.md_table(header, rows), ""]
    lines += _either_judge(infl)
    lines += [f"- {s}" for s in infl["sentence"]] + [""]
    if not best.empty:
        lines += ["What a size-adaptive policy should pick (throughput; an override only where it is "
                  "decisively faster than no override):", ""]
        lines += [f"- {s}" for s in inflection.policy_sentence(best)] + [""]
    return lines


def _inflection_section_v1(infl, best):
    """The section as reports before 2026-12-02 rendered it (throughput rows only)."""
    infl = infl[infl["metric"] == "throughput_msgs"]
    if infl.empty:
        return []
    lines = ["## Where the gain changes sign", ""]
    rows = []
    for r in infl.to_dict("records"):
        rows.append([r["kind"], r["pattern"], r["transport"], r["config"], r["library"], r["reference"],
                     r["status"],
                     schema.kib(r["flip_from"]) if r["status"] == "flip" else "-",
                     schema.kib(r["flip_to"]) if r["status"] == "flip" else "-",
                     schema.kib(r["crossover"]) if r["status"] == "flip" else "-",
                     f"{r['n_decisive']}/{r['n_sizes']}"])
    lines += [fmt.md_table(["Kind", "Pattern", "Transport", "Config", "Library", "Reference", "Status",
                            "Last of old sign", "First of new sign", "Crossover ~", "Decisive"], rows), ""]
    lines += [f"- {s}" for s in infl["sentence"]] + [""]
    if not best.empty:
        lines += ["What a size-adaptive policy should pick (throughput; an override only where it is "
                  "decisively faster than no override):", ""]
        lines += [f"- {s}" for s in inflection.policy_sentence(best)] + [""]
    return lines


def _judge(metric: str, syscalls: bool) -> str:
    """A row's judge: where system calls judge, context switches stand beside them."""
    if syscalls and metric == counted.HEADLINE:
        return inflection.SWITCHES_BESIDE
    return inflection.JUDGES.get(metric, metric)


def _either_judge(infl) -> list[str]:
    """Per series, the answer of each judge and whether either decided (the wall clock or
    counted work: system calls where counted, else context switches; beside them, the
    context switches decide nothing)."""
    keys = ["kind", "pattern", "transport", "io_threads", "config", "library", "reference"]
    if infl["metric"].nunique() < 2:
        decided = int(infl["decided"].sum())
        return [f"Decided: {decided} of {len(infl)} rows.", ""]
    syscalls = (infl["metric"] == inflection.SYSCALLS).any()
    work = inflection.SYSCALLS if syscalls else counted.HEADLINE
    rows, decided = [], 0
    for key, g in infl.groupby(keys, sort=True):
        by = dict(zip(g["metric"], g["answer"], strict=True))
        either = bool(g[g["metric"].isin(["throughput_msgs", work])]["decided"].any())
        decided += either
        beside = [by.get(counted.HEADLINE, "-")] if syscalls else []
        rows.append([key[0], key[1], key[2], key[4], key[5], by.get("throughput_msgs", "-"),
                     by.get(work, "-"), *beside, "yes" if either else "no"])
    header = ["Kind", "Pattern", "Transport", "Config", "Library", "Wall clock",
              "Counted work (system calls)" if syscalls else "Counted work",
              *(["Context switches"] if syscalls else []), "Either decides"]
    return [f"Decided by either judge: {decided} of {len(rows)} series.", "", fmt.md_table(header, rows), ""]


def _failed(failed):
    if failed is None or failed.empty:
        return []
    rows = [[r["pattern"], r["transport"], schema.kib(r["msg_size"]), r["config"], r["library"],
             (f"counting run {r['repetition']}" if r.get("table") == counted.COUNTING_TABLE
              else str(r["repetition"])), r["status"]]
            for r in failed.sort_values(list(failed.columns)).to_dict("records")]
    return ["## Failed cells", "", fmt.md_table(["Pattern", "Transport", "Size", "Config", "Library",
                                                 "Repetition", "Status"], rows), ""]
