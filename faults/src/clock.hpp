// One clock for every process of a run: CLOCK_MONOTONIC in nanoseconds, the clock
// Python's time.monotonic_ns() reads, so the runner's fault times and the drivers'
// event and delivery times compare directly.
#pragma once

#include <cstdint>

namespace faults {

std::int64_t mono_ns();
void sleep_until_ns(std::int64_t when);
void sleep_ms(int ms);

}  // namespace faults
