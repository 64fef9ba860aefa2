"""The measurement loop of one session of a run.

1. Minimum: `min_repetitions` of every cell, repetitions as the outer loop, blocks
   shuffled within one (seed recorded), every cell of a block (its libraries in each
   of its configurations) back to back, rotated by one at each repetition. A block's
   counts are calibrated just before its first batch (on the reference library in its
   first configuration), so all its configurations run the same counts.
2. Adaptive (when max_repetitions > min_repetitions): rounds over the configurations
   still undecided, one more batch each, until each is decided, capped or failing,
   or the run's time budget is spent.
3. Work per message: a pair of short extra runs per cell (work.py).

Counting runs ([run].counting_runs = N; counting.py): counting run k of a block right
after its minimum batch k (blocks layout: one one-arm run per cell of it), the ones
left (N above the minimum, a resume) right after the minimum; inside the budget, on
their own journal, never judged by time.

A block that [ceiling] selects (tcp/ipc at a declared size) also runs the host
ceiling probe in every one of its batches, among its cells (sweep/ceiling.py).

Every batch (one repetition of a block: its cells back to back) is
bracketed by the host speed reference (speedref.py) on the batch's CPUs. A pair whose
reference moved by more than the design's drift tolerance is marked host-drift in
speed.jsonl: its results stay in results.jsonl, the verdicts leave it out, and the
adaptive rounds count only usable pairs toward a look, so it is replaced by another
pair while the cap (which counts every pair run) and the budget allow.

Everything is derived from the files of the run directory (results, calibration,
work), so a resumed session continues exactly where the last one stopped.
"""
from __future__ import annotations

import dataclasses
import itertools
import random
from pathlib import Path

from testbed.records import counting_runs, run_writer
from testbed.records import slices as slicesmod
from testbed.records.run_writer import ResultStore, done_keys
from testbed.sweep import (
    adaptive,
    arms,
    arms_run,
    calibrate,
    ceiling,
    counting,
    execute,
    flamegraphs,
    placement,
    speedref,
    work,
    work_arms,
)
from testbed.sweep import plan as planmod
from testbed.sweep.adaptive import Group
from testbed.sweep.execute import Attempt, Counts


def groups_of(cells: list[planmod.Cell]) -> dict[str, Group]:
    """block id -> its Group: every library and configuration of one workload point,
    run back to back, looked at and stopped together."""
    out: dict[str, Group] = {}
    for c in cells:
        out.setdefault(c.block_id, Group(c.block_id, [])).cells.append(c)
    return out


