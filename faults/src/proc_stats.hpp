// The process's own memory and descriptors from /proc, sampled by a thread every
// few hundred milliseconds into the event log (the soak judges their trend) and kept
// as peaks for the closing summary.
#pragma once

#include "event_log.hpp"

#include <atomic>
#include <thread>

namespace faults {

struct ProcNow {
    long rss_kb = 0;  // VmRSS
    long hwm_kb = 0;  // VmHWM: the peak resident set the kernel saw
    int fds = 0;      // entries of /proc/self/fd
};

ProcNow read_proc();

class ProcSampler {
public:
    ProcSampler(EventLog &log, int every_ms);
    ~ProcSampler();
    ProcSampler(const ProcSampler &) = delete;
    ProcSampler &operator=(const ProcSampler &) = delete;

    int peak_fds() const { return peak_fds_.load(); }

private:
    void run();
    EventLog &log_;
    int every_ms_;
    std::atomic<bool> stop_{false};
    std::atomic<int> peak_fds_{0};
    std::thread thread_;
};

}  // namespace faults
