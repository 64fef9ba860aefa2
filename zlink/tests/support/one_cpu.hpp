// Pins the calling thread (and the threads it starts later: zlink's IO and
// reaper threads inherit the affinity at zmq_socket) to the first CPU it may
// use, and gives the old set back at the end of the scope. Race tests use it:
// on one CPU a thread can only run in another's gap by preempting it.
#pragma once

#include <sched.h>

namespace zlink_test {

class one_cpu {
public:
    one_cpu() {
        pinned_ = sched_getaffinity(0, sizeof old_, &old_) == 0;
        if (!pinned_)
            return;
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &old_)) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                pinned_ = sched_setaffinity(0, sizeof one, &one) == 0;
                return;
            }
    }
    ~one_cpu() {
        if (pinned_)
            sched_setaffinity(0, sizeof old_, &old_);
    }
    one_cpu(const one_cpu &) = delete;
    one_cpu &operator=(const one_cpu &) = delete;

private:
    cpu_set_t old_;
    bool pinned_ = false;
};

}  // namespace zlink_test
