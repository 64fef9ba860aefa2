"""The soak (kind "faults-soak"): every pattern x security x heartbeat pair of both
libraries sends at once, each through its own proxy, for [soak].duration_s. First a
warm-up applies every fault of the experiment once to every pair at once (each at
its longest); then RSS and descriptors are measured over a quiet level window; then
a seeded schedule (reproducible from [soak].seed) applies random faults to one pair
at a time, to that pair of both libraries at the same moment, until a quiet end
window (nothing applied in the last end_window_s + SOAK_SETTLE_S seconds).

Judged per library and pair:
  accounted   no phantom, duplicated, reordered or corrupted message, and every lost
              message was sent during a fault on its pair, within IN_FLIGHT_S before
              it or SOAK_SETTLE_S after it, or (PUB/SUB) before the subscriber's first
              message: a loss nothing explains is a failure
  flat        the median RSS and the median open descriptors of every process that
              lived the whole soak, over the end window, within tolerance of their
              medians over the level window [warmup_s, warmup_s + level_window_s]
"""

from __future__ import annotations

import random
import shutil
import statistics
import time
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

from testbed.records.fault_run_dir import FaultRunDir
from testbed.toolchain.progress import Progress

from . import accounting, cell, proxy, runner
from .config import SOAK_SETTLE_S, Cell, FaultsExperiment
from .records import RECEIVED, read_events, read_records

SETTLE_S = SOAK_SETTLE_S
# A message sent this long before a fault may still be on its way (queued in a pipe,
# a socket buffer, the proxy) when the fault takes it: its loss is the fault's too.
IN_FLIGHT_S = 1.0
# Restarts of a wedged proxy server a soak makes before it goes on without faults
# (each drops every pair's connections: a run needing more is not the soak it planned).
MAX_PROXY_RESTARTS = 3


def pairs(exp: FaultsExperiment) -> list[Cell]:
    seen = {}
    for c in exp.cells():
        seen.setdefault(
            (c.pattern, c.security, c.heartbeat), Cell(c.pattern, c.security, c.heartbeat, "soak")
        )
    return list(seen.values())


def warmup_faults(exp: FaultsExperiment) -> list[dict]:
    """The warm-up: every fault of the soak on every pair at once, each lasting the
    longest a fault may last, so the level measured after it has seen the deepest
    queues (and the allocator's answer to them) the random faults can make; all of
    it [soak].warmup_rounds times (the first round meets processes a few seconds
    old, still growing into their heap; a later one meets them grown, as the random
    faults will); in each round the faults that kill come first."""
    s = exp.soak
    out, t = [], s.fault_gap_s[0]
    # Kills first: a bound side they restart then lives through every other fault
    # before the level is measured (it is judged too).
    order = sorted(exp.fault_names, key=lambda n: not exp.faults[n].kill)
    for name in order * s.warmup_rounds:
        out.append({"start_s": round(t, 3), "end_s": round(t + s.fault_s[1], 3), "pair": None, "fault": name})
        t += s.fault_s[1] + s.fault_gap_s[0]
    return out


def schedule(exp: FaultsExperiment, n_pairs: int) -> list[dict]:
    """[{start_s, end_s, pair (None: every pair), fault}] from the start of traffic:
    the warm-up faults, a quiet level window, then random faults one pair at a time,
    none in the closing quiet period."""
    s = exp.soak
    rng = random.Random(s.seed)
    quiet_from = s.duration_s - s.end_window_s - SETTLE_S
    out = warmup_faults(exp)
    t = s.warmup_s + s.level_window_s + rng.uniform(*s.fault_gap_s)
    while True:
        length = rng.uniform(*s.fault_s)
        if t + length > quiet_from:
            return out
        out.append(
            {
                "start_s": round(t, 3),
                "end_s": round(t + length, 3),
                "pair": rng.randrange(n_pairs),
                "fault": rng.choice(exp.fault_names),
            }
        )
        t += length + rng.uniform(*s.fault_gap_s)


def _median_in(samples: list[tuple[int, float]], lo: int, hi: int) -> float | None:
    values = [v for t, v in samples if lo <= t < hi]
    return statistics.median(values) if values else None


