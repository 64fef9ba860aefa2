"""Reading what a driver process wrote: its record log (32-byte records, the layout
of faults/src/record_log.hpp) and its event log (JSON lines)."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

RECORD = struct.Struct("<BBHIQqq")  # kind, ok, conn, epoch, seq, t_ns, aux
SENT, RECEIVED, REPLY, GAVE_UP, RETRY = 1, 2, 3, 4, 5


@dataclass(frozen=True)
class Record:
    kind: int
    ok: bool
    epoch: int
    seq: int
    t_ns: int
    aux: int
    conn: int = 0  # received by a ROUTER: its connection, 1, 2, ... (0: not known)


def read_records(path: Path) -> list[Record]:
    """Every whole record (a process killed mid-write leaves at most a partial last
    one, which is dropped: the message it was about did happen or not, unlogged)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    whole = len(data) - len(data) % RECORD.size
    return [Record(k, bool(ok), e, s, t, a, c) for k, ok, c, e, s, t, a in RECORD.iter_unpack(data[:whole])]


def read_events(path: Path) -> list[dict]:
    """Every complete JSON line; a torn last line (SIGKILL mid-write) is dropped."""
    try:
        text = Path(path).read_text(errors="replace")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