class Loop:
    def __init__(self, ctx, rt: execute.Runtime, seed: int, judge: adaptive.Judge | None, progress,
                 results: ResultStore, work_setup: work.WorkSetup | None = None):
        self.ctx, self.exp, self.rt, self.seed = ctx, ctx.exp, rt, seed
        self.judge, self.progress, self.results, self.work_setup = judge, progress, results, work_setup
        self.design = ctx.design
        self.runnable = set(ctx.libs)
        self.records, _ = run_writer.records(ctx.run_dir)
        self.done = done_keys(self.records)
        self.cals = calibrate.load(ctx.run_dir)
        self.groups = groups_of(ctx.cells)
        self.spent = sum(r.get("wall_seconds", 0.0) for r in self.records) + sum(
            p.get("wall_seconds", 0.0) for cal in self.cals.values() for p in cal.probes)
        speed = run_writer.lines(ctx.run_dir, "speed")
        self.excluded = speedref.excluded_pairs(speed)
        self.spent += sum(speedref.seconds_of(ln) for ln in speed)
        self.probed = ceiling.done(ctx.run_dir)
        probes = run_writer.lines(ctx.run_dir, "ceiling")
        self.spent += sum(ln.get("wall_seconds", 0.0) for ln in probes)
        self.roles = {e.label: ("reference" if e.label == self.exp.reference else "candidate")
                      for e in self.exp.libraries}
        self.arms_bench_dir = arms.arms_bench_dir() \
            if ctx.layout == arms.ARMS or self.design.counting_runs else None
        counted_before = run_writer.lines(ctx.run_dir, "counting")
        self.counted = counting_runs.done(counted_before)
        self.spent += sum(r.get("wall_seconds", 0.0) for r in counted_before)

    # ------------------------------------------------------------ phases

    def minimum_pairs(self) -> list[tuple[planmod.Cell, int]]:
        pairs = planmod.order(self.ctx.cells, self.design.min_repetitions, self.seed, self.exp.shuffle,
                              self.exp.interleave)
        return [(c, r) for c, r in pairs if c.library_name in self.runnable]

    def run(self) -> None:
        for _key, batch in itertools.groupby(self.minimum_pairs(), key=lambda p: (p[0].block_id, p[1])):
            group = self.groups[_key[0]]
            if group.stop_reason:
                continue
            if self.over_budget():
                return self.stop_all("budget")
            self.run_batch(group, list(batch))
            self.counting_run(group, _key[1])
        for k in range(self.design.counting_runs):
            for group in self.groups.values():
                if self.over_budget():
                    return self.stop_all("budget")
                self.counting_run(group, k)
        for group in self.groups.values():
            self.evaluate(group)
        if self.design.adaptive:
            self.adaptive_rounds()

    def adaptive_rounds(self) -> None:
        rng = random.Random(self.seed + 1)
        while True:
            active = [g for g in self.groups.values() if g.stop_reason is None]
            if not active:
                return
            rng.shuffle(active)
            for group in active:
                n = adaptive.reps_done(group, self.done, self.runnable)
                if n >= self.design.max_repetitions:  # never past the cap, whatever evaluate() said
                    group.stop_reason = "cap"
                    continue
                target = self.design.next_look_point(self.usable(group, n))
                # Up to the next look in usable pairs: a host-drift pair is replaced by
                # one more, but every pair run counts toward the cap.
                while n < self.design.max_repetitions and self.usable(group, n) < target:
                    if self.over_budget():
                        return self.stop_all("budget")
                    batch = group.batch(n, self.runnable)
                    self.progress.grow(len(batch))
                    self.run_batch(group, batch)
                    if group.stop_reason:
                        break
                    n = adaptive.reps_done(group, self.done, self.runnable)
                self.evaluate(group)

    def usable(self, group: Group, n: int) -> int:
        """Pairs among the first n that the verdicts use (not marked host-drift)."""
        return n - sum((group.group, rep) in self.excluded for rep in range(n))

    def over_budget(self) -> bool:
        budget = self.design.time_budget_s
        return budget is not None and self.spent >= budget

    def stop_all(self, reason: str) -> None:
        """Stop every configuration still running. Its verdicts stay those of its last
        planned look: an extra look here would be one more chance of a false call."""
        for group in self.groups.values():
            if group.stop_reason is None:
                group.stop_reason = reason

    # ------------------------------------------------------------ batches

    def run_batch(self, group: Group, pairs: list[tuple[planmod.Cell, int]]) -> None:
        if self.ctx.layout == arms.ARMS:
            return self.run_arms_batch(group, pairs)
        todo = [(c, r) for c, r in pairs if (c.cell_id, r) not in self.done]
        probe = self.probe_due(group, pairs)
        if not todo:
            if probe is not None:  # resumed after the batch's cells, before its probe
                self.run_probe(probe, pairs)
            return
        counts = self.counts_for(group)
        before = self.speed_reference(todo[0][0])
        probe_at = ceiling.position(len(todo), todo[0][1]) if probe is not None else -1
        for i, (cell, rep) in enumerate(todo):
            if i == probe_at:
                self.run_probe(probe, pairs)
            lib = self.ctx.libs[cell.library_name]
            att = Attempt(cell, rep, lib.bench_binary(cell.pattern), lib.info.get("build_id", ""),
                          self.roles[cell.library])
            rec = execute.run_cell(att, self.rt, counts)
            self.annotate(rec, counts)
            self.store(rec)
            self.maybe_flamegraph(cell, rep, lib, counts)
        if probe_at == len(todo):
            self.run_probe(probe, pairs)
        if before is not None:
            self.close_pair(group, todo, before)
        if adaptive.failures(group, self.records) >= adaptive.FAILURE_LIMIT:
            group.stop_reason = "failing"

    def run_arms_batch(self, group: Group, pairs: list[tuple[planmod.Cell, int]]) -> None:
        """One arms run: every available cell of the block in one process pair, one
        record per cell. A run cut off half-way through storing its records (kill -9)
        runs again whole: its cells' records must come from one process pair."""
        if not pairs:
            return
        rep = pairs[0][1]
        asked = {c.cell_id for c, _ in pairs}  # in plan order: arms.run_plan counterbalances
        cells = [c for c in group.cells if c.cell_id in asked and c.library_name in self.runnable]
        if not cells:
            return
        probe = self.probe_due(group, pairs)
        if all((c.cell_id, rep) in self.done for c in cells):
            if probe is not None:
                self.run_probe(probe, pairs)
            return
        counts = self.counts_for(group)
        before = self.speed_reference(cells[0])
        if probe is not None and rep % 2 == 0:
            self.run_probe(probe, pairs)
        plan = arms.run_plan(cells, rep, self.seed)
        libs = {c.library: self.ctx.libs[c.library_name] for c in cells}
        roles = {label: self.roles[label] for label in libs}
        records, slices = arms_run.run(plan, rep, self.rt, counts, libs, self.arms_bench_dir, roles,
                                       self.design)
        if slices is not None:
            slicesmod.append(self.ctx.run_dir, slices)
        for rec in records:
            self.annotate(rec, counts)
            self.store(rec)
        for cell in plan.cells:
            self.maybe_flamegraph(cell, rep, self.ctx.libs[cell.library_name], counts)
        if probe is not None and rep % 2 == 1:
            self.run_probe(probe, pairs)
        if before is not None:
            self.close_pair(group, [(c, rep) for c in plan.cells], before)
        if adaptive.failures(group, self.records) >= adaptive.FAILURE_LIMIT:
            group.stop_reason = "failing"

    def counting_run(self, group: Group, k: int) -> None:
        """Counting run k of the block (counting.py), unless recorded or not wanted: one
        arms run of its cells, or (blocks layout) one one-arm run per cell, each cell
        counted in a process of its own (a bench variable differs between them)."""
        cells = [c for c in group.cells if c.library_name in self.runnable]
        if k >= self.design.counting_runs or not cells or not counting.due(cells, k, self.counted):
            return
        counts = self.counts_for(group)
        if self.ctx.layout == arms.ARMS:
            return self.count_cells(cells, k, counts)
        for cell in cells:
            self.count_cells([cell], k, counting.blocks_counts(counts, self.design, cell.msg_size))

    def count_cells(self, cells: list[planmod.Cell], k: int, counts: Counts) -> None:
        """One counting run of these cells (all arms of one run), stored per cell."""
        if not counting.due(cells, k, self.counted):
            return
        libs = {c.library: self.ctx.libs[c.library_name] for c in cells}
        self.progress.grow(len(cells))
        records = counting.run(cells, k, self.rt, counts, libs, self.arms_bench_dir,
                               {label: self.roles[label] for label in libs}, self.design, self.seed)
        for rec in records:
            self.annotate(rec, counts)
            run_writer.append(self.ctx.run_dir, "counting", rec)
            self.counted.add((rec["cell_id"], k))
            self.spent += rec.get("wall_seconds", 0.0)
            label = f"{self.ctx.cell_by_id[rec['cell_id']].label} counting run {k}"
            self.progress.advance(label, rec["status"])
            if rec["status"] != "ok":
                self.progress.say(f"  failed: {label}: {rec['failure']}")

    def annotate(self, rec: dict, counts: Counts) -> None:
        """What the record says about how its counts were chosen."""
        if counts.calibrated:
            rec["target_window_s"] = self.design.slice_s if self.ctx.layout == arms.ARMS \
                else self.design.min_window_s
            if self.design.lat_warmup_s:
                rec["lat_warmup_s"] = self.design.lat_warmup_s
            if self.design.tail_round_trips:
                rec["tail_round_trips"] = self.design.tail_round_trips

    # ------------------------------------------------------------ host ceiling

    def probe_due(self, group: Group, pairs: list[tuple[planmod.Cell, int]]) -> planmod.Cell | None:
        """The cell whose transport, size, placement and process model this batch's
        probe copies, or None (no [ceiling] for it, or probed already)."""
        if not pairs or (group.group, pairs[0][1]) in self.probed:
            return None
        return next((c for c, _ in pairs if c.library_name in self.runnable and ceiling.bounds(self.exp, c)),
                    None)

    def probe_binary(self) -> Path:
        """ceiling_probe from the reference's bench build (it links no library, so any
        build's would do; the reference's is the one every run has, else any built)."""
        names = [e.name for e in self.exp.libraries if e.label == self.exp.reference] + sorted(self.ctx.libs)
        lib = next(self.ctx.libs[n] for n in names if n in self.ctx.libs)  # a batch ran: one is built
        return lib.bench_dir / ceiling.PROBE_BINARY

    def run_probe(self, cell: planmod.Cell, pairs: list[tuple[planmod.Cell, int]]) -> None:
        rep = pairs[0][1]
        line = ceiling.measure(self.exp, cell, rep, [c.cell_id for c, _ in pairs], self.probe_binary(),
                               self.rt.cpus, self.rt.workdir)
        ceiling.append(self.ctx.run_dir, line)
        self.probed.add((cell.block_id, rep))
        self.spent += line["wall_seconds"]
        if line["status"] != "ok":
            self.progress.say(f"  ceiling probe failed: {cell.transport} {cell.msg_size}B {cell.placement} "
                              f"{cell.process_model} rep{rep}: {line['failure']}")

    # ------------------------------------------------------------ host speed reference

    def speed_reference(self, cell: planmod.Cell) -> dict | None:
        """The reference on the CPUs this cell's bench will use (None: switched off,
        or the placement cannot be given here, which the cell's own record reports)."""
        if not self.design.speed_reference:
            return None
        try:
            pins = placement.pins_for(cell.placement, self.rt.cpus)
        except ValueError:
            return None
        out = speedref.measure(speedref.bench_cpus(pins, self.rt.cpus))
        out["at"] = speedref.timestamp()
        return out

    def close_pair(self, group: Group, todo: list[tuple[planmod.Cell, int]], before: dict) -> None:
        after = self.speed_reference(todo[0][0])
        if after is None:
            return
        rep = todo[0][1]
        line = speedref.pair_line(group.group, rep, [c.cell_id for c, _ in todo], before, after,
                                  self.design.drift_tolerance, before["at"])
        run_writer.append(self.ctx.run_dir, "speed", line)
        self.spent += speedref.seconds_of(line)
        if line["exclusion"]:
            self.excluded.add((group.group, rep))
            self.progress.say(f"  {group.group} rep{rep}: host speed moved {100 * line['drift']:.1f}% "
                              f"within the pair (> {100 * line['tolerance']:g}%): excluded as "
                              f"{line['exclusion']}")
        else:
            self.excluded.discard((group.group, rep))

    def store(self, rec: dict) -> None:
        self.results.append(rec)
        self.records.append(rec)
        self.done.add((rec["cell_id"], rec["repetition"]))
        self.spent += rec.get("wall_seconds", 0.0)
        label = f"{self.ctx.cell_by_id[rec['cell_id']].label} rep{rec['repetition']}"
        self.progress.advance(label, rec["status"])
        if rec["status"] != "ok":
            self.progress.say(f"  failed: {label}: {rec['failure']}")

    def maybe_flamegraph(self, cell, rep: int, lib, counts: Counts) -> None:
        selectors = self.exp.perf_record
        if rep == 0 and selectors and any(planmod.matches(s, cell.fields()) for s in selectors):
            m = self.ctx.manifest
            entry = flamegraphs.record(cell, lib, self.exp, self.ctx.run_dir, counts, self.rt.cpus)
            m.flamegraphs.append(entry)
            m.save(self.ctx.run_dir)

    def evaluate(self, group: Group) -> None:
        """Look at the group's verdicts, only at the design's planned looks (each look
        is one chance of a false call, paid for in look_confidence), and decide
        whether it stops."""
        n = adaptive.reps_done(group, self.done, self.runnable)
        if not any(c.library_name in self.runnable for c in group.cells):
            group.stop_reason = "library-missing"
        at_cap = n >= self.design.max_repetitions
        if group.stop_reason or not (self.design.is_look(self.usable(group, n)) or at_cap):
            return
        group.decisions = self.judge.judge(group, self.records, self.excluded) if self.judge else []
        if adaptive.all_decided(group.decisions):
            group.stop_reason = "decided"
        elif self.reference_cell(group) is None:
            group.stop_reason = "reference-missing"
        elif at_cap:
            group.stop_reason = "cap" if self.design.adaptive else "fixed"

    # ------------------------------------------------------------ calibration

    def counts_for(self, group: Group) -> Counts:
        first = group.cells[0]
        declared = execute.declared_counts(first)
        if first.kind != "bench" or self.design.min_window_s <= 0:
            return declared
        if group.group not in self.cals:
            self.cals[group.group] = self.calibrate(group, declared)
        return self.cals[group.group].counts()

    def reference_cell(self, group: Group) -> planmod.Cell | None:
        return next((c for c in group.cells if c.library == self.exp.reference
                     and c.library_name in self.runnable), None)

    def calibrate(self, group: Group, declared: Counts) -> calibrate.Calibration:
        ref = self.reference_cell(group) or next(c for c in group.cells if c.library_name in self.runnable)
        lib = self.ctx.libs[ref.library_name]
        binary, build_id = lib.bench_binary(ref.pattern), lib.info.get("build_id", "")

        def probe(counts: Counts) -> dict:
            return execute.run_cell(Attempt(ref, -1, binary, build_id, "probe"), self.rt, counts)

        if self.ctx.layout == arms.ARMS:
            cal = calibrate.calibrate_slices(group.group, ref.library, declared, self.design, probe,
                                             msg_size=ref.msg_size)
        else:
            cal = calibrate.calibrate(group.group, ref.library, declared, self.design.min_window_s, probe,
                                      lat_warmup_s=self.design.lat_warmup_s,
                                      tail_round_trips=self.design.tail_round_trips)
        calibrate.append(self.ctx.run_dir, cal)
        self.spent += sum(p["wall_seconds"] for p in cal.probes)
        if cal.status != "calibrated":
            self.progress.say(f"  calibration of {ref.label}: {cal.reason}; declared counts used")
        return cal

    # ------------------------------------------------------------ work per message

    def measure_work(self) -> None:
        """Work per message of every selected cell, each measured on its own runs: never
        one cell's figures for another's (a configuration changes the work: security-cost
        57a5 showed NULL's instruction counts under CURVE when they were shared by library)."""
        setup = self.work_setup
        if setup is None or setup.method is None or self.exp.kind != "bench":
            return
        done = work.load(self.ctx.run_dir)
        if self.ctx.layout == arms.ARMS:
            return self.measure_work_arms(done)
        rt = self.work_runtime(setup)
        for group in self.groups.values():
            counts = self.cals[group.group].counts() if group.group in self.cals else None
            for cell in group.cells:
                if not self.wants_work(cell) or cell.cell_id in done:
                    continue
                timed = (counts or execute.declared_counts(cell)).count
                n = work.messages_for(setup.method, cell.msg_size, timed)
                work.append(self.ctx.run_dir, self.work_pair(cell, rt, setup.method, n))

    def measure_work_arms(self, done: dict) -> None:
        """One callgrind arms run per block: every selected cell an arm (work_arms.py)."""
        for group in self.groups.values():
            cells = [c for c in group.cells if self.wants_work(c) and c.cell_id not in done]
            if not cells:
                continue
            counts = self.cals[group.group].counts() if group.group in self.cals else \
                execute.declared_counts(cells[0])
            plan = arms.run_plan(cells, 0, self.seed)
            libs = {c.library: self.ctx.libs[c.library_name] for c in cells}
            recs = work_arms.measure(plan, self.rt, counts, libs, self.arms_bench_dir, self.design)
            for rec in recs:
                work.append(self.ctx.run_dir, rec)
            ok = sum(r["status"] == "ok" for r in recs)
            self.progress.say(f"  work per message (callgrind, one arms run): {cells[0].pattern} "
                              f"{cells[0].transport} {cells[0].msg_size}B: {ok} of {len(recs)} arms measured")

    def wants_work(self, cell) -> bool:
        selectors = self.exp.perf_work
        if selectors and not any(planmod.matches(s, cell.fields()) for s in selectors):
            return False
        return self.has_ok(cell)

    def has_ok(self, cell) -> bool:
        return any(r["cell_id"] == cell.cell_id and r["status"] == "ok" for r in self.records)

    def work_runtime(self, setup: work.WorkSetup) -> execute.Runtime:
        exp = self.exp
        if setup.method == "callgrind":
            factor = work.CALLGRIND_TIMEOUT_FACTOR
            exp = dataclasses.replace(exp, timeout_s=exp.timeout_s * factor,
                                      bench_timeout_ms=min(3_600_000, exp.bench_timeout_ms * factor))
        return dataclasses.replace(self.rt, exp=exp, perf=setup.counter)

    def work_pair(self, cell, rt: execute.Runtime, method: str, n: int) -> dict:
        lib = self.ctx.libs[cell.library_name]
        att = Attempt(cell, -2, lib.bench_binary(cell.pattern), lib.info.get("build_id", ""), "work")
        small, large = (execute.run_cell(att, rt, Counts(k, 1, mode="thr")) for k in (n, 2 * n))
        self.progress.say(f"  work per message ({method}): {cell.label}: "
                          f"{small['status']}/{large['status']}")
        return work.record(cell, method, n, small, large)

