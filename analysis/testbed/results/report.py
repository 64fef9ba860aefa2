"""Markdown report of a run or of an imported published report, in the seeds' layout
(per pattern, per transport: | Size | Metric | libzmq | zlink | Diff (%) |) extended with
the interval, the verdict and the share of the host ceiling, plus a summary, the
inflection analysis, failed cells, the run's manifest in brief and the figures.

Deterministic: no rendering timestamps, everything sorted, fixed number formats,
byte-stable figures (plots.save). Same input, same bytes.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from . import compare, fmt, inflection, load, plots, schema

REPORT_NAME = "report.md"
FIGURES = "figures"
ORDER = {"PAIR": 0, "PUBSUB": 1, "DEALER_DEALER": 2, "DEALER_ROUTER": 3, "ROUTER_ROUTER": 4,
         "ROUTER_ROUTER_POLL": 5, "STREAM": 6}
T_ORDER = {"tcp": 0, "ipc": 1, "inproc": 2}


# --- entry points ----------------------------------------------------------------------

def render_run(run_dir: Path, out_dir: Path | None = None, noise_floor_run: Path | None = None) -> Path:
    """Render <out_dir>/report.md (default: inside the run directory) and its figures.
    The noise floor comes from A/A pairs in the run and from `noise_floor_run` (or the
    manifest's "noise_floor_run", relative to the run directory), whichever is larger."""
    run_dir = Path(run_dir)
    out_dir = Path(out_dir) if out_dir else run_dir
    manifest = load.read_manifest(run_dir)
    df = load.load_run(run_dir)
    extra, floor_src = {}, []
    nf = noise_floor_run or manifest.get("noise_floor_run")
    if nf:
        nf_dir = (run_dir / nf) if not Path(nf).is_absolute() else Path(nf)
        nf_cmp, _ = compare.compare_run(load.load_run(nf_dir), load.read_manifest(nf_dir))
        extra = compare.noise_floor(nf_cmp)
        floor_src.append(f"noise-floor run `{Path(nf).name}`")
    cmp, floor = compare.compare_run(df, manifest, extra)
    if compare.aa_aliases(manifest):
        floor_src.append("A/A pairs of this run (" + ", ".join(sorted(compare.aa_aliases(manifest))) + ")")
    ctx = {
        "title": f"{_experiment_name(manifest, run_dir)} · run {manifest.get('run_id') or run_dir.name}",
        "question": _question(manifest),
        "brief": _manifest_brief(manifest), "notes": [], "skipped": [],
        "floor": floor, "floor_src": floor_src, "ceiling": _ceiling(run_dir),
        "failed": load.failed_attempts(df), "published": False,
    }
    return _render(df, cmp, ctx, out_dir, REPORT_NAME, FIGURES)


def render_published(data_csv: Path, out_dir: Path, name: str, notes: list[str], skipped: list[str]) -> Path:
    """Render <out_dir>/<name>.md from an imported seed's stored tidy CSV."""
    df = load.read_csv(data_csv)
    primary = _primary_tables(df)
    main = df[df["table"].isin(primary)]
    cmp = compare.compare(main)
    notes = list(notes)
    ref_cfg = cmp[(cmp["kind"] == "config") & cmp["library"].map(compare.is_reference_name)]
    if not ref_cfg.empty and (ref_cfg["diff_pct"].abs() < 1e-9).all():
        notes.append("libzmq's figures are identical in every configuration section: it was measured once and "
                     "reused, so each configuration's 'Diff' compares zlink now against libzmq then.")
    ctx = {"title": f"Published report {name}, re-analysed", "question": "", "published": True,
           "brief": [("source", f"`{name}.txt` (seed report), imported as `{Path(data_csv).name}`"),
                     ("tables used", ", ".join(primary)),
                     ("runs behind each figure", _runs_text(main))],
           "notes": notes, "skipped": skipped, "floor": {}, "floor_src": [], "ceiling": None,
           "failed": pd.DataFrame(), "claims": _claims(df, cmp), "sensitivity": _sensitivity(main)}
    return _render(main, cmp, ctx, Path(out_dir), f"{name}.md", f"figures/{name}")


# --- context helpers -------------------------------------------------------------------

def _experiment_name(manifest, run_dir):
    e = manifest.get("experiment")
    return e.get("name") if isinstance(e, dict) else (e or run_dir.parent.name)


def _question(manifest):
    e = manifest.get("experiment")
    return manifest.get("question") or (e.get("question", "") if isinstance(e, dict) else "")


def _manifest_brief(m: dict) -> list[tuple[str, str]]:
    host = m.get("host") or {}
    out = [("status", str(m.get("status", "?"))),
           ("host", ", ".join(str(x) for x in [host.get("cpu_model"), f"{host.get('cores') or host.get('cpus') or '?'} cores",
                                                f"kernel {host.get('kernel', '?')}",
                                                f"governor {host.get('governor', '?')}", f"turbo {host.get('turbo', '?')}"]
                                  if x)),
           ("load before / after", f"{host.get('load_before', '?')} / {host.get('load_after', '?')}")]
    for lib in sorted(m.get("libraries") or [], key=lambda l: str(l.get("label") or l.get("name"))):
        info = lib.get("info") or {}
        label = lib.get("label") or lib.get("name")
        out.append((f"library `{label}`", f"{lib.get('name', label)} {info.get('version', '')} build "
                    f"`{lib.get('build_id') or info.get('build_id', '?')}` ({lib.get('role', '?')})"))
    git = m.get("git") or {}
    commit = str(git.get("commit", "?"))[:12] + (" (dirty tree)" if git.get("dirty") else "")
    out.append(("commit", f"`{commit}`"))
    out.append(("profile / repetitions / shuffle seed",
                f"{m.get('profile', '?')} / {m.get('repetitions', '?')} / {m.get('shuffle_seed', '?')}"))
    pin = m.get("pinning")
    out.append(("pinning", json.dumps(pin, sort_keys=True) if isinstance(pin, (dict, list)) else str(pin or "none")))
    return out


def _ceiling(run_dir: Path) -> dict | None:
    """(transport, msg_size) -> {bytes_per_sec, p50}; ceiling.json is optional."""
    path = run_dir / "ceiling.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if data.get("schema") != "testbed.ceiling/1":
        return None
    out = {}
    for r in data.get("rows", []):
        thr = r.get("throughput") or {}
        lat = r.get("latency") or {}
        out[(r["transport"], int(r["msg_size"]))] = {"bytes_per_sec": thr.get("bytes_per_sec"), "p50": lat.get("p50")}
    return out


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
    ours = cmp_main[(cmp_main["kind"] == "library") & (cmp_main["metric"] == "throughput_msgs")].set_index(keys)
    for r in claimed.sort_values(keys).to_dict("records"):
        k = tuple(r[x] for x in keys)
        o = ours.loc[k] if k in ours.index else None
        rows.append([r["pattern"], r["transport"], schema.kib(r["msg_size"]), fmt.pct(r["diff_pct"], 1),
                     fmt.pct(o["diff_pct"], 1) if o is not None else "-", o["verdict"] if o is not None else "-"])
    return rows


def _sensitivity(df) -> str:
    """How many calls survive the A/A floor later measured for the old harness."""
    strict = compare.compare(df, noise_floor=_flat_floor(df, 0.27))
    lib = strict[(strict["kind"] == "library") & (strict["metric"] == "throughput_msgs")]
    n = len(lib)
    dec = int(lib["verdict"].isin(["FAST", "SLOW"]).sum())
    return (f"The harness family behind these figures later showed an A/A noise floor of -18% to +27% at 3 runs "
            f"(libzmq against itself; /work/shared/FACTS.md). Judged against a 27% floor, {dec} of {n} "
            f"throughput comparisons of zlink (or its predecessor) with libzmq would still be decisive.")


def _flat_floor(df, v):
    return {(t, m): v for t in df["transport"].unique() for m in df["metric"].unique()}


# --- rendering -------------------------------------------------------------------------

def _sort_patterns(ps):
    return sorted(ps, key=lambda p: (ORDER.get(p, 99), p))


def _render(df, cmp, ctx, out_dir: Path, name: str, fig_rel: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    cells = compare.cell_table(df)
    cells = cells[cells["metric"].isin(schema.COMPARED_METRICS)]
    infl = inflection.inflections(cmp)
    best = inflection.best_config(cmp)
    figs = plots.render_all(cells, cmp, infl, out_dir / fig_rel) if not cells.empty else {}
    parts = [f"# {ctx['title']}", ""]
    if ctx.get("question"):
        parts += [f"> {ctx['question']}", ""]
    parts += ["## " + ("Source" if ctx["published"] else "Run"), "",
              fmt.md_table(["", ""], [[k, v] for k, v in ctx["brief"]]), ""]
    for n in ctx["notes"]:
        parts.append(f"- {n}")
    if ctx["notes"]:
        parts.append("")
    parts += _how_to_read(ctx, cmp)
    parts += _summary(cmp)
    parts += _inflection_section(infl, best)
    if ctx.get("claims"):
        parts += ["## The report's own claims against its raw figures", "",
                  fmt.md_table(["Pattern", "Transport", "Size", "Claimed", "From raw blocks", "Verdict"], ctx["claims"]), ""]
    if ctx.get("sensitivity"):
        parts += ["## Sensitivity to the noise floor", "", ctx["sensitivity"], ""]
    parts += _failed(ctx["failed"])
    if ctx["skipped"]:
        parts += ["## Tables not imported", ""] + [f"- {s}" for s in ctx["skipped"]] + [""]
    parts += _detail(cmp, figs, out_dir, ctx)
    text = "\n".join(parts).rstrip() + "\n"
    path = out_dir / name
    path.write_text(text)
    return path


def _how_to_read(ctx, cmp):
    floor = ctx["floor"]
    lines = ["## How to read", "",
             "Diff is oriented so that **positive means the candidate is better**: for throughput "
             "(candidate / reference - 1), for latency (reference / candidate - 1), marked `(inv)`. "
             "The 95% interval is a seeded bootstrap of the ratio of medians; the p-value is Mann-Whitney U.",
             "",
             "Verdicts: **FAST**/**SLOW** when the interval excludes zero, Mann-Whitney agrees (p < 0.05) and "
             "the diff exceeds the threshold; **SAME** when the diff is within the threshold and the interval "
             "within twice it; **AMBIGUOUS** otherwise: the data cannot tell.",
             ""]
    if ctx["published"]:
        lines += [f"Published figures are single numbers (medians or means of runs that were not kept): they get "
                  f"**no interval** and a verdict only on the size of the diff (threshold "
                  f"{100 * compare.POINT_THRESHOLD:.0f}%), marked `point`. Mean +/- std tables give a Welch interval, "
                  f"marked `summary`.", ""]
    else:
        src = " and ".join(ctx["floor_src"]) or "none (no A/A pair in this run or referenced)"
        lines += [f"Threshold: the larger of {100 * compare.DEFAULT_MIN_EFFECT:.0f}% and the noise floor. "
                  f"Noise floor source: {src}."]
        if floor:
            lines += ["", fmt.md_table(["Transport", "Metric", "Noise floor (largest A/A diff)"],
                                       [[t, m, f"{100 * v:.1f}%"] for (t, m), v in sorted(floor.items())])]
        aa = cmp[cmp["kind"] == "aa"]
        if not aa.empty:
            plain = compare.apply_verdicts(aa, None)
            false = int(plain["verdict"].isin(["FAST", "SLOW"]).sum())
            lines += ["", f"Without the noise floor (threshold {100 * compare.DEFAULT_MIN_EFFECT:.0f}% only), "
                          f"{false} of {len(aa)} A/A comparisons would have been called FAST or SLOW: "
                          f"differences between two identical builds."]
        lines.append("")
    return lines


def _summary(cmp):
    lib = cmp[cmp["kind"] == "library"]
    title = "## Summary"
    if lib.empty:  # a noise-floor run: summarise its A/A pairs instead
        lib, title = cmp[cmp["kind"] == "aa"], "## Summary (A/A pairs: every call here is noise)"
    if lib.empty:
        return []
    lines = [title, ""]
    rows = []
    for (p, t, m), g in sorted(lib.groupby(["pattern", "transport", "metric"]),
                               key=lambda kv: (ORDER.get(kv[0][0], 99), kv[0][0], T_ORDER.get(kv[0][1], 9),
                                               schema.COMPARED_METRICS.index(kv[0][2]))):
        c = g["verdict"].value_counts()
        rows.append([p, t, schema.metric(m).label] + [str(int(c.get(v, 0))) for v in compare.VERDICTS] + [str(len(g))])
    lines += [fmt.md_table(["Pattern", "Transport", "Metric"] + compare.VERDICTS + ["Cells"], rows), ""]
    tot = lib["verdict"].value_counts()
    lines += [f"Overall: {int(tot.get('FAST', 0))} FAST, {int(tot.get('SLOW', 0))} SLOW, {int(tot.get('SAME', 0))} SAME, "
              f"{int(tot.get('AMBIGUOUS', 0))} AMBIGUOUS of {len(lib)} comparisons.", ""]
    dec = lib[lib["verdict"].isin(["FAST", "SLOW"])]
    for title, sub in (("Biggest decisive wins", dec[dec["diff_pct"] > 0].sort_values(
            ["diff_pct", "pattern", "transport", "msg_size"], ascending=[False, True, True, True])),
                       ("Biggest decisive losses", dec[dec["diff_pct"] < 0].sort_values(
                           ["diff_pct", "pattern", "transport", "msg_size"]))):
        lines += [f"{title}:", ""]
        if sub.empty:
            lines += ["- none", ""]
            continue
        for r in sub.head(5).to_dict("records"):
            cfg = "" if r["config"] in ("", "default") else f" [{r['config']}]"
            lines.append(f"- {r['library']} {r['pattern']} {r['transport']} {schema.kib(r['msg_size'])}{cfg}, "
                         f"{schema.metric(r['metric']).label.lower()}: {fmt.pct(r['diff_pct'], 1)} "
                         f"{fmt.interval(r['ci_lo_pct'], r['ci_hi_pct'])}")
        lines.append("")
    return lines


def _inflection_section(infl, best):
    if infl.empty:
        return []
    lines = ["## Where the gain changes sign", ""]
    rows = []
    for r in infl.to_dict("records"):
        rows.append([r["kind"], r["pattern"], r["transport"], r["config"], r["library"], r["reference"], r["status"],
                     schema.kib(r["flip_from"]) if r["status"] == "flip" else "-",
                     schema.kib(r["flip_to"]) if r["status"] == "flip" else "-",
                     schema.kib(r["crossover"]) if r["status"] == "flip" else "-", f"{r['n_decisive']}/{r['n_sizes']}"])
    lines += [fmt.md_table(["Kind", "Pattern", "Transport", "Config", "Library", "Reference", "Status",
                            "Last of old sign", "First of new sign", "Crossover ~", "Decisive"], rows), ""]
    lines += [f"- {s}" for s in infl["sentence"]] + [""]
    if not best.empty:
        lines += ["What a size-adaptive policy should pick (throughput; an override only where it is "
                  "decisively faster than no override):", ""]
        lines += [f"- {s}" for s in inflection.policy_sentence(best)] + [""]
    return lines


def _failed(failed):
    if failed is None or failed.empty:
        return []
    rows = [[r["pattern"], r["transport"], schema.kib(r["msg_size"]), r["config"], r["library"], str(r["repetition"]),
             r["status"]] for r in failed.sort_values(list(failed.columns)).to_dict("records")]
    return ["## Failed cells", "", fmt.md_table(["Pattern", "Transport", "Size", "Config", "Library", "Repetition",
                                                 "Status"], rows), ""]


def _ceiling_share(ctx, r):
    ceil = ctx.get("ceiling")
    if not ceil:
        return None
    c = ceil.get((r["transport"], int(r["msg_size"])))
    if not c:
        return None
    if r["metric"] == "throughput_msgs" and c.get("bytes_per_sec"):
        f = lambda v: v * r["msg_size"] / c["bytes_per_sec"]
    elif r["metric"] == "lat_p50_us" and c.get("p50"):
        f = lambda v: c["p50"] / v
    else:
        return "-"
    return f"{fmt.share(f(r['ref_median']))} / {fmt.share(f(r['cand_median']))}"


def _detail(cmp, figs, out_dir, ctx):
    lines = []
    lib = cmp[cmp["kind"].isin(["library", "aa"])]
    for pattern in _sort_patterns(set(lib["pattern"]) | set(figs)):
        lines += [f"## PATTERN: {pattern}", ""]
        for caption, svg in figs.get(pattern, []):
            lines += [f"![{pattern} {caption}]({svg.relative_to(out_dir).as_posix()})", ""]
        p = lib[lib["pattern"] == pattern]
        groups = sorted(p.groupby(["transport", "io_threads", "config", "library", "reference"]).groups,
                        key=lambda k: (T_ORDER.get(k[0], 9), k[0], k[1], k[2], k[3]))
        for transport, io, config, library, reference in groups:
            g = p[(p["transport"] == transport) & (p["io_threads"] == io) & (p["config"] == config)
                  & (p["library"] == library)]
            extra = "" if config in ("", "default") else f" · {config}"
            extra += f" · {io} IO threads" if io else ""
            head = f"### Transport: {transport}{extra}"
            if library != "zlink":
                head += f" · {library} vs {reference}"
            with_ceiling = bool(ctx.get("ceiling"))
            header = ["Size", "Metric", reference, library, "Diff (%)", "95% CI (%)", "Verdict"]
            header += ["% of ceiling (ref / cand)"] if with_ceiling else []
            rows = []
            for r in g.sort_values(["msg_size", "metric"], key=lambda s: s.map(
                    lambda v: schema.COMPARED_METRICS.index(v) if v in schema.COMPARED_METRICS else v)).to_dict("records"):
                m = schema.metric(r["metric"])
                diff = fmt.pct(r["diff_pct"]) + ("" if m.higher_is_better else " (inv)")
                verdict = r["verdict"] + ("" if r["basis"] == "interval" else f" ({r['basis']})")
                row = [schema.kib(r["msg_size"]), m.label, fmt.value(r["ref_median"], r["metric"]),
                       fmt.value(r["cand_median"], r["metric"]), diff, fmt.interval(r["ci_lo_pct"], r["ci_hi_pct"]),
                       verdict]
                if with_ceiling:
                    row.append(_ceiling_share(ctx, r) or "-")
                rows.append(row)
            lines += [head, "", fmt.md_table(header, rows), ""]
    return lines