def flatness(events: list[dict], start: int, exp: FaultsExperiment) -> dict:
    s = exp.soak
    ns = lambda x: start + int(x * 1e9)  # noqa: E731
    out = {}
    for key in ("rss_kb", "fds"):
        samples = [(e["t"], e[key]) for e in events if e.get("what") == "sample"]
        level = _median_in(samples, ns(s.warmup_s), ns(s.warmup_s + s.level_window_s))
        end = _median_in(samples, ns(s.duration_s - s.end_window_s), ns(s.duration_s))
        change = (end / level - 1) if level and end is not None else None
        out[key] = {
            "level": level,
            "end": end,
            "change": change,
            "flat": change is not None and abs(change) <= s.tolerance,
        }
    return out


def _first_delivered_send(recv_logs) -> int:
    """The send time of the first message a subscriber got: messages published before
    its subscription reached the publisher are dropped there by design (RFC 29)."""
    sent = [r.aux for log in recv_logs for r in log if r.kind == RECEIVED and r.ok]
    return min(sent) if sent else 0


def _unexplained(lost_times: list[int], windows: list[tuple[int, int]]) -> int:
    return sum(1 for t in lost_times if not any(a <= t <= b for a, b in windows))


def run(exp: FaultsExperiment, run_dir: Path, seed: int, build: bool = True) -> int:
    """The soak with `seed` (the run's, recorded in its manifest): the schedule of
    faults and every process's rand() seed derive from it, so the manifest alone
    reproduces a run. run_cmd passes [soak].seed unless --seed says otherwise."""
    exp = replace(exp, soak=replace(exp.soak, seed=seed))
    progress = Progress()
    found, binaries = runner.libraries_and_drivers(exp, build, progress)
    binary, provenance = runner.proxy_binary(progress)
    run_dir.mkdir(parents=True, exist_ok=True)
    run = FaultRunDir.at(run_dir)
    run.keep_toml(exp.path)
    the_pairs = pairs(exp)
    plan = schedule(exp, len(the_pairs))
    with proxy.running(binary, run.proxy_log(), f"{seed}#soak") as server:
        toxiproxy = server.client
        m = runner.manifest(
            exp,
            run_dir.name,
            seed,
            found,
            binaries,
            {"binary": str(binary), "provenance": provenance, "version": toxiproxy.version()},
        )
        m.update(soak=asdict(exp.soak), schedule_of_faults=plan, pairs=[c.key() for c in the_pairs])
        run.write_manifest(m)
        progress.say(
            f"testbed run: {exp.name} ({exp.profile}): {len(the_pairs)} pairs x "
            f"{len(exp.libraries)} libraries for {exp.soak.duration_s:g} s, {len(plan)} faults "
            f"(seed {exp.soak.seed}); results in {run_dir}"
        )
        live: dict[tuple[str, int], cell.Pair] = {}
        try:
            times = cell.timeline(exp, time.monotonic_ns())
            times["send_until"] = times["start_at"] + int(exp.soak.duration_s * 1e9)
            times["until"] = times["send_until"] + int(exp.schedule.drain_s * 1e9)
            for e in exp.libraries:
                for i, c in enumerate(the_pairs):
                    live[(e.label, i)] = _start_pair(
                        exp,
                        c,
                        binaries[e.label],
                        toxiproxy,
                        run.pair_logs(f"{e.label}-{i}"),
                        f"{e.label}-{i}",
                        times,
                        seed,
                    )
            windows, restarts, wedged = _inject(exp, plan, the_pairs, live, times, progress, server)
            m.update(proxy_restarts=restarts, proxy_failure=wedged)
            for p in live.values():
                p.finish(times, exp)
        except KeyboardInterrupt:
            for p in live.values():
                p.stop_all()
            m.update(status="interrupted", ended=datetime.now(UTC).isoformat(timespec="seconds"))
            run.write_manifest(m)
            progress.say("testbed run: interrupted (a soak is not resumable: start it again)")
            return 130
        finally:
            for p in live.values():
                p.stop_all()
    _summarize(exp, the_pairs, live, windows, times, run_dir)
    m.update(status="complete", ended=datetime.now(UTC).isoformat(timespec="seconds"))
    run.write_manifest(m)
    return 0


