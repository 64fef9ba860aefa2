#include "core/large_blocks.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
// A kept block is still allocated as far as ASan knows: poison it, so a message
// used after its close is reported as it would be once freed.
#define ZLINK_KEEP_POISONED(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define ZLINK_TAKE_UNPOISONED(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define ZLINK_KEEP_POISONED(p, n) ((void)(p), (void)(n))
#define ZLINK_TAKE_UNPOISONED(p, n) ((void)(p), (void)(n))
#endif

namespace zlink::large_blocks {

namespace {

struct slot {
    void *block = nullptr;
    size_t bytes = 0;  // what it was taken for: the reuse bound, never more than malloc gave
};

// Guarded by a flag, not a mutex: take and give never wait. Whoever finds the
// flag set goes to malloc/free instead, a cache miss rather than a stall (the
// holder only looks through the kept blocks). Uncontended, the flag costs one
// atomic exchange; the mutex cost about 55 instructions per lock and unlock, four
// of each per large message, and scanning all 32 slots another 40-50 per call
// (callgrind, tcp 256 KiB: docs/profiling/2026-11-25-level-figures.md).
// The kept blocks are a stack: give pushes, take looks from the top, so the block
// reused is the one freed last, the likeliest still in cache, and the bottom holds
// the blocks unused longest (the ones the decay frees).
struct cache {
    std::atomic_flag busy = ATOMIC_FLAG_INIT;
    std::array<slot, max_blocks> slots{};
    size_t count = 0;  // slots[0, count) hold blocks
    size_t held = 0;   // bytes in them
    // Decay (release_unused): the least `held` since the interval began at `since`
    // is what no take needed all through it.
    size_t low = 0;
    std::chrono::steady_clock::time_point since{};
    unsigned calls = 0;  // take/give calls since the clock was last read
};

// A take looks at this many blocks from the top at most: one stream finds its size
// there; a mix of sizes that misses costs a malloc, not a scan of thousands.
constexpr size_t take_scan = 32;
// The clock is read every this many calls (a vDSO call each, not per message).
constexpr unsigned decay_every = 64;

// Holds the cache's flag if it was free.
class try_hold {
public:
    explicit try_hold(cache &c) : c_(c), held_(!c.busy.test_and_set(std::memory_order_acquire)) {}
    ~try_hold() {
        if (held_)
            c_.busy.clear(std::memory_order_release);
    }
    explicit operator bool() const { return held_; }

private:
    cache &c_;
    bool held_;
};

cache &the_cache() {
    static cache *c = new cache;  // never destroyed: blocks may be freed during exit
    return *c;
}

}  // namespace

size_t budget_from(const char *text) noexcept {
    if (!text)
        return default_budget;
    char *end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text, &end, 10);
    if (errno == 0 && end != text && *end == '\0' && v >= 0 && v <= (1LL << 32))
        return static_cast<size_t>(v);
    std::fprintf(stderr,
                 "zlink: ignoring ZMQ_ASIO_BLOCK_CACHE='%s' (allowed: integer bytes 0..%lld, "
                 "0 = off); using %zu\n",
                 text, 1LL << 32, default_budget);
    return default_budget;
}

size_t budget() noexcept {
    static const size_t b = budget_from(std::getenv("ZMQ_ASIO_BLOCK_CACHE"));
    return b;
}

namespace {

// Frees slots [0, n) and closes the gap. Under the cache's flag.
size_t free_bottom(cache &c, size_t n) {
    size_t freed = 0;
    for (size_t i = 0; i < n; ++i) {
        ZLINK_TAKE_UNPOISONED(c.slots[i].block, c.slots[i].bytes);
        std::free(c.slots[i].block);
        freed += c.slots[i].bytes;
    }
    std::memmove(c.slots.data(), c.slots.data() + n, (c.count - n) * sizeof(slot));
    c.count -= n;
    c.held -= freed;
    return freed;
}

// release_unused's step, under the cache's flag.
size_t decay(cache &c, std::chrono::steady_clock::time_point now) {
    if (now < c.since || now - c.since < idle_interval) {
        if (now < c.since)
            c.since = now;
        return 0;
    }
    // Bytes no take needed all through the interval, beyond the resident ones.
    size_t idle = c.held > resident_bytes ? std::min(c.low, c.held - resident_bytes) : 0;
    size_t n = 0;
    for (size_t bytes = 0; n < c.count && bytes < idle; ++n)
        bytes += c.slots[n].bytes;
    const size_t freed = free_bottom(c, n);
    c.low = c.held;
    c.since = now;
    return freed;
}

void maybe_decay(cache &c) {
    if (++c.calls % decay_every == 0)
        decay(c, std::chrono::steady_clock::now());
}

}  // namespace

size_t release_unused(std::chrono::steady_clock::time_point now) noexcept {
    cache &c = the_cache();
    for (;;) {
        if (try_hold g{c})
            return decay(c, now);
        std::this_thread::yield();
    }
}

size_t held_bytes() noexcept {
    cache &c = the_cache();
    for (;;) {
        if (try_hold g{c})
            return c.held;
        std::this_thread::yield();
    }
}

void *take(size_t bytes) noexcept {
    if (bytes >= min_bytes && budget() > 0) {
        cache &c = the_cache();
        if (try_hold g{c}) {
            maybe_decay(c);
            const size_t floor = c.count > take_scan ? c.count - take_scan : 0;
            for (size_t i = c.count; i-- > floor;) {
                slot &s = c.slots[i];
                if (s.bytes >= bytes && s.bytes - bytes <= bytes / 8) {
                    void *b = s.block;
                    c.held -= s.bytes;
                    c.low = std::min(c.low, c.held);
                    ZLINK_TAKE_UNPOISONED(b, s.bytes);
                    // The top fills the gap; slots past count are never read.
                    s = c.slots[--c.count];
                    return b;
                }
            }
        }
    }
    return std::malloc(bytes);
}

void give(void *block, size_t bytes) noexcept {
    if (block && bytes >= min_bytes) {
        cache &c = the_cache();
        if (try_hold g{c}; g && c.count < max_blocks && c.held + bytes <= budget()) {
            maybe_decay(c);
            ZLINK_KEEP_POISONED(block, bytes);
            c.slots[c.count++] = slot{block, bytes};
            c.held += bytes;
            return;
        }
    }
    std::free(block);
}

}  // namespace zlink::large_blocks
