"""The report's run table: (label, text) rows that say where, how and with what a run
ran, read from its manifest (host, libraries, commit, design, declared and observed
library settings). Moved out of the manifest record (was RunManifest.brief in
results/run_manifest.py, the settings rows in sweep/library_settings.py): it is
report text, and the record is shared with the sweep."""
from __future__ import annotations

import json

from testbed.records.manifest import RunManifest


def loopback_text(lb: dict) -> str:
    """'tcp congestion control bbr (qdisc pfifo_fast), idle haltpoll/haltpoll, halt poll 0 ns'."""
    tcp = f"tcp congestion control {lb.get('tcp_congestion_control') or '?'}"
    if lb.get("default_qdisc"):
        tcp += f" (qdisc {lb['default_qdisc']})"
    idle = f"idle {lb.get('cpuidle_driver') or '?'}/{lb.get('cpuidle_governor') or '?'}"
    poll = lb.get("guest_halt_poll_ns")
    return ", ".join([tcp, idle] + ([f"guest halt poll {poll} ns"] if poll is not None else []))


def brief(m: RunManifest) -> list[tuple[str, str]]:
    """(label, text) rows of the report's run table."""
    host = m.host or {}
    cores = host.get("cores") or host.get("cpus") or "?"
    facts = [host.get("cpu_model"), f"{cores} cores", f"kernel {host.get('kernel', '?')}",
             f"governor {host.get('governor', '?')}", f"turbo {host.get('turbo', '?')}"]
    out = [("status", str(m.status)), ("host", ", ".join(str(x) for x in facts if x))]
    if host.get("loopback"):  # runs since 2026-12-05
        out.append(("loopback latency settings", loopback_text(host["loopback"])))
    out.append(("load before / after", f"{host.get('load_before', '?')} / {host.get('load_after', '?')}"))
    if host.get("competing_before") or host.get("competing_after"):
        out.append(("other work at start / end", " / ".join(
            _competing(host.get(k)) for k in ("competing_before", "competing_after"))))
    out += _hosts_rows(m) + _shard_rows(m)
    for lib in sorted(m.library_info, key=lambda lib: lib.label):
        out.append((f"library `{lib.label}`", lib.header_text()))
    commit = str(m.git.get("commit", "?"))[:12] + (" (dirty tree)" if m.git.get("dirty") else "")
    out.append(("commit", f"`{commit}`"))
    reps = m.repetitions or "?"
    out.append(("profile / repetitions / shuffle seed", f"{m.profile} / {reps} / {m.shuffle_seed}"))
    out.append(("pinning", _text(m.pinning) if m.pinning else "none"))
    same = f"SAME inside +/-{100 * m.margin:g}%"
    if m.config_margin is not None:
        same += f" (configuration pairs: +/-{100 * m.config_margin:g}%)"
    out.append(("verdicts", f"confidence {100 * m.confidence:.4g}% each, {same}"))
    return out + _design_rows(m) + header_rows(m.library_settings)


def _design_rows(m: RunManifest) -> list[tuple[str, str]]:
    d = m.design
    if not d:
        return []
    reps = f"{d.get('min_repetitions', '?')}-{d.get('max_repetitions', '?')}" if d.get("adaptive") \
        else str(d.get("min_repetitions", "?"))
    looks = f", {d.get('looks')} looks every {d.get('look_every')}" if d.get("adaptive") else ""
    budget = d.get("time_budget_s")
    budget = "none" if budget is None else f"{budget:g} s"
    kind = "adaptive" if d.get("adaptive") else "fixed"
    # Only runs that asked for it name the timed latency warm-up, so reports of
    # earlier runs regenerate unchanged.
    warmup = f", latency warm-up >= {d['lat_warmup_s']} s" if d.get("lat_warmup_s") else ""
    tail = (f", latency window >= {d['tail_round_trips']} round trips above its p99"
            if d.get("tail_round_trips") else "")
    stop = f", the loop waits for {', '.join(d['stop_on'])}" if d.get("stop_on") else ""
    return [("design", f"{kind}: {reps} repetitions a side{looks}, run confidence "
                       f"{d.get('confidence', '?')}, budget {budget}, timed window >= "
                       f"{d.get('min_window_s', '?')} s{warmup}{tail}{stop}")]


