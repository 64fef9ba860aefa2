#include "clock.hpp"

#include <cerrno>
#include <ctime>

namespace faults {

std::int64_t mono_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void sleep_until_ns(std::int64_t when) {
    timespec ts{};
    ts.tv_sec = when / 1000000000;
    ts.tv_nsec = when % 1000000000;
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

void sleep_ms(int ms) { sleep_until_ns(mono_ns() + std::int64_t(ms) * 1000000); }

}  // namespace faults
