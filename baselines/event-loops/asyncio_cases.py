"""zmq.asyncio over whichever libzmq.so.5 this pyzmq was built on: the same
contract as zmq_fd_epoll.cpp, reached the way most Python users reach it.
pyzmq's asyncio sockets register ZMQ_FD with the event loop (add_reader,
level-triggered epoll) and read ZMQ_EVENTS after every wake-up and operation,
so a library whose fd is not raised on arrival hangs an await, and one whose fd
stays raised makes the loop spin.

Run with the python of a pyzmq built on the library under test; prints the same
lines as zmq_fd_epoll.cpp:  case<TAB>transport<TAB>ok|FAIL: why<TAB>wakeups=N spurious=N
where wakeups counts the loop's selector returns with a ready fd while the case
waits and spurious those during an idle await (nothing sent: every one is a
busy wake-up)."""
import asyncio
import os
import selectors
import sys
import tempfile
import time

import zmq
import zmq.asyncio

LIMIT = 5.0  # seconds any single await may take before the case fails


class CountingSelector(selectors.EpollSelector):
    """The loop's own selector, counting the returns that carry a ready fd."""

    ready = 0

    def select(self, timeout=None):
        events = super().select(timeout)
        type(self).ready += bool(events)
        return events


def endpoint(transport: str, n: int) -> str:
    if transport == "tcp":
        return "tcp://127.0.0.1:*"
    if transport == "ipc":
        return f"ipc://{tempfile.gettempdir()}/asyncio_cases_{os.getpid()}_{n}"
    return f"inproc://asyncio_cases_{n}"


_count = 0


def bound(ctx, kind, transport, **options):
    global _count
    _count += 1
    sock = ctx.socket(kind)
    for name, value in options.items():
        sock.setsockopt(getattr(zmq, name), value)
    sock.linger = 0
    sock.bind(endpoint(transport, _count))
    return sock


async def idle_wakeups(seconds: float) -> int:
    before = CountingSelector.ready
    await asyncio.sleep(seconds)
    return CountingSelector.ready - before


async def recv_awaits_arrival(ctx, transport):
    """An await on recv suspends, the loop stays quiet, and the arrival resumes it."""
    pull = bound(ctx, zmq.PULL, transport)
    push = ctx.socket(zmq.PUSH)
    push.linger = 0
    push.connect(pull.last_endpoint)
    await asyncio.sleep(0.1)  # the connection's own wake-ups happen here
    task = asyncio.ensure_future(pull.recv())
    spurious = await idle_wakeups(0.3)
    if task.done():
        raise AssertionError("recv finished before anything was sent")
    await push.send(b"hello")
    got = await asyncio.wait_for(task, LIMIT)
    assert got == b"hello", got
    for sock in (pull, push):
        sock.close()
    return spurious


async def poller_many(ctx, transport):
    """zmq.asyncio.Poller over 20 sockets wakes for the one that receives, each time."""
    pulls = [bound(ctx, zmq.PULL, transport) for _ in range(20)]
    push = ctx.socket(zmq.PUSH)
    push.linger = 0
    poller = zmq.asyncio.Poller()
    for pull in pulls:
        poller.register(pull, zmq.POLLIN)
    spurious = 0
    for i in (7, 0, 19, 3):
        push.connect(pulls[i].last_endpoint)
        await asyncio.sleep(0.05)
        spurious += await idle_wakeups(0.1)
        events = asyncio.ensure_future(poller.poll(LIMIT * 1000))
        await asyncio.sleep(0.05)
        assert not events.done() or not events.result(), f"poll returned {events.result()} before a send"
        await push.send(b"%d" % i)
        ready = dict(await asyncio.wait_for(events, LIMIT))
        assert ready == {pulls[i]: zmq.POLLIN}, ready
        assert await pulls[i].recv() == b"%d" % i
        push.disconnect(pulls[i].last_endpoint)
    for sock in (*pulls, push):
        sock.close()
    return spurious


async def many_sockets(ctx, transport):
    """100 awaits on 100 sockets, all resumed by messages sent in another order."""
    pulls = [bound(ctx, zmq.PULL, transport) for _ in range(100)]
    pushes = []
    for pull in pulls:
        push = ctx.socket(zmq.PUSH)
        push.linger = 0
        push.connect(pull.last_endpoint)
        pushes.append(push)
    tasks = [asyncio.ensure_future(pull.recv()) for pull in pulls]
    await asyncio.sleep(0.2)
    spurious = await idle_wakeups(0.2)
    for i in sorted(range(100), key=lambda i: (i * 37) % 100):
        await pushes[i].send(b"%d" % i)
    got = await asyncio.wait_for(asyncio.gather(*tasks), LIMIT)
    assert got == [b"%d" % i for i in range(100)], got
    for sock in (*pulls, *pushes):
        sock.close()
    return spurious


async def send_resumes_at_hwm(ctx, transport):
    """An await on send at the HWM suspends and resumes when the reader takes messages."""
    pull = bound(ctx, zmq.PULL, transport, RCVHWM=2)
    push = ctx.socket(zmq.PUSH)
    push.sndhwm, push.linger = 2, 0
    push.connect(pull.last_endpoint)
    size = 8 if transport == "inproc" else 128 * 1024
    total = 500 if transport == "inproc" else 200
    body = b"x" * size
    sent = 0

    async def sender():
        nonlocal sent
        for _ in range(total):
            await push.send(body)
            sent += 1

    task = asyncio.ensure_future(sender())
    await asyncio.sleep(0.3)
    # Over tcp the kernel's buffers keep growing for a while, so a few more sends may
    # still go through; what matters is that the sender is suspended, not finished.
    before = sent
    # A wake-up that let a send through is work, not a spurious one.
    spurious = max(0, await idle_wakeups(0.2) - (sent - before))
    if task.done():
        raise AssertionError(f"send never blocked at the HWM (all {total} sent, nobody reading)")
    for _ in range(total):
        await asyncio.wait_for(pull.recv(), LIMIT)
    await asyncio.wait_for(task, LIMIT)
    assert sent == total
    for sock in (pull, push):
        sock.close()
    return spurious


CASES = (recv_awaits_arrival, poller_many, many_sockets, send_resumes_at_hwm)


async def run_case(case, transport) -> str:
    ctx = zmq.asyncio.Context()
    before, started = CountingSelector.ready, time.monotonic()
    try:
        spurious = await case(ctx, transport)
        verdict = "ok"
    except TimeoutError:
        spurious, verdict = 0, f"FAIL: an await did not finish within {LIMIT:g} s"
    except AssertionError as exc:
        spurious, verdict = 0, f"FAIL: {exc}"
    finally:
        ctx.destroy(linger=0)
    wakeups = CountingSelector.ready - before
    seconds = time.monotonic() - started
    counts = f"wakeups={wakeups} spurious={spurious} seconds={seconds:.1f}"
    return f"{case.__name__}\t{transport}\t{verdict}\t{counts}"


def main() -> int:
    maps = open("/proc/self/maps").read().split()
    print("mapped\t" + ",".join(sorted({p for p in maps if os.path.basename(p).startswith("libzmq.so.5")})))
    for case in CASES:
        for transport in ("tcp", "ipc", "inproc"):
            loop = asyncio.SelectorEventLoop(CountingSelector())
            try:
                print(loop.run_until_complete(run_case(case, transport)), flush=True)
            finally:
                loop.close()
    return 0


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"# {time.monotonic() - started:.1f} s", file=sys.stderr)
    sys.exit(code)
