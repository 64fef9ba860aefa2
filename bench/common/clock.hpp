// The one clock every measurement uses, for every library and the ceiling probe:
// std::chrono::steady_clock (monotonic; CLOCK_MONOTONIC on Linux).
#pragma once

#include <chrono>

namespace bench {

using Clock = std::chrono::steady_clock;
inline constexpr const char *kClockName = "std::chrono::steady_clock";

inline double seconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

inline double microseconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

}  // namespace bench