def rand_seed_base(seed: int, c: Cell) -> str:
    """What a soak process's rand() seed is drawn from (cell.rand_seed adds its role
    and epoch): the run's seed and the pair, not the library, so both libraries'
    processes of a pair get the same seeds, as in the faults matrix."""
    return f"{seed}#{c.key()}"


def _start_pair(
    exp, c: Cell, binary: Path, toxiproxy, work: Path, tag: str, times: dict, seed: int
) -> cell.Pair:
    shutil.rmtree(work, ignore_errors=True)  # logs are appended to: start from nothing
    work.mkdir(parents=True)
    pair = cell.Pair(
        binary,
        work,
        toxiproxy,
        f"soak-{tag}",
        args=cell.driver_args(exp, c, times),
        bound=cell.bound_role(c.pattern),
        rand_seed_base=rand_seed_base(seed, c) if exp.traffic.seed_rand else None,
    )
    pair.open(pair.proxy_name)
    return pair


def _inject(
    exp, plan, the_pairs, live, times, progress, server
) -> tuple[dict[int, list[tuple[int, int]]], list[dict], str | None]:
    """Apply the schedule; returns (pair index -> [(start, end + settle)] in ns, the
    proxy restarts, and the proxy failure that stopped the schedule early, if one did).

    Toxiproxy 2.5 can wedge on a toxic's removal (its issues 412 and 558: the API
    call never returns). The soak then restarts the server and re-creates every
    pair's proxy on its own address, so the connecting sides reconnect where they
    were: every pair's connections drop (a reset on every pair, whose losses its
    window explains), the interrupted fault's process half is ended (a killed side
    restarted, a frozen one resumed), and the schedule goes on. After
    MAX_PROXY_RESTARTS the soak goes on without faults, and its report says it
    does not answer."""
    windows: dict[int, list[tuple[int, int]]] = {}
    restarts: list[dict] = []
    labels = [e.label for e in exp.libraries]
    for n, f in enumerate(plan, 1):
        fault = exp.faults[f["fault"]]
        targets = range(len(the_pairs)) if f["pair"] is None else [f["pair"]]
        hit = [live[(lab, i)] for lab in labels for i in targets]
        cell.sleep_until(times["start_at"] + int(f["start_s"] * 1e9))
        begun = time.monotonic_ns()
        since = begun - int(IN_FLIGHT_S * 1e9)  # a loss from here on may be this fault's
        started: list[tuple[cell.Pair, list[str]]] = []
        ended = 0  # started[:ended] have ended their fault
        try:
            for p in hit:
                started.append((p, p.begin_fault(fault)))
            cell.sleep_until(times["start_at"] + int(f["end_s"] * 1e9))
            for p, names in started:
                p.end_fault(fault, names)
                ended += 1
        except proxy.ProxyError as exc:
            at_s = round((time.monotonic_ns() - times["start_at"]) / 1e9, 1)
            for p, _names in started[ended:]:  # the process half no toxic removal reached
                p.end_action(fault)
            if len(restarts) >= MAX_PROXY_RESTARTS:
                for i in targets:
                    windows.setdefault(i, []).append((since, times["until"]))
                progress.say(f"  fault {n}: the proxy stopped answering again ({exc}); no further faults")
                return windows, restarts, f"at {at_s:g} s, fault {n} of {len(plan)}: {exc}"
            progress.say(f"  fault {n} at {at_s:g} s: the proxy stopped answering ({exc}); restarting it")
            server.restart()
            for p in live.values():
                p.reopen_proxy()
            done = time.monotonic_ns()
            for i in range(len(the_pairs)):  # the restart dropped every pair's connections
                windows.setdefault(i, []).append((since, done + int(SETTLE_S * 1e9)))
            restarts.append(
                {"fault": n, "at_s": at_s, "took_s": round((done - begun) / 1e9, 1), "error": str(exc)}
            )
            continue
        for i in targets:
            windows.setdefault(i, []).append((since, time.monotonic_ns() + int(SETTLE_S * 1e9)))
        where = "every pair" if f["pair"] is None else the_pairs[f["pair"]].key().rsplit("/", 1)[0]
        progress.say(
            f"  fault {n}/{len(plan)} at {f['start_s']:.0f} s: {f['fault']} on {where} "
            f"for {f['end_s'] - f['start_s']:.1f} s"
        )
    return windows, restarts, None


