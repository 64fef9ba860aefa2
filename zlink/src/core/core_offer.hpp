// core_offer: before a thread's first sleep in one wait, give its core away once.
//
// Why (measured in docs/profiling/2026-11-24-yield.md): the peer that would wake
// us is often runnable on this very core. Sleeping at once hands it the core for
// a moment only: its next message wakes us, we preempt it, take that one message
// and sleep again. After a yield the peer runs on for its time slice and we find
// a batch waiting. Alone on its core the yield returns at once. Blocking send and
// recv (socket_base.cpp) and zmq_poll (api/poll.cpp) wait the same way through it.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>

namespace zlink {

// From this size on a message counts as large for the core hand-overs: the
// yield before a sleep (socket_base.cpp) and an inproc writer's bounded
// run-ahead (pipe.cpp). Below it, a time slice's worth of messages is little
// memory; above it, megabytes.
constexpr std::size_t large_message_bytes = 32 * 1024;

class core_offer {
public:
    explicit core_offer(bool armed) : armed_(armed) {}
    // Called with the sleep about to start (ms, -1 = forever, 0 = none). The first
    // time a real sleep is due it yields instead and turns `wait` into a look
    // without sleeping; returns whether it did.
    bool before_sleep(int &wait) {
        if (!armed_ || wait == 0)
            return false;
        armed_ = false;
        std::this_thread::yield();
        wait = 0;
        return true;
    }

private:
    bool armed_;
};

// Whether a reader's yield before sleeping pays off, learnt from its last ones.
// It paid off when the look right after it found a message.
//
// Why (docs/profiling/2026-11-25-reader-yield.md): after large messages from an
// IO thread, with the whole process on one core, nearly every such yield pays off
// (0-1 wasted in 4000 tcp/ipc messages) and saves the sleep and the wake-up. With
// the sender on another core most find nothing (3-11 wasted per useful one) and
// yielding every time cost a 64 KiB stream 8-13%. So each wasted yield doubles
// the number of waits that skip it, up to 64, and one that pays off halves it
// (resetting it to 0 instead still lost 8-11% there: one yield in four pays off).
class offer_record {
public:
    // Whether this wait should offer; a skipped wait counts down the back-off.
    bool due() {
        if (skip_ == 0)
            return true;
        --skip_;
        return false;
    }
    void learn(bool paid_off) {
        if (paid_off) {
            backoff_ /= 2;
            return;
        }
        backoff_ = backoff_ == 0 ? 1 : std::min<std::uint8_t>(backoff_ * 2, max_backoff);
        skip_ = backoff_;
    }

private:
    static constexpr std::uint8_t max_backoff = 64;
    std::uint8_t skip_ = 0;
    std::uint8_t backoff_ = 0;
};

}  // namespace zlink
