"""The report's section on the host ceiling measured inside the run ([ceiling] in
experiment.toml; results/ceiling.py pairs each repetition with its batch's probe):
per large tcp/ipc cell, the probe's figure and each library's share of it with the
spread over the pairs, the cells where a library went above it, and the probes that
failed."""
from __future__ import annotations

import pandas as pd

from testbed.records import schema

from . import ceiling as ceil
from . import fmt

ABOVE = "ABOVE"  # a library's median share beyond 100%: the probe did not bound it


def share_text(entry: dict | None) -> str:
    """'62% (55-70%)': the median share over the pairs and its range."""
    if not entry:
        return "-"
    text = f"{fmt.share(entry['share'])} ({100 * entry['lo']:.0f}-{100 * entry['hi']:.0f}%)"
    return text + (f" {ABOVE}" if entry["share"] > 1 else "")


def _ceiling_text(entry: dict, metric: str) -> str:
    if metric == "throughput_msgs":
        return (f"{entry['ceiling'] / 1e6:,.0f} MB/s ({entry['ceiling_lo'] / 1e6:,.0f}-"
                f"{entry['ceiling_hi'] / 1e6:,.0f})")
    return f"{entry['ceiling']:.1f} us ({entry['ceiling_lo']:.1f}-{entry['ceiling_hi']:.1f})"


def rows(shares: dict, cmp: pd.DataFrame) -> list[list[str]]:
    """One row per compared cell and metric that has in-run probes."""
    lib = cmp[(cmp["kind"] == "library") & cmp["metric"].isin(ceil.SHARED_METRICS)]
    out = []
    order = ["pattern", "transport", "msg_size", "placement", "process_model", "io_threads", "config",
             "metric"]
    for r in lib.sort_values(order).to_dict("records"):
        ref, cand = ceil.run_share(shares, r, r["reference"]), ceil.run_share(shares, r, r["library"])
        if not ref and not cand:
            continue
        probe = ref or cand
        out.append([r["pattern"], r["transport"], schema.kib(r["msg_size"]), r["placement"] or "-",
                    r["process_model"] or "-", str(r["io_threads"]), r["config"] or "-",
                    schema.metric(r["metric"]).label, _ceiling_text(probe, r["metric"]),
                    f"{r['reference']} {share_text(ref)}", f"{r['library']} {share_text(cand)}",
                    f"{(ref or {}).get('n', 0)}/{(cand or {}).get('n', 0)}"])
    return out


def section(shares: dict | None, cmp: pd.DataFrame) -> list[str]:
    if not shares:
        return []
    lines = ["## Share of the host ceiling (measured in this run)", "",
             "In every batch of the cells below, ceiling_probe (a plain socket pump: no messaging library) "
             "streamed messages of the cells' size over their transport with their placement, process model "
             "and socket buffers, between the libraries' runs. Share = the library's throughput over the "
             "probe's of the same batch (p50 latency: the probe's over the library's), per repetition; "
             "shown as the median over the pairs and their range, the ceiling as the probe's median and "
             f"range. {ABOVE}: the library's median went beyond the probe, so the probe did not bound "
             "that cell.", "", _source_text(shares.get("source_messages") or [1]), ""]
    table = rows(shares, cmp)
    if table:
        head = ["Pattern", "Transport", "Size", "Placement", "Process", "IO threads", "Config", "Metric",
                "Ceiling (median, range)", "Reference share", "Candidate share", "Pairs (ref/cand)"]
        lines += [fmt.md_table(head, table), ""]
    else:
        lines += ["No compared cell has an ok probe in its batches.", ""]
    flagged = above(shares, cmp[cmp["kind"].isin(["library", "aa"])])
    if flagged:
        lines += [f"{len(flagged)} library cells went {ABOVE} the probe of their own batches (median share "
                  "over 100%): there the probe's ways of waiting did not reach what that library's did, so "
                  "the share is not a bound:", ""]
        lines += [f"- {b['pattern']} {b['transport']} {schema.kib(b['msg_size'])} {b['config'] or '-'} "
                  f"{b['where']}: {b['library']} {schema.metric(b['metric']).label} {fmt.share(b['share'])}"
                  for b in flagged]
        lines.append("")
    failed = shares["failed"]
    if failed:
        lines += [f"{len(failed)} of {shares['probes']} probes failed; their batches have no share:", ""]
        lines += [f"- {f.get('transport')} {schema.kib(f.get('msg_size') or 0)} {f.get('placement')} "
                  f"{f.get('process_model')} rep {f.get('repetition')}: {f.get('status')}: "
                  f"{str(f.get('failure') or '')[:160]}" for f in sorted(failed, key=_failure_order)]
        lines.append("")
    return lines


def _source_text(sources: list[int]) -> str:
    """Where the probe's sender wrote from: the source's cache residence is part of the
    bound (a ring of 16 x 256 KiB is past this host's 2 MiB L2; one buffer is not)."""
    if sources == [1]:
        return ("The probe's sender wrote every message from one buffer (cache-hot); a cell that "
                "sends zero-copy from a ring of buffers (`BENCH_SEND_BUFFERS`) reads its source from "
                "farther away than the probe did.")
    rings = ", ".join(str(n) for n in sources)
    return (f"The probe's sender wrote from a ring of {rings} message-sized buffers (`[ceiling]."
            "source_messages`), as a cell sending zero-copy from a ring of that size does.")


def _failure_order(f: dict) -> tuple:
    return (str(f.get("transport")), int(f.get("msg_size") or 0), str(f.get("placement")),
            str(f.get("process_model")), int(f.get("repetition") or 0), str(f.get("block")))


def above(shares: dict | None, cmp: pd.DataFrame) -> list[dict]:
    """(cell, library) pairs whose median share of the in-run ceiling exceeds 1."""
    if not shares:
        return []
    out, seen = [], set()
    for r in cmp[cmp["metric"].isin(ceil.SHARED_METRICS)].to_dict("records"):
        for library in (r["reference"], r["library"]):
            entry = ceil.run_share(shares, r, library)
            key = ceil.cell_key(r, library)
            if entry and entry["share"] > 1 and key not in seen:
                seen.add(key)
                out.append({"pattern": r["pattern"], "transport": r["transport"], "msg_size": r["msg_size"],
                            "config": r["config"], "where": ceil.where(r), "library": library,
                            "metric": r["metric"],
                            "share": entry["share"]})
    return sorted(out, key=lambda b: (b["pattern"], b["transport"], b["msg_size"], b["config"], b["where"],
                                      b["library"], b["metric"]))
