"""A stand-in for bench_arms_<pattern> (docs/design/2026-12-02-arms.md) in the sweep tests.

Copied into a fake library's bench dir as bench_arms_<pattern> (support.make_library with
arms=True). It speaks the arms command line and prints the contract's JSON line, with
figures computed, not measured, so tests need no real load:

- each --lib LABEL=PATH is a fake shared object: a JSON file of the library's figures
  (`fake_msgs_per_sec`, `fake_p50_us`, `fake_noise` (per slice), `fake_run_noise` (per run
  and arm: the offset a real run's arms carry), `fake_syscalls_per_msg`,
  `fake_switches_per_msg`);
- an arm's environment scales them: `fake_env_speed`, `fake_env_p50`, `fake_env_syscalls`,
  `fake_env_switches`
  map "VAR=VALUE" to a factor (so configurations differ, and counted work differs per
  configuration: a sweep that copied one arm's counters to another would be caught);
  as in the real bench, a BENCH_* variable counts from the process's environment, never
  the arm's (the bench reads its own variables once per process);
- --role both prints one line; receiver / sender each print their half (the receiver the
  throughput slices' receiver_seconds, the sender the latency slices), with the same
  rounds, order and noise (all drawn from --seed), each with half the counters.

behaviour.json in the bench dir maps a size (or "size:role", or "size:counters=MODE" for
the runs of one --counters mode) to a misbehaviour: crash, hang, garbage, exit4,
missing-arm (one arm left out of the output), no-tracepoints (a host without tracefs:
--counters auto counts the software events only and says why in counters.unavailable). FAKE_ARMS_LOG
(environment): a file to which each process appends its argv as one JSON line.
"""
import argparse
import json
import os
import random
import sys
import threading
import time
from pathlib import Path

from testbed.bench import latency_histogram  # the fake runs with the testbed's own Python

HERE = Path(__file__).resolve().parent
SOFTWARE = ["task_clock_ns", "context_switches", "cpu_migrations", "page_faults"]
EVENTS = {"software": SOFTWARE, "auto": [*SOFTWARE, "syscalls", "syscalls_read", "syscalls_write"]}


def options():
    p = argparse.ArgumentParser()
    for flag in ("--transport", "--mode", "--role", "--bind", "--connect", "--control", "--pin-sender",
                 "--pin-receiver", "--process-model", "--counters", "--redeal"):
        p.add_argument(flag)
    for flag in ("--size", "--warmup", "--lat-warmup", "--io-threads", "--hwm", "--timeout-ms", "--rounds",
                 "--slice-count", "--slice-lat-count", "--warmup-rounds", "--seed"):
        p.add_argument(flag, type=int)
    p.add_argument("--lib", action="append", default=[])
    p.add_argument("--arm", action="append", default=[])
    a = p.parse_args()
    a.role = a.role or "both"
    return a


def misbehave(behaviour: str) -> None:
    if behaviour == "crash":
        print("fake arms bench: crashing on purpose", file=sys.stderr)
        sys.stderr.flush()
        os.abort()
    if behaviour == "hang":
        time.sleep(3600)
    if behaviour == "garbage":
        print("this is not json")
        sys.exit(0)
    if behaviour == "exit4":
        print("fake arms bench: lost messages", file=sys.stderr)
        sys.exit(4)


def parse_arm(text: str) -> dict:
    label, _, rest = text.partition("=")
    lib, _, env_text = rest.partition(":")
    env = dict(kv.split("=", 1) for kv in env_text.split(",") if kv)
    return {"label": label, "lib": lib, "env": env}


def factor(info: dict, table: str, env: dict) -> float:
    out = 1.0
    env = {**{k: v for k, v in env.items() if not k.startswith("BENCH_")},
           **{k: v for k, v in os.environ.items() if k.startswith("BENCH_")}}
    for key, value in env.items():
        out *= info.get(table, {}).get(f"{key}={value}", 1.0)
    return out


