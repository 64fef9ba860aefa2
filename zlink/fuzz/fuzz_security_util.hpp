// Shared by the security fuzz targets: an abort-on-violation check, and a
// deterministic stand-in for libsodium's random source so that a crashing input
// replays exactly (keys, cookies and nonces depend on randomness). Fuzzing only:
// the stand-in is a plain counter-seeded generator, never cryptographic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#ifdef ZLINK_HAVE_CURVE
#include <sodium.h>
#endif

namespace fuzz_security {

inline void check(bool ok) {
    if (!ok)
        std::abort();
}

#ifdef ZLINK_HAVE_CURVE
inline std::uint64_t &state() {
    static std::uint64_t s = 1;
    return s;
}

inline std::uint32_t next_random() {
    // splitmix64: spreads a counter into well-mixed bits.
    std::uint64_t z = (state() += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::uint32_t>(z ^ (z >> 31));
}

inline void fill_random(void *const buf, const std::size_t size) {
    auto *p = static_cast<std::uint8_t *>(buf);
    for (std::size_t i = 0; i < size; ++i)
        p[i] = static_cast<std::uint8_t>(next_random());
}

inline const char *random_name() { return "zlink-fuzz-deterministic"; }

// Call from LLVMFuzzerInitialize, before anything initialises libsodium.
inline void use_deterministic_random() {
    static randombytes_implementation impl = {random_name, next_random, nullptr,
                                              nullptr,     fill_random, nullptr};
    randombytes_set_implementation(&impl);
    check(sodium_init() >= 0);
}

// Call at the start of every input so it replays the same keys.
inline void reset_random() { state() = 1; }
#endif

}  // namespace fuzz_security
