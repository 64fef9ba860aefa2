"""The faults experiment loop: every cell x repetition x library, the two libraries of
one cell and repetition back to back in a seeded random order (each pair under the
measure lock when one is named: detection and recovery are timings; with
[run].concurrency > 1, that many pairs overlap, each slot with its own proxy server,
and the lock is held for the whole run), one JSON line per cell run appended as it
finishes.

Run directory (results/<experiment>/<run-id>/, opened through
records/fault_run_dir.py): experiment.toml (the copy the run used), faults-run.json
(the run's manifest: libraries, proxy, host, status), cells.jsonl (one record per cell
run), cells/<tag>/ (the raw logs of the cell runs that found anything wrong; clean
ones are removed once summarized), proxy.log, report.md. An interrupted run is
resumed with --resume: the cell runs already in cells.jsonl are not repeated.
"""

from __future__ import annotations

import fcntl
import os
import platform
import random
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from testbed.records.fault_run_dir import FaultRunDir
from testbed.toolchain import go_tools, libraries
from testbed.toolchain.progress import Progress

from . import accounting, cell, driver, proxy
from .config import FaultsExperiment

# Set to a lock file (e.g. /work/measure.lock) to hold it around each pair of cell runs.
LOCK_ENV = "TESTBED_MEASURE_LOCK"


def new_run_id() -> str:
    return f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{random.randrange(16**4):04x}"


@contextmanager
def measure_lock() -> Iterator[None]:
    path = os.environ.get(LOCK_ENV)
    if not path:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def done_runs(run_dir: Path) -> set[tuple[str, str, int]]:
    """(cell key, library label, repetition) of every cell run already recorded."""
    # A torn line from an interrupted run is no record (records/fault_run_dir.py): that run is redone.
    return {(r["key"], r["library"], r["repetition"]) for r in FaultRunDir.at(run_dir).records()}


def proxy_seed_key(seed: int, slot: int) -> str:
    """What slot `slot`'s toxiproxy-server seeds its toxics from (proxy.server_seed):
    the run's seed and the slot."""
    return f"{seed}#slot{slot}"


def plan(exp: FaultsExperiment, seed: int) -> list[tuple[int, object, list]]:
    """(repetition, cell, library entries in this pair's order): every repetition
    goes over every cell before the next starts; cells and library order shuffled."""
    rng = random.Random(seed)
    out = []
    for rep in range(exp.repetitions):
        cells = exp.cells()
        rng.shuffle(cells)
        for c in cells:
            libs = list(exp.libraries)
            rng.shuffle(libs)
            out.append((rep, c, libs))
    return out


def manifest(
    exp: FaultsExperiment, run_id: str, seed: int, found: dict, binaries: dict, proxy_info: dict
) -> dict:
    return {
        "schema": "testbed.faults-run/1",
        "experiment": exp.name,
        "kind": exp.kind,
        "run_id": run_id,
        "profile": exp.profile,
        "question": exp.question,
        "toml_sha256": exp.toml_sha256,
        "experiment_source": str(exp.path),
        "seed": seed,
        "repetitions": exp.repetitions,
        "cells": len(exp.cells()),
        "reference": exp.reference,
        "libraries": [
            {
                "label": e.label,
                "name": e.name,
                "build_id": found[e.name].info.get("build_id"),
                "version": found[e.name].info.get("version"),
                "driver": str(binaries[e.label]),
            }
            for e in exp.libraries
        ],
        "proxy": proxy_info,
        "lock": os.environ.get(LOCK_ENV),
        "timing_margin": exp.timing_margin,
        "timing_margin_reason": exp.timing_margin_reason,
        "confidence": exp.confidence,
        "concurrency": exp.concurrency,
        "concurrency_reason": exp.concurrency_reason,
        "traffic": asdict(exp.traffic),
        "heartbeat": asdict(exp.heartbeat),
        "schedule": asdict(exp.schedule),
        "faults": {n: asdict(f) for n, f in exp.faults.items()},
        "host": {
            "node": platform.node(),
            "kernel": platform.release(),
            "cpus": os.cpu_count(),
            "load_at_start": os.getloadavg()[0],
        },
        "argv": sys.argv,
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "status": "running",
    }


