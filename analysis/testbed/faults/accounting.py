"""Every message accounted for, from the record logs of a cell's processes.

One-way patterns (PAIR, PUSH/PULL, DEALER->ROUTER, PUB/SUB): a message is the pair
(sender epoch, sequence) the sender logged after zmq_send returned. Each reception
is checked byte for byte by the receiver. Then, in arrival order over every receiver
process of the cell:
  delivered   distinct sent messages received intact at least once
  lost        sent, never received intact
  duplicated  intact receptions beyond the first of the same message
  reordered   intact first receptions of a sequence number below one already seen
              from the same sender epoch
    reordered_across  the part of `reordered` that came in order on its own
              connection, behind a later message that came by another connection
              (ROUTER receivers only, which log each message's connection; 0 where
              the connection is not known). A DEALER whose connection breaks sends the
              rest on a new one; ZMTP orders messages on one connection only, and a
              ROUTER that holds both fair-queues between them (README.md, reorders
              across a reconnect). A reorder on one connection is a library defect.
  corrupted   receptions that failed the check (wrong bytes, length or shape)
  phantom     intact receptions of a message nobody logged as sent (a bug), except
              the one message a killed sender may have sent without logging it

REQ/REP (lazy-pirate client): a message is a request. delivered = requests with an
intact reply to that very request; lost = issued without one (gave up, or unanswered
at the end); duplicated = a request answered twice; reordered = a reply to another
request than the outstanding one; corrupted = replies or requests (as the server
saw them) that failed the check. The server seeing a request again after a client
retry is the pattern working (server_redeliveries), not a duplicate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .records import GAVE_UP, RECEIVED, REPLY, RETRY, SENT, Record

PHASES = ("before", "during", "after")


def _phase(t_ns: int, fault_start: int | None, fault_end: int | None) -> str:
    if fault_start is None or t_ns < fault_start:
        return "before"
    return "during" if fault_end is None or t_ns < fault_end else "after"


def stream(
    sent_logs: Iterable[list[Record]],
    received_logs: Iterable[list[Record]],
    killed_sender_epochs: set[int],
    fault_start: int | None = None,
    fault_end: int | None = None,
    lost_times: list[int] | None = None,
) -> dict:
    """The accounting of a one-way pattern; `lost_times`, if given, receives the send
    time of every lost message."""
    sent: dict[tuple[int, int], int] = {}  # key -> send time
    for log in sent_logs:
        for r in log:
            if r.kind == SENT:
                sent[(r.epoch, r.seq)] = r.t_ns
    last_logged = {}
    for epoch, seq in sent:
        last_logged[epoch] = max(last_logged.get(epoch, -1), seq)
    arrivals = sorted((r for log in received_logs for r in log if r.kind == RECEIVED), key=lambda r: r.t_ns)
    seen: Counter = Counter()
    highest: dict[int, int] = {}
    highest_on_conn: dict[tuple[int, int], int] = {}  # (epoch, connection) -> highest seq
    out = {
        "corrupted": 0,
        "duplicated": 0,
        "reordered": 0,
        "reordered_across": 0,
        "phantom": 0,
        "unlogged_sends": 0,
    }
    for r in arrivals:
        if not r.ok:
            out["corrupted"] += 1
            continue
        key = (r.epoch, r.seq)
        if key not in sent:
            # A killed sender can die between zmq_send and its log write: one message.
            if r.epoch in killed_sender_epochs and r.seq == last_logged.get(r.epoch, -1) + 1:
                sent[key] = r.aux
                out["unlogged_sends"] += 1
            else:
                out["phantom"] += 1
                continue
        seen[key] += 1
        if seen[key] > 1:
            out["duplicated"] += 1
            continue
        conn_key = (r.epoch, r.conn)
        if r.seq < highest.get(r.epoch, -1):
            out["reordered"] += 1
            if r.conn and r.seq > highest_on_conn.get(conn_key, -1):
                out["reordered_across"] += 1
        highest[r.epoch] = max(highest.get(r.epoch, -1), r.seq)
        highest_on_conn[conn_key] = max(highest_on_conn.get(conn_key, -1), r.seq)
    lost_keys = [k for k in sent if k not in seen]
    if lost_times is not None:
        lost_times.extend(sent[k] for k in lost_keys)
    lost_by_phase = Counter(_phase(sent[k], fault_start, fault_end) for k in lost_keys)
    return {
        "sent": len(sent),
        "delivered": len(seen),
        "lost": len(lost_keys),
        **out,
        "lost_by_phase": {p: lost_by_phase.get(p, 0) for p in PHASES},
    }


def reqrep(
    client_logs: Iterable[list[Record]],
    server_logs: Iterable[list[Record]],
    fault_start: int | None = None,
    fault_end: int | None = None,
    lost_times: list[int] | None = None,
) -> dict:
    """The accounting of REQ/REP; `lost_times` as in stream() (a request's first send)."""
    issued: dict[tuple[int, int], int] = {}
    answered: Counter = Counter()
    out = {"corrupted": 0, "duplicated": 0, "reordered": 0, "phantom": 0, "retries": 0, "gave_up": 0}
    for log in client_logs:
        outstanding = None
        for r in log:  # one client thread: file order is time order
            if r.kind == SENT:
                issued.setdefault((r.epoch, r.seq), r.t_ns)
                outstanding = (r.epoch, r.seq)
            elif r.kind == REPLY:
                if not r.ok:
                    out["corrupted"] += 1
                elif (r.epoch, r.seq) != outstanding:
                    out["reordered"] += 1
                else:
                    answered[outstanding] += 1
                    if answered[outstanding] > 1:
                        out["duplicated"] += 1
            elif r.kind == RETRY:
                out["retries"] += 1
            elif r.kind == GAVE_UP:
                out["gave_up"] += 1
    requests: Counter = Counter()
    for log in server_logs:
        for r in log:
            if r.kind == RECEIVED:
                if not r.ok:
                    out["corrupted"] += 1
                else:
                    requests[(r.epoch, r.seq)] += 1
                    if (r.epoch, r.seq) not in issued:
                        out["phantom"] += 1
    lost_keys = [k for k in issued if answered[k] == 0]
    if lost_times is not None:
        lost_times.extend(issued[k] for k in lost_keys)
    lost_by_phase = Counter(_phase(issued[k], fault_start, fault_end) for k in lost_keys)
    return {
        "sent": len(issued),
        "delivered": sum(1 for k in issued if answered[k]),
        "lost": len(lost_keys),
        **out,
        "unlogged_sends": 0,
        "server_redeliveries": sum(n - 1 for n in requests.values() if n > 1),
        "lost_by_phase": {p: lost_by_phase.get(p, 0) for p in PHASES},
    }


def clean(acc: dict) -> bool:
    """Nothing lost, duplicated, reordered, corrupted or unexplained."""
    return not any(acc[k] for k in ("lost", "duplicated", "reordered", "corrupted", "phantom"))
