#include "dealer.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "../common/placement.hpp"
#include "../common/process.hpp"

namespace bench::arms {

void Dealer::add(std::size_t group, int tid) {
    if (!active_)
        return;
    std::lock_guard lock(m_);
    if (std::any_of(threads_.begin(), threads_.end(), [&](const Dealt &t) { return t.tid == tid; }))
        return;
    cpu_set_t m;
    CPU_ZERO(&m);
    if (sched_getaffinity(tid, sizeof m, &m) != 0)
        exit_error("--redeal: reading the CPUs of thread " + std::to_string(tid) + ": " +
                   std::strerror(errno));
    threads_.push_back(Dealt{tid, group, CpuList::of_mask(m).cpus(), false});
}

void Dealer::set_mask(Dealt &t, const std::vector<int> &cpus) {
    cpu_set_t m;
    CPU_ZERO(&m);
    for (int c : cpus)
        CPU_SET(c, &m);
    // A library may end a thread of its own during the run (ESRCH): nothing to place.
    if (sched_setaffinity(t.tid, sizeof m, &m) != 0 && errno != ESRCH)
        exit_error("--redeal: setting the CPUs of thread " + std::to_string(t.tid) + ": " +
                   std::strerror(errno));
}

void Dealer::deal() {
    if (!active_)
        return;
    std::lock_guard lock(m_);
    ++deals_;
    for (Dealt &t : threads_) {
        if (t.home.size() < 2)
            continue;  // pinned by the placement: nowhere else to go
        const int cpu = t.home[rng_() % t.home.size()];
        set_mask(t, {cpu});
        t.pinned = true;
        ++pins_;
    }
}

void Dealer::release(std::size_t group) {
    if (!active_)
        return;
    std::lock_guard lock(m_);
    for (Dealt &t : threads_)
        if (t.pinned && (t.group == group || t.group == kSides)) {
            set_mask(t, t.home);
            t.pinned = false;
            ++releases_;
        }
}

}  // namespace bench::arms
