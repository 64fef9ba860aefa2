// Counted work per slice: what the whole process did between two snapshots.
//
// perf_event_open, opened in the main thread before any other thread exists and
// with `inherit`, so every thread started later (side threads, the libraries' IO
// threads) is counted, and a read on the parent's descriptor includes the live
// threads' counts: software events (task clock, context switches, CPU migrations,
// page faults), syscall tracepoints (every syscall, and the data and waiting
// syscalls by name, ids read from tracefs), and hardware instructions/cycles only
// where they open and count on this host. Whatever does not open is left out and
// named with its reason: a count is never a zero for what was not counted.
// Without perf_event_open (no permission, no tracefs): getrusage (CPU time, context
// switches, page faults). Voluntary context switches come from getrusage either way. The snapshots'
// own read syscall is taken off the counts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "arms_options.hpp"

namespace bench::arms {

class Counters {
public:
    Counters() = default;
    Counters(const Counters &) = delete;
    Counters &operator=(const Counters &) = delete;
    ~Counters();

    // Call first thing in main(), before any thread is started.
    void open(CountersMode mode);
    // "perf_event_open", "getrusage" or "none".
    const char *source() const { return source_; }
    // True when syscall tracepoints are counted: they make every syscall slower, so
    // the run's times are not fit for timing verdicts (a library that makes more
    // syscalls loses more).
    bool perturbs_timing() const { return tracepoints_; }
    const std::vector<std::string> &events() const { return names_; }
    // Events tried and left out, with the reason ("instructions": "ENOENT ...").
    const std::vector<std::pair<std::string, std::string>> &unavailable() const {
        return unavailable_;
    }
    // Current totals, in the order of events(); empty when source() is "none".
    std::vector<std::uint64_t> read() const;
    // after - before, less what the snapshots themselves did.
    std::vector<std::uint64_t> delta(const std::vector<std::uint64_t> &before,
                                     const std::vector<std::uint64_t> &after) const;

private:
    struct Group {
        int leader = -1;
        std::vector<int> fds;
        std::vector<std::size_t> slots;  // index into names_ of each member
    };
    void open_perf(bool tracepoints);
    bool add(Group &g, const std::string &name, std::uint32_t type, std::uint64_t config);
    void read_group(const Group &g, std::vector<std::uint64_t> &out) const;
    const char *source_ = "none";
    bool tracepoints_ = false;
    std::vector<std::string> names_;
    std::vector<std::pair<std::string, std::string>> unavailable_;
    Group software_, hardware_;
    // Where read() puts getrusage's voluntary context switches: the switches the
    // process asked for (blocking, waiting for a wake-up), which the host's load
    // moves far less than the involuntary ones (preemption) in context_switches.
    std::size_t voluntary_slot_ = 0;
    // Syscall counts the snapshots add to each slice (one read per slice).
    std::vector<std::uint64_t> self_;
};

}  // namespace bench::arms