def libraries_and_drivers(exp: FaultsExperiment, build: bool, progress: Progress) -> tuple[dict, dict]:
    """(name -> LibraryBuild, label -> driver binary); a library that cannot be built
    stops the run (a faults report with one library would answer nothing)."""
    found, binaries = {}, {}
    for e in exp.libraries:
        try:
            lib = (
                libraries.ensure_built(e.name, bench=False, progress=progress)
                if build
                else libraries.find_built(e.name, bench=False)
            )
        except libraries.LibraryUnavailable as exc:
            raise SystemExit(f"testbed run: {exc}") from None
        found[e.name] = lib
        binaries[e.label] = driver.ensure(lib, progress) / driver.BINARY
    return found, binaries


def proxy_binary(progress: Progress) -> tuple[Path, str]:
    """The proxy setup built (building it now if setup never ran: a fresh clone)."""
    found = go_tools.proxy_binary()
    if found is None:
        reason = go_tools.ensure(progress)
        found = go_tools.proxy_binary()
        if found is None:
            raise SystemExit(f"testbed run: no fault proxy: {reason}")
    return found


def one_line(label: str, rec: dict) -> str:
    if rec["error"]:
        return f"{label}: ERROR {rec['error']}"
    a, t = rec["accounting"], rec["timing"]
    flags = [k for k in ("abort", "hang") if rec[k]] + (["error"] if rec["errors"] else [])
    fmt = lambda v: "-" if v is None else f"{v:.0f}"  # noqa: E731
    return (
        f"{label}: {a['delivered']}/{a['sent']} delivered, lost {a['lost']} dup {a['duplicated']} "
        f"reord {a['reordered']} corrupt {a['corrupted']}; detect {fmt(t['detect_ms'])} ms, "
        f"resume {fmt(t['resume_ms'])} ms" + (f" [{', '.join(flags)}]" if flags else "")
    )


def run(exp: FaultsExperiment, run_dir: Path, seed: int, build: bool = True, resume: bool = False) -> int:
    progress = Progress()
    found, binaries = libraries_and_drivers(exp, build, progress)
    binary, provenance = proxy_binary(progress)
    run_dir.mkdir(parents=True, exist_ok=True)
    run = FaultRunDir.at(run_dir)
    if not resume:
        run.keep_toml(exp.path)
    done = done_runs(run_dir)
    todo = [
        (rep, c, libs)
        for rep, c, libs in plan(exp, seed)
        if any((c.key(), e.label, rep) not in done for e in libs)
    ]
    slots = Slots(exp, run_dir, binaries, done, todo, progress, seed)
    # Overlapping pairs cannot each take the lock: the whole run holds it instead.
    lock = measure_lock() if exp.concurrency > 1 else nullcontext()
    with lock, proxy.running(binary, run.proxy_log(), proxy_seed_key(seed, 0)) as server:
        info = {"binary": str(binary), "provenance": provenance, "version": server.client.version()}
        m = manifest(exp, run_dir.name, seed, found, binaries, info)
        run.write_manifest(m)
        progress.say(
            f"testbed run: {exp.name} ({exp.profile}): {len(exp.cells())} cells x {exp.repetitions} "
            f"repetitions x {len(exp.libraries)} libraries; {len(todo)} pairs to run, "
            f"{exp.concurrency} at a time; results in {run_dir}"
        )
        try:
            slots.run(server, binary)
        except KeyboardInterrupt:
            slots.stop.set()
            slots.join()
            m.update(status="interrupted", ended=datetime.now(UTC).isoformat(timespec="seconds"))
            run.write_manifest(m)
            progress.say(
                f"testbed run: interrupted; resume with ./testbed run {exp.path.parent.name} "
                f"--resume {run_dir}"
            )
            return 130
    if slots.failed:
        raise slots.failed[0]
    m.update(status="complete", ended=datetime.now(UTC).isoformat(timespec="seconds"))
    run.write_manifest(m)
    return 0


