"""What each library of a run ran with, read from the run's records (not from what
its experiment declares today): HWM, socket buffers, IO threads, placement and
security mechanism, so every report, the index and the README answers state the
settings behind a figure (a run at HWM 0 is never quoted as "the defaults").

A bench result's `settings` holds what the bench asked for (`hwm`, `sndbuf`, `rcvbuf`,
`io_threads`, `security`) and, since 2026-11-27, what the library reported back
(`library_reports`), which wins where present. libzmq's perf programs set no option
(each library's own defaults); hyperfine's records of whole processes carry none.
"""
from __future__ import annotations

from testbed.records.manifest import DEFAULT_HWM, RunManifest

KEYS = ("sndhwm", "rcvhwm", "sndbuf", "rcvbuf", "io_threads", "placement", "security")


def _values(record: dict) -> dict | None:
    """The settings of one ok record (None: the record states none)."""
    result = record.get("result") or {}
    settings = result.get("settings") if isinstance(result, dict) else None
    placement = record.get("placement") or "unpinned"
    if not isinstance(settings, dict):
        if record.get("kind") == "perf-tools":
            return {"placement": placement, "defaults": "libzmq's perf programs set no option: each "
                                                        "library's defaults"}
        return None
    seen = settings.get("library_reports") if isinstance(settings.get("library_reports"), dict) else {}
    hwm = settings.get("hwm")
    if hwm is None and settings.get("hwm_requested") is not None:
        # The arms bench records what it asked for; -1 is "not set": the libraries' default.
        hwm = DEFAULT_HWM if settings["hwm_requested"] == -1 else settings["hwm_requested"]
    return {"sndhwm": seen.get("sndhwm", hwm), "rcvhwm": seen.get("rcvhwm", hwm),
            "sndbuf": seen.get("sndbuf", settings.get("sndbuf")),
            "rcvbuf": seen.get("rcvbuf", settings.get("rcvbuf")),
            "io_threads": seen.get("io_threads", settings.get("io_threads", record.get("io_threads"))),
            "placement": placement, "security": str(settings.get("security") or "null").upper()}


def from_records(records: list[dict]) -> dict:
    """library label -> setting -> the distinct values its ok records state."""
    out: dict[str, dict[str, list]] = {}
    for record in records:
        if record.get("status") != "ok":
            continue
        values = _values(record)
        if values is None:
            continue
        entry = out.setdefault(str(record.get("library")), {})
        for key, value in values.items():
            if value is not None and value not in entry.setdefault(key, []):
                entry[key].append(value)
    return {lib: {k: sorted(v, key=str) for k, v in entry.items()} for lib, entry in sorted(out.items())}


def of_records(records: list[dict], manifest: RunManifest | None = None) -> dict:
    """{"libraries": from_records(...), "declared": the manifest's declared settings or {}},
    from a run's records (RunDir.raw_records)."""
    declared = ((manifest.library_settings or {}).get("declared") or {}) if manifest is not None else {}
    return {"libraries": from_records(records), "declared": declared}


def _join(values: list) -> str:
    return "/".join(str(v) for v in values)


def _hwm(entry: dict) -> str:
    snd, rcv = entry.get("sndhwm", []), entry.get("rcvhwm", [])
    text = f"HWM {_join(snd)}" if snd == rcv else f"SNDHWM {_join(snd)}, RCVHWM {_join(rcv)}"
    both = set(snd) | set(rcv)
    if both == {DEFAULT_HWM}:
        return text + " (the default)"
    if 0 in both:
        return text + f" ({'unlimited' if both == {0} else '0 = unlimited'}; the default is {DEFAULT_HWM})"
    return text + f" (the default is {DEFAULT_HWM})"


def _buffers(entry: dict) -> str:
    snd, rcv = entry.get("sndbuf", []), entry.get("rcvbuf", [])
    if set(snd) | set(rcv) == {-1}:
        return "socket buffers OS default"
    return f"SNDBUF {_join(snd)}, RCVBUF {_join(rcv)} (-1: OS default)"


def library_text(entry: dict) -> str:
    """One library's settings in one line."""
    placement = _join(entry.get("placement", [])) or "?"
    if "defaults" in entry:
        return f"{_join(entry['defaults'])}; {placement}"
    io = _join(entry.get("io_threads", [])) or "?"
    return (f"{_hwm(entry)}, {_buffers(entry)}, IO threads {io}, {placement}, "
            f"{_join(entry.get('security', [])) or '?'}")


def line(settings: dict) -> str:
    """Every library's settings in one line (once when they all ran alike)."""
    libs = settings.get("libraries") or {}
    if not libs:
        d = settings.get("declared") or {}
        declared = f" (declared: HWM {d.get('hwm', '?')}, IO threads {_join(d.get('io_threads', []))})" \
            if d else ""
        return f"not recorded in this run's records{declared}"
    texts = {lib: library_text(entry) for lib, entry in libs.items()}
    if len(set(texts.values())) == 1:
        return next(iter(texts.values()))
    return "; ".join(f"`{lib}`: {text}" for lib, text in texts.items())
