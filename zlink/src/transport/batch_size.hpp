// batch_size: how many bytes the engine's next read (or write batch) may take,
// between a floor and a ceiling.  floor == ceiling is a static batch (a
// ZMQ_ASIO_*_BATCH_SIZE knob set by the user); the default is adaptive.
//
// Why adaptive: one batch size cannot serve both ends of the size range
// (batch-sweep 2026-11-24: 64 KiB batches gave 1.3x the 8 KiB default at
// 256 B-1 KiB, level at 64-256 KiB).  A stream of small frames wants big
// reads and writes (fewer syscalls, fewer wake-ups per message); a request
// and reply, or a large body read straight into its message, wants a small
// one (a big read would copy the body through the buffer; a connection that
// never streams should not hold big buffers).  Memory: a streaming connection
// holds up to 4 x ceiling of receive chunk and 1 x ceiling of send staging;
// it gives them back only once its traffic turns light (a connection that
// falls silent keeps them, as it makes no batches to judge).
//
// Where it starts: reads at the floor (a fresh connection holds a chunk of 4
// reads, which should stay small until the peer streams); writes at the
// ceiling.  A write batch only ever holds what is queued, so a large limit
// costs a quiet connection nothing but its staging buffer (given back after
// shrink_after light batches), while starting a stream at 8 KiB decided how
// it ran: two-process tcp at 1 KiB on one core, one run in two settled into a
// mode with ~1.7x the receiver's kernel time, the default 0.94x of a static
// 64 KiB batch (batch-sweep 0545; interleaved probes 1.05-1.06x); starting
// writes at the ceiling gave 1.00x (docs/profiling/2026-11-24-direct-reads.md).
//
// The rule: a batch that came back full of small frames (at least
// `small_frames` of them) doubles the next one; a batch that used under a
// quarter of its size `shrink_after` times in a row halves it.  Growing fast
// and shrinking slowly keeps a stream with the odd short batch at its size.
#pragma once
#include <algorithm>
#include <cstddef>

namespace zlink {

class batch_size {
public:
    static constexpr std::size_t small_frames = 4;
    static constexpr int shrink_after = 8;

    enum class start { at_floor, at_ceiling };
    batch_size(std::size_t floor, std::size_t ceiling, start from = start::at_floor)
        : floor_(floor), ceiling_(std::max(floor, ceiling)),
          now_(from == start::at_floor ? floor_ : ceiling_) {}

    std::size_t now() const noexcept { return now_; }

    // One batch is done: `bytes` taken in `frames` complete frames; `full`:
    // it stopped because it reached now() (not because input ran out).
    void observe(std::size_t bytes, std::size_t frames, bool full) noexcept {
        if (full && frames >= small_frames) {
            now_ = std::min(now_ * 2, ceiling_);
            light_ = 0;
        } else if (bytes < now_ / 4) {
            if (++light_ >= shrink_after) {
                now_ = std::max(now_ / 2, floor_);
                light_ = 0;
            }
        } else
            light_ = 0;
    }

private:
    std::size_t floor_, ceiling_, now_;
    int light_ = 0;  // light batches in a row
};

}  // namespace zlink
