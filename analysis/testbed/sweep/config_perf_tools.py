"""What an experiment.toml of kind "perf-tools" may ask for. libzmq's perf programs
take only an endpoint, a size and a count and set no socket option, so every knob the
bench has beyond those (HWM, IO threads, a mode, process models) is refused with the
reason instead of being silently ignored."""
from __future__ import annotations

from pathlib import Path

from testbed.sweep.toml_reader import ExperimentError

# pattern -> program family: local/remote/inproc _thr use PUSH/PULL, the _lat ones REQ/REP.
PROGRAMS = {"PUSH_PULL": "thr", "REQ_REP": "lat"}
PATTERNS = tuple(PROGRAMS)


def check(path: Path, workload: dict, sweep: dict) -> None:
    odd = [p for p in workload["patterns"] if p not in PATTERNS]
    if odd:
        raise ExperimentError(path, "workload.patterns", f"{odd[0]!r} has no libzmq perf program",
                              "PUSH_PULL (local_thr/remote_thr, inproc_thr), REQ_REP (local_lat/remote_lat, "
                              "inproc_lat)")
    if workload["mode"] != "both":
        raise ExperimentError(path, "workload.mode", "the pattern picks the program (PUSH_PULL: throughput, "
                              "REQ_REP: latency)", "leave mode out")
    if workload["hwm"] is not None:
        raise ExperimentError(path, "workload.hwm", "libzmq's perf programs set no HWM (each library's "
                              "default applies)", "leave hwm out")
    if sweep["io_threads"] != (1,):
        raise ExperimentError(path, "sweep.io_threads", "libzmq's perf programs run one IO thread (the "
                              "default)", "[1]")
    if sweep["process_model"] != ("two-process",):
        raise ExperimentError(path, "sweep.process_model", "the tcp/ipc programs are two processes on this "
                              "host (inproc ones: one process)", '["two-process"]')