def latency_summary(n: int, p50: float, rng) -> dict:
    """A latency slice as the bench reports it: n round trips around p50 (us), the
    percentiles read from their own histogram so the two agree (validate_arms checks)."""
    values = [max(1, round(p50 * 1000 * (1 + abs(rng.gauss(0, 0.3)) if rng.random() < 0.2 else p50 * 1000)))
              for _ in range(n)]
    h = latency_histogram.from_values(values)
    out = {k: h.percentile(q) / 1000 for k, q in (("min", 0.0), ("p50", 0.5), ("p90", 0.9), ("p99", 0.99),
                                                   ("p999", 0.999), ("max", 1.0))}
    out.update(mean=sum(values) / len(values) / 1000, unit="us", measure="rtt/2",
               histogram=latency_histogram.to_json(h))
    out["mean"] = min(max(out["mean"], out["min"]), out["max"])
    return out


def cpus_of(tid: int) -> str:
    for line in Path(f"/proc/self/task/{tid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return ""


def parse_cpus(text: str) -> set:
    out = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        out.update(range(int(low), int(high or low) + 1))
    return out


def threads_of(a) -> list:
    """Pin as the bench does (a role process pins itself whole; one process pins each
    side's thread) and report the affinities seen."""
    if a.role != "both":
        pin = a.pin_receiver if a.role == "receiver" else a.pin_sender
        if pin:
            os.sched_setaffinity(0, parse_cpus(pin))
        tid = threading.get_native_id()
        return [{"tid": tid, "name": a.role, "role": a.role, "cpus": cpus_of(tid)}]
    out = []

    def side(role, pin):
        if pin:
            os.sched_setaffinity(0, parse_cpus(pin))
        tid = threading.get_native_id()
        out.append({"tid": tid, "name": role, "role": role, "cpus": cpus_of(tid)})

    for role, pin in (("sender", a.pin_sender), ("receiver", a.pin_receiver)):
        t = threading.Thread(target=side, args=(role, pin))
        t.start()
        t.join()
    return out


def counters(n: int, syscalls_per_msg: float, switches_per_msg: float, share: float, seconds: float,
             events: list) -> dict:
    syscalls = round(n * syscalls_per_msg * share)
    every = {"task_clock_ns": round(seconds * 1e9 * share), "cpu_migrations": 0,
             "context_switches": round(n * switches_per_msg * share),
             "page_faults": 0, "syscalls": syscalls, "syscalls_read": syscalls // 2,
             "syscalls_write": syscalls - syscalls // 2}
    return {e: every[e] for e in events}


def slices_for(a, libs: dict, arms: list, rng_order, rng_noise) -> list:
    rounds = []
    kinds = {"thr": ["thr"], "lat": ["lat"], "both": ["thr", "lat"]}[a.mode or "both"]
    share = 1.0 if a.role == "both" else 0.5
    offsets = [rng_noise.gauss(0, libs[arm["lib"]].get("fake_run_noise", 0.0)) for arm in arms]
    warm = 1 if a.warmup_rounds is None else a.warmup_rounds
    for kind in kinds:  # with both: every throughput round, then every latency round (the contract)
        for r in range(warm + a.rounds):
            order = list(range(len(arms)))
            rng_order.shuffle(order)
            slices = []
            for i in order:
                arm, info = arms[i], libs[arms[i]["lib"]]
                noise = (1 + offsets[i]) * (1 + rng_noise.gauss(0, info.get("fake_noise", 0.0)))
                syscalls = (info.get("fake_syscalls_per_msg", 2.0)
                            * factor(info, "fake_env_syscalls", arm["env"]))
                switches = (info.get("fake_switches_per_msg", 0.1)
                            * factor(info, "fake_env_switches", arm["env"]))
                events = EVENTS[a.counters or "software"]
                if kind == "thr":
                    speed = (info.get("fake_msgs_per_sec", 1e6) * factor(info, "fake_env_speed", arm["env"])
                             * noise)
                    secs = a.slice_count / speed
                    s = {"arm": i, "kind": "thr", "count": a.slice_count,
                         "warmup_messages": max(1, a.slice_count // 20), "delivery": "lossless",
                         "counters": counters(a.slice_count, syscalls, switches, share, secs, events)}
                    if a.role in ("both", "receiver"):
                        s.update(receiver_seconds=secs, span_seconds=secs * 1.01)
                    if a.role in ("both", "sender"):
                        s["sender_seconds"] = secs * 0.98
                else:
                    p50 = info.get("fake_p50_us", 2.0) * factor(info, "fake_env_p50", arm["env"]) * noise
                    n = a.slice_lat_count
                    s = {"arm": i, "kind": "lat", "count": n, "warmup_messages": max(1, n // 10),
                         "counters": counters(n, syscalls, switches, share, n * p50 * 2e-6, events)}
                    if a.role in ("both", "sender"):
                        s.update(latency_summary(n, p50, rng_noise))
                slices.append(s)
            rounds.append({"kind": kind, "round": r, "warmup": r < warm, "order": order, "slices": slices})
    return rounds


def verify(a, rounds: list) -> dict:
    slices = [s for r in rounds for s in r["slices"]]
    out = {"ok": True, "method": "fake", "slices": len(slices)}
    if a.role != "sender":
        n = sum(s["count"] for s in slices if s["kind"] == "thr")
        out.update(received=n, expected=n)
    if a.role != "receiver":
        n = sum(s["count"] for s in slices if s["kind"] == "lat")
        out.update(lat_received=n, lat_expected=n)
    return out


def main() -> None:
    a = options()
    if os.environ.get("FAKE_ARMS_LOG"):
        with open(os.environ["FAKE_ARMS_LOG"], "a") as f:
            f.write(json.dumps({"role": a.role, "argv": sys.argv[1:],
                                "env": {k: v for k, v in os.environ.items()
                                        if k.startswith(("ZMQ_ASIO_", "BENCH_"))}}) + "\n")
    table = json.loads((HERE / "behaviour.json").read_text())
    behaviour = table.get(f"{a.size}:{a.role}", table.get(f"{a.size}:counters={a.counters}",
                                                          table.get(str(a.size), "ok")))
    if behaviour == "no-tracepoints":
        a.counters, a.unavailable = "software", {"syscalls": "tracefs not mounted (fake)"}
    misbehave(behaviour)
    libs = {}
    for spec in a.lib:
        label, _, path = spec.partition("=")
        libs[label] = json.loads(Path(path).read_text())
    arms = [parse_arm(t) for t in a.arm]
    rounds = slices_for(a, libs, arms, random.Random(a.seed), random.Random(a.seed + 1))
    shown = arms[:-1] if behaviour == "missing-arm" else arms
    paths = dict(spec.partition("=")[::2] for spec in a.lib)
    lib_list = [{"label": label, "path": paths[label], "loaded_from": paths[label],
                 "version": libs[label]["version"], "namespace": n + 1} for n, label in enumerate(libs)]
    info = [{"label": arm["label"], "lib": arm["lib"], "env": arm["env"],
             "library": {"name": arm["lib"], "version": libs[arm["lib"]]["version"],
                         "path": paths[arm["lib"]], "loaded_from": paths[arm["lib"]]}} for arm in shown]
    model = a.process_model or "one-process"
    print(json.dumps({
        "schema": "testbed.bench-arms/1", "role": a.role,
        "pattern": Path(sys.argv[0]).name[len("bench_arms_"):].upper(), "transport": a.transport,
        "msg_size": a.size, "libs": lib_list, "arms": info,
        "counters": {"mode": a.counters or "software", "source": "perf_event_open",
                     "events": EVENTS[a.counters or "software"],
                     **({"unavailable": a.unavailable} if getattr(a, "unavailable", None) else {})},
        "rounds": rounds, "verify": verify(a, rounds),
        "settings": {"hwm": a.hwm, "io_threads": a.io_threads, "clock": "fake", "process_model": model,
                     "mode": a.mode or "both",
                     "arms": {"rounds": a.rounds,
                              "warmup_rounds": 1 if a.warmup_rounds is None else a.warmup_rounds,
                              "slice_count": a.slice_count, "slice_lat_count": a.slice_lat_count,
                              "seed": a.seed}},
        "placement": {"sender": a.pin_sender, "receiver": a.pin_receiver}, "threads": threads_of(a),
        "env": {k: v for k, v in os.environ.items() if k.startswith(("ZMQ_ASIO_", "BENCH_"))}}))


if __name__ == "__main__":
    main()
