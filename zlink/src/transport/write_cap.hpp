// first_write_cap: how much of a write batch the first sendmsg() may carry.
//
// The engine writes a batch (coalesced small frames, or the header and body
// of a large message) with as few sendmsg() calls as the kernel allows.  Over
// tcp on loopback one sendmsg of a whole 256 KiB message made zlink's round
// trips run in a slow mode: 65-68 us RTT/2 with the whole process on one core,
// against libzmq's 32-34 us (libzmq's encoder hands the kernel an 8 KiB batch
// before the body, by construction).  Sending the first 32 KiB alone and the
// rest by the next call gave 31-34 us, and with a core per side it took 64 KiB
// streams from 1.5-1.9x libzmq's throughput to 2.0x.  Why the kernel schedules
// the peer better this way is inferred, not traced
// (docs/profiling/2026-11-25-first-write.md).
//
// Not for every batch: a lone 64 KiB message cut in two made the one-core
// round trip 16.3 us instead of 14.4.  So a batch is cut only when it is
// larger than first_write_min_batch, or when more frames wait behind it (a
// stream, where the peer starting to read early is what pays).  ipc showed no
// gain in the same probe, so only tcp endpoints get a cap
// (stream_transport.cpp).  ZMQ_ASIO_TCP_MAX_TRANSFER caps every write, the
// first included: the first write takes the smaller of the two caps.  (The
// batch-sweep sets the knob to 256 KiB, as its seed did; had the knob turned
// the rule off, its 256 KiB round trips stayed at ~75 us against libzmq's ~50.)
#pragma once
#include <cstddef>

namespace zlink {

inline constexpr std::size_t first_write_bytes = 32 * 1024;
inline constexpr std::size_t first_write_min_batch = 96 * 1024;

// The cap on a batch's first sendmsg (0: none).  cap_bytes: the endpoint's
// first-write cap (0: off); batch_bytes: the batch's size; more_waiting: the
// host held another frame when the batch closed.
constexpr std::size_t first_write_cap(std::size_t cap_bytes, std::size_t batch_bytes,
                                      bool more_waiting) noexcept {
    if (cap_bytes == 0 || batch_bytes <= cap_bytes)
        return 0;
    return more_waiting || batch_bytes > first_write_min_batch ? cap_bytes : 0;
}

// Whether first_write_cap's answer for this batch depends on more_waiting:
// only then is it worth asking the host whether another frame waits.
constexpr bool first_write_depends_on_more(std::size_t cap_bytes,
                                           std::size_t batch_bytes) noexcept {
    return cap_bytes > 0 && batch_bytes > cap_bytes && batch_bytes <= first_write_min_batch;
}

}  // namespace zlink
