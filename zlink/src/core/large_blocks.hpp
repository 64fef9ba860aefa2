// large_blocks: a bounded, process-wide cache of freed large message blocks.
//
// Why: a stream of large messages allocates and frees one block per message, on
// two threads (the application fills one, an IO thread frees it once written;
// the other way round when receiving). glibc serves these sizes from the top of a
// heap and hands free space at the top back to the kernel once it passes its trim
// threshold, so the next burst faults every page in again, zeroed by the kernel
// (8-16 page faults per 256 KiB message, libzmq and zlink alike). A block kept here
// is reused with no fault and no zeroing. A sender that runs further ahead than
// the budget (HWM unlimited) still allocates the rest.
// Measured in docs/profiling/2026-11-24-large-blocks.md.
//
// Bounded, and elastic: up to budget bytes (default_budget, or ZMQ_ASIO_BLOCK_CACHE
// bytes from the environment, 0 = off) in at most max_blocks blocks. A stream keeps
// as many blocks in flight as its pipes allow (inproc PUSH_PULL at the default HWMs:
// 2,000 messages, 128 MiB at 64 KiB), and a cache smaller than that missed in
// bursts: the sender malloc'd, glibc grew its heap and faulted every block in again
// (0.3 page faults per inproc 64 KiB message, about 3x libzmq's time per message;
// docs/profiling/2026-12-03-inproc-large.md). So the cache keeps what a stream
// recycles, and gives back what it does not: blocks beyond resident_bytes that no
// take needed for a whole idle_interval are freed at the next call after it.
// Blocks below min_bytes never come here: glibc's own bins keep those warm.
#pragma once
#include <chrono>
#include <cstddef>

namespace zlink::large_blocks {

constexpr size_t min_bytes = 64 * 1024;
constexpr size_t max_blocks = 4096;
constexpr size_t default_budget = size_t{256} * 1024 * 1024;
// Kept however long they sit unused (the cache's size before it became elastic).
constexpr size_t resident_bytes = 8 * 1024 * 1024;
constexpr std::chrono::milliseconds idle_interval{1000};

// A block of at least `bytes` (a cached one at most an eighth larger, else
// malloc's); nullptr when memory is exhausted. Free it with give().
void *take(size_t bytes) noexcept;
// Returns a block taken for `bytes`: kept for reuse while the cache has room,
// else freed.
void give(void *block, size_t bytes) noexcept;
// The byte budget in force (read once from the environment).
size_t budget() noexcept;
// The budget a ZMQ_ASIO_BLOCK_CACHE value gives (null: unset); a malformed value is
// reported on stderr and gives default_budget.
size_t budget_from(const char *text) noexcept;
// Bytes the cache holds now (for tests and diagnostics).
size_t held_bytes() noexcept;
// The decay step take() and give() run every few calls, at time `now`: when an
// idle_interval has passed since the last step, frees (oldest first) the bytes held
// all through it, down to resident_bytes. Returns the bytes freed. A `now` before
// the last step starts a new interval (so a test's clock cannot stall the decay).
size_t release_unused(std::chrono::steady_clock::time_point now) noexcept;

}  // namespace zlink::large_blocks