class Slots:
    """Runs the pairs of `todo`, `exp.concurrency` at a time. Slot 0 uses the run's
    proxy server; every other slot starts its own, so a server restarted after a
    wedge (proxy.Server) never takes another slot's connections with it. The two
    libraries of one pair still run back to back in one slot, so both meet the same
    neighbours; each record says how many cell runs were in flight when it began."""

    def __init__(
        self, exp, run_dir: Path, binaries: dict, done: set, todo: list, progress: Progress, seed: int
    ):
        self.exp, self.run_dir, self.binaries, self.done = exp, run_dir, binaries, done
        self.seed = seed  # the run's: each cell run's seeded draws derive from it (cell.draw_key)
        self.todo = list(enumerate(todo, 1))
        self.total = len(todo)
        self.progress = progress
        self.guard = threading.Lock()  # the queue, the in-flight count, cells.jsonl
        self.stop = threading.Event()
        self.in_flight = 0
        self.failed: list[BaseException] = []
        self.threads: list[threading.Thread] = []

    def run(self, server: proxy.Server, binary: Path) -> None:
        for slot in range(self.exp.concurrency):
            t = threading.Thread(target=self._slot, args=(slot, server, binary), daemon=True)
            self.threads.append(t)
            t.start()
        self.join()

    def join(self) -> None:
        for t in self.threads:
            while t.is_alive():
                t.join(0.2)  # short waits: Ctrl-C reaches the main thread

    def _next(self):
        with self.guard:
            if self.stop.is_set() or not self.todo:
                return None
            return self.todo.pop(0)

    def _slot(self, slot: int, server: proxy.Server, binary: Path) -> None:
        try:
            if slot == 0:
                self._work(server)
            else:
                log = FaultRunDir.at(self.run_dir).proxy_log(slot)
                with proxy.running(binary, log, proxy_seed_key(self.seed, slot)) as own:
                    self._work(own)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            self.failed.append(exc)
            self.stop.set()

    def _work(self, server: proxy.Server) -> None:
        while (item := self._next()) is not None:
            n, (rep, c, libs) = item
            for e in libs:
                if (c.key(), e.label, rep) in self.done or self.stop.is_set():
                    continue
                with self.guard:
                    self.in_flight += 1
                    neighbours = self.in_flight - 1
                try:
                    rec = run_one(
                        self.exp,
                        c,
                        e,
                        rep,
                        self.binaries[e.label],
                        server,
                        self.run_dir,
                        self.seed,
                        neighbours,
                        self.guard,
                    )
                finally:
                    with self.guard:
                        self.in_flight -= 1
                self.progress.say(f"[{n}/{self.total}] rep {rep} {c.key()} " + one_line(e.label, rec))


def _failed(c, why: str) -> dict:
    return {
        "cell": {"pattern": c.pattern, "security": c.security, "heartbeat": c.heartbeat, "fault": c.fault},
        "error": why,
        "accounting": None,
        "timing": None,
        "resources": None,
        "abort": False,
        "hang": False,
        "errors": [],
        "processes": [],
    }


def run_one(
    exp: FaultsExperiment,
    c,
    entry,
    rep: int,
    binary: Path,
    server: proxy.Server,
    run_dir: Path,
    seed: int,
    neighbours: int = 0,
    guard: threading.Lock | None = None,
) -> dict:
    """One cell run; a proxy whose API stops answering is restarted and the run done
    again (once), the failure kept in the record."""
    tag = f"{c.key().replace('/', '_')}_{entry.label}_r{rep}"
    work = FaultRunDir.at(run_dir).cell_logs(tag)
    started = time.time()
    failures: list[str] = []
    for _attempt in (1, 2):
        try:
            rec = cell.run(exp, c, binary, server.client, work, tag, rep, seed)
            rec["error"] = None
            break
        except proxy.ProxyError as exc:
            failures.append(str(exc))
            server.restart()
            rec = _failed(c, f"proxy: {exc}")
        except cell.CellError as exc:
            server.client.reset()
            rec = _failed(c, str(exc))
            break
    rec["proxy_failures"] = failures
    rec.update(
        key=c.key(),
        library=entry.label,
        library_name=entry.name,
        repetition=rep,
        wall_s=round(time.time() - started, 3),
        neighbours=neighbours,  # other cell runs in flight when this one began
    )
    if (
        rec["error"] is None
        and accounting.clean(rec["accounting"])
        and not (rec["abort"] or rec["hang"] or rec["errors"])
    ):
        shutil.rmtree(work, ignore_errors=True)  # nothing to look at: keep the record only
    else:
        rec["logs"] = str(work.relative_to(run_dir))
    with guard or nullcontext():
        FaultRunDir.at(run_dir).append(rec)
    return rec
