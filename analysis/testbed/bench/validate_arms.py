"""Checks that an arms bench line (schema testbed.bench-arms/1, docs/data-formats.md
section 3) is complete and self-consistent: `arms_result_problems` returns a list of
problems (empty = valid). The bench checks (testbed.bench.validate) apply to what the
two share: latency summaries and histograms per slice, placement, threads, env.

What each role's line carries: `both` (one process) and `joined` (two role lines
joined by testbed.bench.command.join_arms_roles) everything; a `receiver` line the
throughput slices' receiver_seconds and its own counters; a `sender` line the latency
slices and its own counters."""
from __future__ import annotations

from typing import Any

from testbed.bench.validate import (
    RESULT_ROLES,
    _is_count,
    _number,
    _placement_problems,
    histogram_problems,
    latency_problems,
)

ARMS_SCHEMA = "testbed.bench-arms/1"
COUNTER_SOURCES = ("perf_event_open", "getrusage", "none")
SLICE_LATENCY_KEYS = ("min", "p50", "p90", "p99", "p999", "max", "mean")


def arms_result_problems(result: Any, *, pattern: str | None = None, transport: str | None = None,
                         msg_size: int | None = None, arms: list[str] | None = None,
                         rounds: int | None = None, slice_count: int | None = None,
                         slice_lat_count: int | None = None) -> list[str]:
    """Everything wrong with one arms line; keyword arguments are expectations (what
    was asked for: `arms` the arm labels in order) that the line must match."""
    if not isinstance(result, dict):
        return [f"result is {type(result).__name__}, expected a JSON object"]
    problems: list[str] = []
    if result.get("schema") != ARMS_SCHEMA:
        return [f"schema is {result.get('schema')!r}, expected {ARMS_SCHEMA!r}"]
    for key, want in {"pattern": pattern, "transport": transport, "msg_size": msg_size}.items():
        if want is not None and result.get(key) != want:
            problems.append(f"{key} is {result.get(key)!r}, expected {want!r}")
    role = result.get("role")
    if role not in RESULT_ROLES:
        return problems + [f"role is {role!r}, expected one of {', '.join(RESULT_ROLES)}"]
    problems += _libs_and_arms_problems(result, arms)
    n_arms = len(result.get("arms") or [])
    events = _counters_header_problems(result.get("counters"), problems)
    settings = result.get("settings") if isinstance(result.get("settings"), dict) else {}
    plan = settings.get("arms") if isinstance(settings.get("arms"), dict) else {}
    asked = {"rounds": rounds, "slice_count": slice_count, "slice_lat_count": slice_lat_count}
    for key, want in asked.items():
        if want is not None and plan.get(key) != want:
            problems.append(f"settings.arms.{key} is {plan.get(key)!r}, expected {want!r}")
    problems += _rounds_problems(result.get("rounds"), role, n_arms, events, plan,
                                 settings.get("mode", "both"))
    problems += _verify_problems(result, role)
    problems += _placement_problems(result)
    env = result.get("env")
    if not isinstance(env, dict) or not all(isinstance(v, str) and k.startswith(("ZMQ_ASIO_", "BENCH_"))
                                            for k, v in env.items()):
        problems.append("env must map ZMQ_ASIO_*/BENCH_* names to strings")
    return problems


def _libs_and_arms_problems(result: dict, expected_arms: list[str] | None) -> list[str]:
    problems: list[str] = []
    libs = result.get("libs")
    if not isinstance(libs, list) or not libs:
        return ["libs must be a non-empty list (the --lib libraries as loaded)"]
    labels = []
    for i, lib in enumerate(libs):
        if not isinstance(lib, dict) or not all(isinstance(lib.get(k), str) and lib.get(k)
                                                for k in ("label", "path", "loaded_from", "version")):
            problems.append(f"libs[{i}] is {lib!r}, expected label/path/loaded_from/version strings")
            continue
        labels.append(lib["label"])
    arms = result.get("arms")
    if not isinstance(arms, list) or not arms:
        return problems + ["arms must be a non-empty list"]
    arm_labels = []
    for i, arm in enumerate(arms):
        where = f"arms[{i}]"
        if not isinstance(arm, dict):
            problems.append(f"{where} is not an object")
            continue
        arm_labels.append(arm.get("label"))
        if arm.get("lib") not in labels:
            problems.append(f"{where}.lib {arm.get('lib')!r} is not one of the libs ({', '.join(labels)})")
        env = arm.get("env")
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            problems.append(f"{where}.env must map names to strings")
        library = arm.get("library")
        if not isinstance(library, dict) or not all(isinstance(library.get(k), str) and library.get(k)
                                                    for k in ("name", "version", "loaded_from")):
            problems.append(f"{where}.library is {library!r}, expected name/version/loaded_from strings")
    if len(set(arm_labels)) != len(arm_labels):
        problems.append(f"arm labels repeat: {arm_labels}")
    if expected_arms is not None and arm_labels != list(expected_arms):
        problems.append(f"arms are {arm_labels}, expected {list(expected_arms)}")
    return problems