def _hosts_rows(m: RunManifest) -> list[tuple[str, str]]:
    """Two-host runs name both ends in `hosts`; shaped links are described in `links`."""
    rows = []
    for entries, label in ((m.hosts, "host"), (m.links, "link")):
        rows += [(f"{label} `{name}`", _text(v)) for name, v in sorted((entries or {}).items())]
    return rows


def _shard_rows(m: RunManifest) -> list[tuple[str, str]]:
    """A merged run names each shard's host (a Slurm sweep: each array task's node), so
    a reader sees which comparisons ran where; each shard's comparisons ran on one host."""
    sources = m.extra.get("merged_from") or []
    rows = []
    for src in sorted(sources, key=lambda s: (s.get("shard") or {}).get("index") or 0):
        shard = src.get("shard") or {}
        host = src.get("host") or {}
        run = f"run `{src.get('run_id')}`"
        label = f"shard {shard.get('index', '?')}/{shard.get('total', '?')}" if shard else run
        rows.append((label, f"host `{host.get('hostname', '?')}` ({host.get('cores', '?')} cores, "
                            f"{host.get('cpu_model') or '?'}), {run}, {src.get('status')}"))
    if m.extra.get("missing_shards"):
        rows.append(("shards missing", ", ".join(str(i) for i in m.extra["missing_shards"])))
    slurm = m.extra.get("slurm")
    if slurm:
        where = f", partition {slurm['partition']}" if slurm.get("partition") else ""
        rows.append(("slurm job", f"{slurm.get('job_id')}: {slurm.get('tasks')} array tasks, one node each "
                                  f"with --exclusive{where}"))
        for o in slurm.get("outcomes") or []:
            if o.get("exit") != 0:
                rows.append((f"slurm task {o.get('task')}",
                             f"did not finish cleanly: exit {o.get('exit')}, Slurm state {o.get('state')}"))
    return rows


def header_rows(settings: dict) -> list[tuple[str, str]]:
    """The report header's rows: one for what was declared, one per library observed."""
    if not settings:
        return []
    d = settings.get("declared") or {}
    hwm = d.get("hwm", "?")
    text = f"HWM {hwm}" + (f" ({d['hwm_reason']})" if d.get("hwm_reason") else "")
    text += f"; IO threads {', '.join(str(x) for x in d.get('io_threads', [])) or '?'}"
    if d.get("io_threads_reason"):
        text += f" ({d['io_threads_reason']})"
    text += f"; SNDBUF/RCVBUF {d.get('sndbuf', '?')}"
    rows = [("settings declared", text)]
    for label, seen in sorted((settings.get("observed") or {}).items()):
        def show(key: str, seen: dict = seen) -> str:
            values = seen.get(key) or []
            return "/".join(str(v) for v in values) if values else "?"
        line = (f"SNDHWM {show('sndhwm')}, RCVHWM {show('rcvhwm')}, SNDBUF {show('sndbuf')}, "
                f"RCVBUF {show('rcvbuf')} (-1: OS default), IO threads {show('io_threads')}")
        if seen.get("lossy_runs"):
            lo, hi = seen["loss_range"]
            line += (f"; PUB dropped at the HWM in {seen['lossy_runs']} runs: loss median "
                     f"{100 * seen['loss_median']:.1f}% ({100 * lo:.1f}-{100 * hi:.1f}%), "
                     "throughput = delivered rate")
        rows.append((f"`{label}` ran with", line))
    return rows


def _text(value) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)


def _competing(load: dict | None) -> str:
    """CPUs other processes used: at a policy that competes with a woken bench, and idle."""
    if not load:
        return "?"
    return f"{load.get('normal_cpus', '?')} CPUs competing, {load.get('idle_cpus', '?')} SCHED_IDLE"
