// timers_t: the object behind zmq_timers_* (libzmq 4.3.5 semantics).
//
// Timers an application drives from its own poll loop: it asks timeout() how
// long it may sleep, then calls execute(), which runs every due handler once
// and schedules it again one interval later.  Not thread safe (as in libzmq).
// Timers are indexed both by deadline (to find the next one) and by id (so
// cancel/reset/set_interval are O(log n), not a scan).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "zmq.h"

namespace zlink::api {

class timers_t {
public:
    ~timers_t() { tag_ = dead_tag; }
    bool check_tag() const { return tag_ == live_tag; }

    // A new timer's id (> 0), or -1 with EFAULT for a null handler.
    int add(size_t interval_ms, zmq_timer_fn *handler, void *arg);
    // 0, or -1 with EINVAL when no live timer has this id.
    int cancel(int id);
    int set_interval(int id, size_t interval_ms);
    int reset(int id);  // restart the current interval from now
    // Milliseconds until the next deadline (0 if overdue), -1 when no timer
    // is live; like libzmq, -1 leaves errno untouched.
    long timeout() const;
    // Runs each due handler once; always 0.
    int execute();

private:
    struct timer {
        int id;
        size_t interval_ms;
        zmq_timer_fn *handler;
        void *arg;
    };
    using by_deadline_map = std::multimap<uint64_t, timer>;
    using by_id_map = std::unordered_map<int, by_deadline_map::iterator>;
    static constexpr unsigned live_tag = 0xcafe71e5, dead_tag = 0xdeadbeef;

    void schedule(const timer &t, uint64_t now_ms);
    void reschedule(by_id_map::iterator it, const timer &t, uint64_t now_ms);

    unsigned tag_ = live_tag;  // first member: checked through foreign pointers
    int last_id_ = 0;
    by_deadline_map by_deadline_;
    by_id_map by_id_;
};

}  // namespace zlink::api
