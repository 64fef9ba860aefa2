"""`perf stat` around each cell, and optional `perf record` flamegraphs.

perf is an aid, never a gate: if it is missing, forbidden (perf_event_paranoid) or an
event is not supported on this host, that is detected once, recorded in the manifest
and warned about once, and the benchmark runs without it.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from testbed.toolchain.system import tool_path


@dataclass
class PerfSetup:
    available: bool
    reason: str = ""
    events: list[str] = field(default_factory=list)        # counted in every cell
    unsupported: list[str] = field(default_factory=list)   # requested, not countable here
    version: str = ""

    signals_in_stderr = True  # perf stat exits 0 when its workload dies of a signal

    def as_manifest(self) -> dict:
        return {"available": self.available, "reason": self.reason, "events": self.events,
                "unsupported": self.unsupported, "version": self.version}

    def prefix(self, out_file: Path) -> list[str]:
        return stat_prefix(self, out_file)

    def read(self, out_file: Path) -> dict:
        return cell_perf(self, out_file)


def parse_stat(text: str) -> dict[str, dict]:
    """Parse `perf stat -x,` output: value,unit,event,run-time,pct,... per line.
    Uncountable events come back as {"value": None, "status": "<not supported>"}."""
    events: dict[str, dict] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(",")
        if len(parts) < 3:
            continue
        raw, unit, name = parts[0], parts[1], parts[2]
        name = name.split(":")[0]  # "cycles:u" -> "cycles"
        try:
            events[name] = {"value": float(raw), "unit": unit}
        except ValueError:
            events[name] = {"value": None, "unit": unit, "status": raw}
    return events


def detect(software: tuple[str, ...], hardware: tuple[str, ...], perf: str = "perf") -> PerfSetup:
    """Find which of the requested events this host can count (one `perf stat true`)."""
    exe = shutil.which(perf)
    if exe is None:
        return PerfSetup(False, "perf not found on PATH", unsupported=list(software) + list(hardware))
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    wanted = list(dict.fromkeys(list(software) + list(hardware)))
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as out:
        proc = subprocess.run([exe, "stat", "-x,", "-o", out.name, "-e", ",".join(wanted), "--", "true"],
                              capture_output=True, text=True)
        got = parse_stat(Path(out.name).read_text())
    if proc.returncode != 0 or not got:
        reason = (proc.stderr.strip().splitlines() or ["perf stat failed"])[-1]
        return PerfSetup(False, f"perf stat failed: {reason}", unsupported=wanted, version=version)
    ok = [e for e in wanted if e in got and got[e]["value"] is not None]
    bad = [e for e in wanted if e not in ok]
    if not ok:
        return PerfSetup(False, "no requested event is countable here", unsupported=bad, version=version)
    return PerfSetup(True, "", events=ok, unsupported=bad, version=version)


def stat_prefix(setup: PerfSetup, out_file: Path) -> list[str]:
    if not setup.available:
        return []
    return ["perf", "stat", "-x,", "-o", str(out_file), "-e", ",".join(setup.events), "--"]


def cell_perf(setup: PerfSetup, out_file: Path) -> dict:
    """The `perf` field of a result line."""
    if not setup.available:
        return {"available": False, "reason": setup.reason, "events": {}}
    try:
        events = parse_stat(out_file.read_text())
    except OSError as exc:
        return {"available": False, "reason": f"perf output missing: {exc}", "events": {}}
    if not events:
        return {"available": False, "reason": "perf wrote no counters (process killed?)", "events": {}}
    return {"available": True, "events": events}


def combined(parts: list[dict]) -> dict:
    """One `perf` field for a cell of several processes: each event summed over the
    processes that counted it (task-clock then is the CPU time of the whole cell)."""
    counted = [p for p in parts if p.get("available")]
    if not counted:
        return parts[0] if parts else {"available": False, "reason": "no process", "events": {}}
    events: dict[str, dict] = {}
    for part in counted:
        for name, ev in part["events"].items():
            total = events.setdefault(name, {"value": 0.0, "unit": ev.get("unit", "")})
            if ev.get("value") is None or total["value"] is None:
                total["value"] = None
                total["status"] = ev.get("status", total.get("status"))
            else:
                total["value"] += ev["value"]
    return {"available": True, "events": events, "processes": len(counted),
            **({"partial": f"{len(parts) - len(counted)} process(es) without perf"}
               if len(counted) < len(parts) else {})}


def record_flamegraph(cmd: list[str], env: dict, out_dir: Path, stem: str, timeout_s: float) -> dict:
    """Profile one extra run with `perf record -e cpu-clock -g` (not the measured run,
    so sampling overhead never touches a result) and render an SVG with inferno."""
    out_dir.mkdir(parents=True, exist_ok=True)
    data = out_dir / f"{stem}.perf.data"
    info: dict = {"data": data.name}
    try:
        proc = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-o", str(data), "--", *cmd],
                              env=env, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.SubprocessError) as exc:
        return {**info, "error": f"perf record failed: {exc}"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        return {**info, "error": f"profiled run exited {proc.returncode}: {last}"}
    collapse, flame = tool_path("inferno-collapse-perf"), tool_path("inferno-flamegraph")
    if not (collapse and flame):
        return {**info, "error": "inferno not installed (./testbed setup installs it); perf.data kept"}
    svg = out_dir / f"{stem}.svg"
    try:
        script = subprocess.run(["perf", "script", "-i", str(data)], capture_output=True, check=True,
                                timeout=timeout_s * 4)
        folded = subprocess.run([collapse], input=script.stdout, capture_output=True, check=True)
        rendered = subprocess.run([flame, "--title", stem], input=folded.stdout, capture_output=True,
                                  check=True)
        svg.write_bytes(rendered.stdout)
    except (OSError, subprocess.SubprocessError) as exc:
        return {**info, "error": f"flamegraph rendering failed: {exc}"}
    return {**info, "svg": svg.name}
