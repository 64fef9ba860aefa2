// zmq_timers_*: argument checks at the C boundary, then timers_t.
#include "api/timers.hpp"

#include <chrono>
#include <limits>
#include <vector>

#include "api/boundary.hpp"

namespace zlink::api {

namespace {

uint64_t now_ms() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}

// now + interval without wrapping: a SIZE_MAX interval means "never".
uint64_t deadline(uint64_t now, size_t interval_ms) {
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    return interval_ms > max - now ? max : now + interval_ms;
}

}  // namespace

// Both inserts may throw (allocation); neither map is left pointing at nothing.
void timers_t::schedule(const timer &t, uint64_t now) {
    auto pos = by_deadline_.emplace(deadline(now, t.interval_ms), t);
    try {
        by_id_.emplace(t.id, pos);
    } catch (...) {
        by_deadline_.erase(pos);
        throw;
    }
}

// The new deadline entry is made before the old one goes, so a failed
// allocation leaves the timer as it was.
void timers_t::reschedule(by_id_map::iterator it, const timer &t, uint64_t now) {
    auto old = it->second;
    it->second = by_deadline_.emplace(deadline(now, t.interval_ms), t);
    by_deadline_.erase(old);
}

int timers_t::add(size_t interval_ms, zmq_timer_fn *handler, void *arg) {
    if (!handler) {
        errno = EFAULT;
        return -1;
    }
    schedule(timer{++last_id_, interval_ms, handler, arg}, now_ms());
    return last_id_;
}

int timers_t::cancel(int id) {
    auto it = by_id_.find(id);
    if (it == by_id_.end()) {
        errno = EINVAL;
        return -1;
    }
    by_deadline_.erase(it->second);
    by_id_.erase(it);
    return 0;
}

int timers_t::set_interval(int id, size_t interval_ms) {
    auto it = by_id_.find(id);
    if (it == by_id_.end()) {
        errno = EINVAL;
        return -1;
    }
    timer t = it->second->second;
    t.interval_ms = interval_ms;
    reschedule(it, t, now_ms());
    return 0;
}

int timers_t::reset(int id) {
    auto it = by_id_.find(id);
    if (it == by_id_.end()) {
        errno = EINVAL;
        return -1;
    }
    return set_interval(id, it->second->second.interval_ms);
}

long timers_t::timeout() const {
    if (by_deadline_.empty())
        return -1;
    const uint64_t next = by_deadline_.begin()->first, now = now_ms();
    if (next <= now)
        return 0;
    const uint64_t left = next - now;
    return left > static_cast<uint64_t>(std::numeric_limits<long>::max())
               ? std::numeric_limits<long>::max()
               : static_cast<long>(left);
}

int timers_t::execute() {
    // Collect first: handlers may add, cancel or reset timers (their own too).
    const uint64_t now = now_ms();
    std::vector<int> due;
    for (auto it = by_deadline_.begin(); it != by_deadline_.end() && it->first <= now; ++it)
        due.push_back(it->second.id);
    for (int id : due) {
        auto it = by_id_.find(id);
        if (it == by_id_.end())
            continue;  // cancelled by an earlier handler
        const timer t = it->second->second;
        reschedule(it, t, now);
        t.handler(t.id, t.arg);
    }
    return 0;
}

}  // namespace zlink::api

using zlink::api::guarded;
using zlink::api::timers_t;

namespace {

timers_t *as_timers(void *p) {
    auto *t = static_cast<timers_t *>(p);
    if (!t || !t->check_tag()) {
        errno = EFAULT;
        return nullptr;
    }
    return t;
}

}  // namespace

ZLINK_API void *zmq_timers_new(void) {
    return guarded<void *>(nullptr, [] { return static_cast<void *>(new timers_t); });
}

ZLINK_API int zmq_timers_destroy(void **timers_p) {
    if (!timers_p || !as_timers(*timers_p)) {
        errno = EFAULT;
        return -1;
    }
    delete static_cast<timers_t *>(*timers_p);
    *timers_p = nullptr;
    return 0;
}

ZLINK_API int zmq_timers_add(void *timers, size_t interval, zmq_timer_fn handler, void *arg) {
    return guarded(-1, [&] {
        timers_t *t = as_timers(timers);
        return t ? t->add(interval, handler, arg) : -1;
    });
}

ZLINK_API int zmq_timers_cancel(void *timers, int timer_id) {
    timers_t *t = as_timers(timers);
    return t ? t->cancel(timer_id) : -1;
}

ZLINK_API int zmq_timers_set_interval(void *timers, int timer_id, size_t interval) {
    return guarded(-1, [&] {
        timers_t *t = as_timers(timers);
        return t ? t->set_interval(timer_id, interval) : -1;
    });
}

ZLINK_API int zmq_timers_reset(void *timers, int timer_id) {
    return guarded(-1, [&] {
        timers_t *t = as_timers(timers);
        return t ? t->reset(timer_id) : -1;
    });
}

ZLINK_API long zmq_timers_timeout(void *timers) {
    timers_t *t = as_timers(timers);
    return t ? t->timeout() : -1;
}

ZLINK_API int zmq_timers_execute(void *timers) {
    return guarded(-1, [&] {
        timers_t *t = as_timers(timers);
        return t ? t->execute() : -1;
    });
}