def _counters_header_problems(counters: Any, problems: list[str]) -> list[str]:
    """The counted events (empty when nothing was counted)."""
    if not isinstance(counters, dict) or counters.get("source") not in COUNTER_SOURCES:
        problems.append(f"counters.source must be one of {', '.join(COUNTER_SOURCES)}")
        return []
    events = counters.get("events")
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events) \
            or len(set(events)) != len(events):
        problems.append("counters.events must be a list of distinct names")
        return []
    if counters["source"] == "none" and events:
        problems.append("counters.source is 'none' but events are listed")
    return events


def _rounds_problems(rounds: Any, role: str, n_arms: int, events: list[str], plan: dict,
                     mode: str) -> list[str]:
    if not isinstance(rounds, list) or not rounds:
        return ["rounds must be a non-empty list"]
    problems: list[str] = []
    kinds = [k for k in ("thr", "lat") if mode in (k, "both")]
    per_kind = (plan.get("warmup_rounds") or 0) + (plan.get("rounds") or 0)
    expected = [(kind, r) for kind in kinds for r in range(per_kind)]
    got = [(r.get("kind"), r.get("round")) for r in rounds if isinstance(r, dict)]
    if got != expected:
        problems.append(f"rounds run {_describe(got)}, expected {_describe(expected)} "
                        f"(mode {mode}, {plan.get('warmup_rounds')} warm-up + {plan.get('rounds')} rounds)")
    for i, rnd in enumerate(rounds):
        where = f"rounds[{i}]"
        if not isinstance(rnd, dict):
            problems.append(f"{where} is not an object")
            continue
        if rnd.get("warmup") is not (isinstance(rnd.get("round"), int)
                                     and rnd["round"] < (plan.get("warmup_rounds") or 0)):
            problems.append(f"{where}.warmup is {rnd.get('warmup')!r} for round {rnd.get('round')!r}")
        order, slices = rnd.get("order"), rnd.get("slices")
        if not isinstance(order, list) or sorted(order) != list(range(n_arms)):
            problems.append(f"{where}.order {order!r} is not a permutation of the {n_arms} arms")
            continue
        if not isinstance(slices, list) or [s.get("arm") for s in slices if isinstance(s, dict)] != order:
            problems.append(f"{where}.slices do not follow its order {order}")
            continue
        for j, s in enumerate(slices):
            problems += _slice_problems(s, f"{where}.slices[{j}]", rnd.get("kind"), role, events)
    return problems


def _describe(pairs: list) -> str:
    if not pairs:
        return "nothing"
    counts: dict = {}
    for kind, _ in pairs:
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{n} {kind}" for kind, n in counts.items())


def _slice_problems(s: dict, where: str, kind: Any, role: str, events: list[str]) -> list[str]:
    problems: list[str] = []
    if s.get("kind") != kind:
        problems.append(f"{where}.kind is {s.get('kind')!r}, its round's {kind!r}")
    count = s.get("count")
    if not isinstance(count, int) or count <= 0:
        problems.append(f"{where}.count is {count!r}, expected a positive integer")
        return problems
    if kind == "thr":
        problems += _thr_slice_problems(s, where, role, count)
    elif role != "receiver":
        lat = {**{k: s.get(k) for k in (*SLICE_LATENCY_KEYS, "unit", "measure", "histogram")}, "count": count}
        problems += latency_problems(lat, where)
        if not problems:
            problems += histogram_problems(lat, where)
    counters = s.get("counters")
    if events:  # every slice counted exactly the listed events: never a zero for what was not
        if not isinstance(counters, dict) or sorted(counters) != sorted(events):
            problems.append(f"{where}.counters has {sorted(counters or {})}, "
                            f"expected the events {sorted(events)}")
        elif not all(_is_count(v) for v in counters.values()):
            problems.append(f"{where}.counters must be non-negative integers")
    elif counters is not None:
        problems.append(f"{where}.counters is {counters!r}, but nothing was counted")
    return problems


