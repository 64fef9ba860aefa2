// Callgrind client requests around each slice: zero the counts when a slice starts,
// dump them with a label naming the slice when it ends, so one callgrind run gives
// instructions per slice, per arm (analysis/testbed/bench/callgrind_slices.py).
// Compiled in where <valgrind/callgrind.h> exists; outside valgrind each request is a
// few no-op instructions. Where the header is missing, nothing is compiled in and
// the JSON line says so (counters.callgrind.compiled = false).
#pragma once

#include <string>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_ARMS_HAVE_CALLGRIND 1
#else
#define BENCH_ARMS_HAVE_CALLGRIND 0
#endif

namespace bench::arms {

inline constexpr bool kCallgrindCompiled = BENCH_ARMS_HAVE_CALLGRIND;

inline bool running_on_valgrind() {
#if BENCH_ARMS_HAVE_CALLGRIND
    return RUNNING_ON_VALGRIND != 0;
#else
    return false;
#endif
}

inline void callgrind_zero() {
#if BENCH_ARMS_HAVE_CALLGRIND
    CALLGRIND_ZERO_STATS;
#endif
}

inline void callgrind_dump(const std::string &label) {
#if BENCH_ARMS_HAVE_CALLGRIND
    CALLGRIND_DUMP_STATS_AT(label.c_str());
#else
    (void)label;
#endif
}

}  // namespace bench::arms