def _summarize(exp, the_pairs, live, windows, times, run_dir: Path) -> None:
    run = FaultRunDir.at(run_dir)
    with run.rewrite("cells") as out, run.rewrite("samples") as samples:
        for (label, i), p in sorted(live.items()):
            c = the_pairs[i]
            sends = [d for d in p.processes if d.role == "send"]
            recvs = [d for d in p.processes if d.role == "recv"]
            send_logs = [read_records(d.log) for d in sends]
            recv_logs = [read_records(d.log) for d in recvs]
            lost_times: list[int] = []
            if c.pattern == "REQ_REP":
                acc = accounting.reqrep(send_logs, recv_logs, lost_times=lost_times)
            else:
                killed = {d.epoch for d in sends if d.killed_by_us and not d.hung}
                acc = accounting.stream(send_logs, recv_logs, killed, lost_times=lost_times)
            explained = list(windows.get(i, []))
            if c.pattern == "PUB_SUB":  # a subscriber joins late: what came before is not its
                explained.append((0, _first_delivered_send(recv_logs)))
            acc["unexplained_lost"] = _unexplained(lost_times, explained)
            # Judged: every process alive from the level window to the end (a bound side
            # restarted by a warm-up kill is; one killed later is not).
            level_from = times["start_at"] + int(exp.soak.warmup_s * 1e9)
            whole = [d for d in p.processes if not d.killed_by_us and p.starts[id(d)] <= level_from]
            flat = {
                f"{d.role}-{d.epoch}": flatness(read_events(d.events), times["start_at"], exp) for d in whole
            }
            outcomes = [d.outcome() for d in p.processes]
            rec = {
                "key": c.key(),
                "library": label,
                "pair": i,
                "cell": asdict(c),
                "accounting": acc,
                "flatness": flat,
                "abort": any("signal" in o for o in outcomes),
                "hang": any(o["hung"] for o in outcomes),
                "errors": [o for o in outcomes if (o["exit"] or 0) > 0],
                "processes": outcomes,
                "faults_on_pair": len(windows.get(i, [])),
            }
            out.add(rec)
            for d in p.processes:
                for e in read_events(d.events):
                    if e.get("what") == "sample":
                        samples.add(
                            {
                                "library": label,
                                "pair": i,
                                "process": f"{d.role}-{d.epoch}",
                                "t_s": round((e["t"] - times["start_at"]) / 1e9, 2),
                                "rss_kb": e["rss_kb"],
                                "fds": e["fds"],
                            }
                        )


def accounted(rec: dict) -> bool:
    a = rec["accounting"]
    return not (a["phantom"] or a["duplicated"] or a["reordered"] or a["corrupted"] or a["unexplained_lost"])


