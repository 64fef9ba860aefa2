// The threads a runner starts for its sides, and the control connection of a role
// process: the same for bench_<pattern> and bench_arms_<pattern>.
#pragma once

#include <cstddef>
#include <latch>
#include <memory>
#include <thread>

#include "link.hpp"
#include "options.hpp"
#include "placement.hpp"
#include "process.hpp"

namespace bench {

// Side threads finish their phases, then wait until the main thread has read
// /proc: the census must see every thread alive, with its affinity.
struct SideGate {
    explicit SideGate(std::ptrdiff_t sides) : done(sides) {}
    std::latch done;
    std::latch release{1};
};

template <typename Body>
std::thread side_thread(const char *name, const char *role, const Pin &pin, SideGate &gate,
                        Body body) {
    return std::thread([=, &pin, &gate] {
        name_current_thread(name);
        thread_census().register_self(role);
        // Pinned before the side creates its context: the IO threads inherit this.
        if (pin.given())
            pin_current_thread(pin.cpus, role);
        body();
        gate.done.count_down();
        gate.release.wait();
    });
}

// The control connection of a role process (two-process / two-host runs): the
// receiver accepts it at --control, the sender connects to it.
std::unique_ptr<Link> open_control_link(const Options &o, Watchdog &wd);

}  // namespace bench
