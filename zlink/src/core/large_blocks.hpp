// large_blocks: a small, bounded, process-wide cache of freed large message blocks.
//
// Why: a stream of large messages allocates and frees one block per message, on
// two threads (the application fills one, an IO thread frees it once written;
// the other way round when receiving). glibc serves these sizes from the top of a
// heap and hands free space at the top back to the kernel once it passes its trim
// threshold, so the next burst faults every page in again, zeroed by the kernel
// (8-16 page faults per 256 KiB message, libzmq and zlink alike). A block kept here
// is reused with no fault and no zeroing. It does not help a sender that runs far
// ahead of its IO thread (HWM unlimited): that needs more blocks than are kept.
// Measured in docs/profiling/2026-11-24-large-blocks.md.
//
// Bounded: at most max_blocks blocks and a byte budget (default_budget, or
// ZMQ_ASIO_BLOCK_CACHE bytes from the environment, 0 = off), so a burst that
// needed a lot of memory gives it back. Blocks below min_bytes never come here:
// glibc's own bins keep those warm.
#pragma once
#include <cstddef>

namespace zlink::large_blocks {

constexpr size_t min_bytes = 64 * 1024;
constexpr size_t max_blocks = 32;
constexpr size_t default_budget = 8 * 1024 * 1024;

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

}  // namespace zlink::large_blocks