def render(run_dir: Path) -> Path:
    run = FaultRunDir.open(run_dir)
    m, records = run.manifest(), run.records()
    tol = m["soak"]["tolerance"]
    lines = [
        f"# {m['experiment']} · run {m['run_id']}",
        "",
        f"**Question.** {m['question']}",
        "",
        f"Profile `{m['profile']}`: {m['soak']['duration_s']:g} s, {len(m['schedule_of_faults'])} faults "
        f"(seed {m['soak']['seed']}), status {m['status']}; libraries "
        + ", ".join(f"{lib['label']} (build {lib['build_id']})" for lib in m["libraries"])
        + f"; proxy {m['proxy']['provenance']}. RSS and descriptors: median over the last "
        f"{m['soak']['end_window_s']:g} s against the median over [{m['soak']['warmup_s']:g}, "
        f"{m['soak']['warmup_s'] + m['soak']['level_window_s']:g}] s (after "
        f"{_rounds(m['soak'].get('warmup_rounds', 1))} of every fault), flat within ±{tol:.0%}.",
        "",
    ]
    verdict = [
        _verdict_line(lab["label"], [r for r in records if r["library"] == lab["label"]])
        for lab in m["libraries"]
    ]
    lines += ["## Verdict", "", *_proxy_lines(m), *verdict, ""]

    lines += [
        "| pair | library | sent | delivered | lost (unexplained) | dup | reord | corrupt | "
        "RSS change | fds change | faults on pair | abort/hang |",
        "|" + "---|" * 12,
    ]
    for r in sorted(records, key=lambda r: (r["pair"], r["library"])):
        a = r["accounting"]
        rss = ", ".join(f"{name} {_pct(f['rss_kb'])}" for name, f in r["flatness"].items())
        fds = ", ".join(f"{name} {_pct(f['fds'])}" for name, f in r["flatness"].items())
        lines.append(
            f"| {r['key'].rsplit('/', 1)[0]} | {r['library']} | {a['sent']} | {a['delivered']} | "
            f"{a['lost']} ({a['unexplained_lost']}) | {a['duplicated']} | {a['reordered']} | "
            f"{a['corrupted']} | {rss} | {fds} | {r['faults_on_pair']} | "
            f"{int(r['abort'])}/{int(r['hang'])} |"
        )
    lines += ["", "## Faults applied", "", "| start s | end s | pair | fault |", "|---|---|---|---|"]
    for f in m["schedule_of_faults"]:
        where = "every pair" if f["pair"] is None else m["pairs"][f["pair"]].rsplit("/", 1)[0]
        lines.append(f"| {f['start_s']:.1f} | {f['end_s']:.1f} | {where} | {f['fault']} |")
    out = run.report_path()
    out.write_text("\n".join(lines) + "\n")
    return out


def _proxy_lines(m: dict) -> list[str]:
    """What the fault proxy did to the run, first: a soak whose proxy failed for good
    did not apply its schedule, so its clean accounting answers nothing (every loss
    after the failure is explained by it)."""
    out = []
    if m.get("proxy_failure"):
        out.append(
            f"- **No answer: the fault proxy stopped answering** ({m['proxy_failure']}) after "
            f"{len(m.get('proxy_restarts') or [])} restarts; the faults after it were not applied, "
            "so the lines below judge a soak that did not run as planned"
        )
    for r in m.get("proxy_restarts") or []:
        out.append(
            f"- the fault proxy wedged at {r['at_s']:g} s (fault {r['fault']}: {r['error']}) and was "
            f"restarted, dropping every pair's connections ({r['took_s']:g} s from the fault's start; "
            "losses in that window are explained by it)"
        )
    return out


def _verdict_line(label: str, records: list[dict]) -> str:
    """One library's verdict: what is clean, and what is not, in numbers."""
    unaccounted = [r["key"].rsplit("/", 1)[0] for r in records if not accounted(r)]
    flats = [(f, k) for r in records for f in r["flatness"].values() for k in ("rss_kb", "fds")]
    off = [(f[k]["change"], k) for f, k in flats if not f[k]["flat"]]
    broke = sum(1 for r in records if r["abort"] or r["hang"] or r["errors"])
    if not (unaccounted or off or broke):
        return f"- **{label}**: every message accounted for, RSS and descriptors flat, no abort or hang"
    parts = [
        f"messages unaccounted for in {', '.join(unaccounted)}"
        if unaccounted
        else "every message accounted for"
    ]
    if off:
        grew = sum(1 for c, _k in off if c is not None and c > 0)
        shrank = sum(1 for c, _k in off if c is not None and c < 0)
        parts.append(
            f"**{len(off)} of {len(flats)} RSS/descriptor series outside the tolerance** ({grew} grew, "
            f"{shrank} shrank, {len(off) - grew - shrank} unmeasured)"
        )
    else:
        parts.append("RSS and descriptors flat")
    parts.append(f"**{broke} pairs with an abort, hang or error**" if broke else "no abort or hang")
    return f"- **{label}**: " + "; ".join(parts)


def _all_flat(rec: dict) -> bool:
    return all(f[k]["flat"] for f in rec["flatness"].values() for k in ("rss_kb", "fds"))


def _rounds(n: int) -> str:
    return "one warm-up round" if n == 1 else f"{n} warm-up rounds"


def _pct(f: dict) -> str:
    if f["change"] is None:
        return "n/a"
    return f"{f['change']:+.1%}{'' if f['flat'] else ' (!)'}"
