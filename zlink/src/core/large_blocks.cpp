#include "core/large_blocks.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>

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

struct cache {
    std::mutex lock;
    std::array<slot, max_blocks> slots{};
    size_t held = 0;  // bytes in slots
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

size_t held_bytes() noexcept {
    cache &c = the_cache();
    std::lock_guard<std::mutex> g(c.lock);
    return c.held;
}

void *take(size_t bytes) noexcept {
    if (bytes >= min_bytes && budget() > 0) {
        cache &c = the_cache();
        std::lock_guard<std::mutex> g(c.lock);
        for (slot &s : c.slots)
            if (s.block && s.bytes >= bytes && s.bytes - bytes <= bytes / 8) {
                void *b = s.block;
                c.held -= s.bytes;
                ZLINK_TAKE_UNPOISONED(b, s.bytes);
                s = slot{};
                return b;
            }
    }
    return std::malloc(bytes);
}

void give(void *block, size_t bytes) noexcept {
    if (block && bytes >= min_bytes) {
        cache &c = the_cache();
        std::lock_guard<std::mutex> g(c.lock);
        if (c.held + bytes <= budget())
            for (slot &s : c.slots)
                if (!s.block) {
                    ZLINK_KEEP_POISONED(block, bytes);
                    s = slot{block, bytes};
                    c.held += bytes;
                    return;
                }
    }
    std::free(block);
}

}  // namespace zlink::large_blocks
