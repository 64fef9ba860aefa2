// The CPUs the calling thread may run on, in order: tests that pin their ends
// apart pick from these (and skip when there are fewer than they need).
#pragma once

#include <sched.h>

#include <vector>

namespace test_support {

inline std::vector<int> allowed_cpus() {
    cpu_set_t m;
    CPU_ZERO(&m);
    std::vector<int> out;
    if (::sched_getaffinity(0, sizeof m, &m) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &m))
                out.push_back(c);
    return out;
}

}  // namespace test_support
