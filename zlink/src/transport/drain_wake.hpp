// drain_wake: over ipc, to a peer process pinned to other CPUs, the IO thread
// is woken whenever the peer takes bytes off the socket.  There is no code
// here, only the reason for engine_output::arm_drain_wake().
//
// How: a unix stream socket signals write space each time the reader frees a
// buffer it sent (the kernel's unix_write_space), and epoll passes it on to a
// descriptor registered for EPOLLOUT.  Asio registers EPOLLOUT the first time
// a write operation waits, and never takes it back (epoll_reactor's
// registered_events_ only grows).  So one wait for writability, whose handler
// does nothing, registers the interest for the connection's life.
//
// Why: a request's answer comes soon after the peer has read the request.  On
// a guest that halts an idle vCPU at once (this testbed's hosts: cpuidle
// haltpoll with guest_halt_poll_ns = 0), waking a halted vCPU took a median
// 20 us (docs/profiling/2026-12-04-ipc-split-modes.md).  Woken when the peer
// drains the request, our CPU leaves halt while the peer works, and is awake
// or still in its short way into halt when the answer arrives.  libzmq gets
// the same wake for a message that fills its socket: its EPOLLOUT interest
// stays until the write after the last one finds nothing to send
// (docs/profiling/2026-12-04-drain-wake.md, with the traces).
//
// History: the peer pause (transport/peer_pause.hpp) first did this over ipc
// without anyone knowing.  Its wait for writability between the 8 KiB and the
// rest registered EPOLLOUT; a probe that wrote the rest at once without that
// wait lost the whole gain (split ipc 64 KiB PAIR p50 42-48 us against
// 29-31), and one that kept the single write but registered the interest kept
// it (30-34 us).  Registered for any size, split ipc 64 B PAIR round trips
// went from 35-37 us p50 to 21-24 (libzmq 36-38), same-run direct probes.
//
// Cost: one extra wake-up of this IO thread per drain by the peer, CPU time
// on our core.  So only where the peer runs on other CPUs (its pid's
// affinity, transport/peer_pause.hpp's peer_pinned_elsewhere): on a shared
// core the wake would only take the core from the thread doing the work, and
// with unpinned processes it did (a probe armed there: free placement ipc 64 B
// p50 30-36% slower; docs/profiling/2026-12-04-drain-wake.md).
// Not over tcp: it signals write space only after a write found the buffer
// full (SOCK_NOSPACE), so the interest alone wakes nobody.
//
// The same interest is left behind by any write that waited for room.  Where
// the drain wake is not armed such waits go through a duplicate descriptor
// instead, closed when the output is idle (engine_output::wait_writable).
#pragma once
