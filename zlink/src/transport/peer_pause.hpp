// peer_pause: over tcp on loopback, a lone mid-size message to a peer running
// on other CPUs goes out as 8 KiB, one trip through epoll (Asio's wait for
// writability, which ends at once on a socket with room), then the rest.
//
// Why: libzmq writes 8 KiB, goes back to epoll, and writes the rest.  With a
// core per side, the same cut made zlink's split tcp 64 KiB round trips 5-9%
// faster at p50 (before/after run 20261204T200325Z-2cd0,
// docs/profiling/2026-12-04-tcp-peer-pause.md); streams were unchanged.
//
// It was built for ipc first (split ipc 64 KiB p50 +22% to +44%, run 5bc0),
// but over ipc the cut itself was not what paid: the wait for writability
// registered EPOLLOUT, which wakes the IO thread when the peer drains the
// socket (transport/drain_wake.hpp has the probes).  ipc now registers that
// interest directly and writes whole batches.
//
// Kept to where it paid: a peer that cannot share our core (one-core and
// free placement keep the single write), a batch of one message between
// pause_min_batch and pause_max_batch, and nothing queued behind it (a stream
// keeps its throughput).  Where the peer runs:
// - tcp on loopback: the CPU that last delivered its segments to us
//   (SO_INCOMING_CPU; loopback delivers in the sender's context, on the
//   sender's CPU), which must be one this thread may not run on.  Other tcp
//   peers never pause: over a real network that CPU is the NIC's, not the
//   peer's.
// - ipc (for the drain wake): its pid (SO_PEERCRED), whose allowed CPUs must
//   be disjoint from ours.
#pragma once
#include <chrono>
#include <cstddef>

namespace zlink {

inline constexpr std::size_t pause_first_bytes = 8 * 1024;
inline constexpr std::size_t pause_min_batch = 16 * 1024;
inline constexpr std::size_t pause_max_batch = 128 * 1024;

// Whether a batch of batch_bytes is a candidate (before asking whether frames
// wait behind it or where the peer runs, which cost a pull and syscalls).
constexpr bool pause_candidate(bool enabled, std::size_t batch_bytes) noexcept {
    return enabled && batch_bytes > pause_min_batch && batch_bytes <= pause_max_batch;
}

// Whether the process at the other end of the unix socket fd may only run on
// CPUs this thread may not: both affinity masks are read, and any failure
// (not a unix socket, no such process, a mask larger than cpu_set_t) says no.
bool peer_pinned_elsewhere(int fd) noexcept;

// Whether the socket fd's peer address is on this host's loopback (is_loopback).
bool loopback_peer(int fd) noexcept;

// Whether the tcp socket fd is connected over loopback and its peer's last
// segment was delivered on a CPU this thread may not run on.  Any failure (not
// tcp, not loopback, no segment yet) says no.
bool loopback_peer_ran_elsewhere(int fd) noexcept;

// Whether a peer address is on this host's loopback (127.0.0.0/8, ::1, and
// 127.0.0.0/8 mapped into IPv6).
bool is_loopback(const void *sockaddr, unsigned length) noexcept;

// The peer of fd is elsewhere by whichever of the two tests its socket allows.
bool peer_elsewhere(int fd) noexcept;

// peer_elsewhere() for one connection, asked again at most once per second:
// placement is usually set at start, but a process may pin itself after it
// connected.
class peer_placement {
public:
    bool elsewhere(int fd) noexcept {
        look(fd);
        return elsewhere_;
    }

private:
    void look(int fd) noexcept;
    std::chrono::steady_clock::time_point next_look_{};
    bool elsewhere_ = false;
};

}  // namespace zlink