def _thr_slice_problems(s: dict, where: str, role: str, count: int) -> list[str]:
    problems: list[str] = []
    if role != "receiver" or s.get("sender_seconds") is not None:
        _number(s, "sender_seconds", where, problems, positive=True)
    if role == "sender" and s.get("receiver_seconds") is None:
        return problems
    window = _number(s, "receiver_seconds", where, problems, positive=True)
    span = s.get("span_seconds")
    if window and span is not None and (not isinstance(span, (int, float)) or span < window * (1 - 1e-9)):
        problems.append(f"{where}.span_seconds {span!r} is shorter than receiver_seconds {window}")
    if s.get("delivery") == "lossy":
        sent = s.get("sent")
        if not isinstance(sent, int) or sent < count:
            problems.append(f"{where}: a lossy slice needs sent >= count (sent {sent!r}, count {count})")
    elif s.get("delivery") != "lossless":
        problems.append(f"{where}.delivery is {s.get('delivery')!r}, expected lossless or lossy")
    return problems


def _verify_problems(result: dict, role: str) -> list[str]:
    verify = result.get("verify")
    if not isinstance(verify, dict) or not isinstance(verify.get("ok"), bool):
        return ["verify must be an object with a boolean 'ok'"]
    if not verify["ok"]:
        return [f"verification failed: {verify.get('error', '(no reason given)')}"]
    slices = [s for r in result.get("rounds") or [] if isinstance(r, dict)
              for s in r.get("slices") or [] if isinstance(s, dict)]
    problems = []
    thr = [s for s in slices if s.get("kind") == "thr"]
    lat = [s for s in slices if s.get("kind") == "lat"]
    if role != "sender":
        delivered = sum(s.get("count") or 0 for s in thr)
        sent = sum(s.get("sent", s.get("count")) or 0 for s in thr)
        if verify.get("received") != delivered or verify.get("expected") != sent:
            problems.append(f"verify.received/expected {verify.get('received')}/{verify.get('expected')} "
                            f"do not match the throughput slices' {delivered}/{sent}")
    if role != "receiver":
        trips = sum(s.get("count") or 0 for s in lat)
        if not verify.get("lat_received") == verify.get("lat_expected") == trips:
            problems.append(f"verify.lat_received/lat_expected {verify.get('lat_received')}/"
                            f"{verify.get('lat_expected')} do not match the latency slices' {trips}")
    stragglers = verify.get("stragglers", 0)
    if not _is_count(stragglers):
        problems.append(f"verify.stragglers must be a count (an integer >= 0), not {stragglers!r}")
    if verify.get("slices") != len(slices) and role != "joined":
        problems.append(f"verify.slices is {verify.get('slices')!r}, the line has {len(slices)}")
    return problems


def slice_seconds_key(result: dict) -> str:
    """What times a throughput slice: its span on one host (every slice has one), else
    the receiver's window (bench/measurements/README.md, 2026-12-02: a receiver
    scheduled late starts its window late, which short slices cannot absorb)."""
    thr = [s for r in result.get("rounds", []) for s in r.get("slices", []) if s.get("kind") == "thr"]
    return "span_seconds" if thr and all(s.get("span_seconds") for s in thr) else "receiver_seconds"


def pooled(result: dict) -> dict[str, dict]:
    """Per arm label, the measured (not warm-up) slices pooled: throughput = messages /
    summed seconds (slice_seconds_key), latency percentiles from the merged histograms
    (us), counters summed and per message. For summaries and tests; the sweep pools
    its own."""
    from testbed.bench import latency_histogram as lh
    arms = [a["label"] for a in result["arms"]]
    key = slice_seconds_key(result)
    out = {label: {"count": 0, "seconds": 0.0, "hist": [], "counters": {}, "slices": 0} for label in arms}
    for rnd in result["rounds"]:
        if rnd["warmup"]:
            continue
        for s in rnd["slices"]:
            p = out[arms[s["arm"]]]
            p["slices"] += 1
            if s["kind"] == "thr" and s.get(key):
                p["count"] += s["count"]
                p["seconds"] += s[key]
                for k, v in (s.get("counters") or {}).items():
                    p["counters"][k] = p["counters"].get(k, 0) + v
            if s["kind"] == "lat" and isinstance(s.get("histogram"), dict):
                p["hist"].append(lh.decode(s["histogram"]))
    summary = {}
    for label, p in out.items():
        merged = lh.merge(p["hist"]) if p["hist"] else None
        summary[label] = {
            "msgs_per_sec": p["count"] / p["seconds"] if p["seconds"] else None,
            "p50_us": merged.percentile(0.5) / 1000 if merged else None,
            "p99_us": merged.percentile(0.99) / 1000 if merged else None,
            "per_message": {k: v / p["count"] for k, v in p["counters"].items()} if p["count"] else {},
        }
    return summary

