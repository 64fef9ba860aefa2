"""The accounting of a cell from synthetic record logs: every class of outcome counted
once, where the module's docstring says."""

from __future__ import annotations

from testbed.faults import accounting
from testbed.faults.records import GAVE_UP, RECEIVED, RECORD, REPLY, RETRY, SENT, Record, read_records


def sent(epoch, seqs, t0=0):
    return [Record(SENT, True, epoch, s, t0 + s * 10, 0) for s in seqs]


def got(pairs, ok=True, t0=1000):
    return [Record(RECEIVED, ok, e, s, t0 + i, 0) for i, (e, s) in enumerate(pairs)]


def test_clean_stream():
    acc = accounting.stream([sent(1, range(5))], [got([(1, s) for s in range(5)])], set())
    assert (acc["sent"], acc["delivered"], acc["lost"]) == (5, 5, 0) and accounting.clean(acc)


def test_lost_duplicated_reordered_corrupted_are_each_counted():
    arrivals = got([(1, 0), (1, 2), (1, 1), (1, 2)]) + [Record(RECEIVED, False, 7, 99, 5000, 0)]
    acc = accounting.stream([sent(1, range(5))], [arrivals], set())
    assert acc["delivered"] == 3 and acc["lost"] == 2  # 3 and 4
    assert acc["duplicated"] == 1 and acc["reordered"] == 1 and acc["corrupted"] == 1
    assert not accounting.clean(acc)


def test_lost_by_phase_uses_send_times():
    acc = accounting.stream(
        [sent(1, range(10))], [got([(1, s) for s in (0, 1, 2, 9)])], set(), fault_start=30, fault_end=60
    )
    assert acc["lost_by_phase"] == {"before": 0, "during": 3, "after": 3}  # sent at 30..50 / 60..80


def test_receivers_across_a_restart_are_one_stream():
    first, second = got([(1, 0), (1, 1)], t0=100), got([(1, 2), (1, 3)], t0=200)
    acc = accounting.stream([sent(1, range(4))], [second, first], set())
    assert acc["delivered"] == 4 and acc["reordered"] == 0


def test_a_killed_sender_may_have_sent_one_unlogged_message():
    arrivals = got([(1, 0), (1, 1), (1, 2)])
    killed = accounting.stream([sent(1, range(2))], [arrivals], {1})
    assert killed["unlogged_sends"] == 1 and killed["phantom"] == 0 and killed["delivered"] == 3
    alive = accounting.stream([sent(1, range(2))], [arrivals], set())
    assert alive["phantom"] == 1


def test_reqrep_lazy_pirate():
    client = [
        Record(SENT, True, 1, 0, 0, 0),
        Record(REPLY, True, 1, 0, 5, 0),
        Record(SENT, True, 1, 1, 10, 0),
        Record(RETRY, True, 1, 1, 20, 1),
        Record(SENT, True, 1, 1, 21, 1),
        Record(REPLY, True, 1, 1, 25, 0),
        Record(SENT, True, 1, 2, 30, 0),
        Record(RETRY, True, 1, 2, 40, 1),
        Record(GAVE_UP, True, 1, 2, 40, 1),
        Record(SENT, True, 1, 3, 50, 0),
        Record(REPLY, True, 1, 2, 55, 0),  # a stale reply
        Record(SENT, True, 1, 4, 60, 0),
        Record(REPLY, False, 1, 4, 65, 0),
    ]
    server = [Record(RECEIVED, True, 1, s, 0, 0) for s in (0, 1, 1, 2, 3, 4)]
    acc = accounting.reqrep([client], [server])
    assert acc["sent"] == 5 and acc["delivered"] == 2 and acc["lost"] == 3
    assert acc["retries"] == 2 and acc["gave_up"] == 1 and acc["server_redeliveries"] == 1
    assert acc["reordered"] == 1 and acc["corrupted"] == 1 and acc["duplicated"] == 0


def test_read_records_drops_a_torn_last_record(tmp_path):
    path = tmp_path / "x.rec"
    path.write_bytes(RECORD.pack(SENT, 1, 0, 3, 7, 11, 13) + b"\x01\x02")
    assert read_records(path) == [Record(SENT, True, 3, 7, 11, 13)]
    assert read_records(tmp_path / "missing.rec") == []


def got_by(triples, t0=1000):
    """(epoch, seq, connection) in arrival order, as a ROUTER logs them."""
    return [Record(RECEIVED, True, e, s, t0 + i, 0, c) for i, (e, s, c) in enumerate(triples)]


def test_a_reorder_across_two_connections_is_told_from_one_on_a_single_connection():
    # Fair queueing between the old connection (0..3) and the new one (4..5), as the
    # ROUTER of run 20261202T134258Z-0bff interleaved them after a freeze.
    across = got_by([(1, 0, 1), (1, 1, 1), (1, 4, 2), (1, 2, 1), (1, 5, 2), (1, 3, 1)])
    acc = accounting.stream([sent(1, range(6))], [across], set())
    assert acc["reordered"] == 2 and acc["reordered_across"] == 2
    # The same arrival order on one connection is a reorder the wire forbids.
    single = got_by([(1, s, 1) for s in (0, 1, 4, 2, 5, 3)])
    acc = accounting.stream([sent(1, range(6))], [single], set())
    assert acc["reordered"] == 2 and acc["reordered_across"] == 0
    # A message out of order on its own connection stays a plain reorder even when a
    # second connection is involved.
    mixed = got_by([(1, 0, 1), (1, 2, 1), (1, 3, 2), (1, 1, 1)])
    acc = accounting.stream([sent(1, range(4))], [mixed], set())
    assert acc["reordered"] == 1 and acc["reordered_across"] == 0


def test_a_reorder_without_connection_numbers_is_never_called_across():
    acc = accounting.stream([sent(1, range(3))], [got([(1, 0), (1, 2), (1, 1)])], set())
    assert acc["reordered"] == 1 and acc["reordered_across"] == 0


def test_the_connection_number_is_read_from_the_record_layout(tmp_path):
    path = tmp_path / "recv.rec"
    path.write_bytes(RECORD.pack(RECEIVED, 1, 2, 1, 7, 100, 90))
    (r,) = read_records(path)
    assert (r.conn, r.seq, r.aux) == (2, 7, 90)
