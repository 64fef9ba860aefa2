// msg_queue: one direction of a pipe. Normally a ypipe (lock-free, every
// message kept, in order). With ZMQ_CONFLATE it is a one-slot queue instead:
// each new message replaces the one still waiting, so a slow reader always
// gets the newest message and memory stays bounded whatever the writer does
// (libzmq 4.3.5 does the same with its conflate pipes).
//
// The slot keeps three things apart, read in this order: the routing-id
// message a pipe starts with, the newest data message, and the end-of-pipe
// delimiter. So a conflated pipe still announces its peer, and the last value
// written before the pipe ends is still delivered. A multipart message is
// not kept whole: each frame replaces the previous one and loses its MORE
// flag, so a reader never waits for a tail that was overwritten (libzmq:
// "Does not support multi-part messages").
//
// The slot is shared by the writer and the reader thread under a mutex; the
// asleep flag gives the same wake-up handshake as ypipe (flush() returns
// false exactly once after the reader found the queue empty). Its methods are
// kept out of line (cold) so that the ordinary ypipe path of a pipe compiles
// as before: callgrind showed +5.7% instructions per inproc message when the
// slot's locking code was inlined into pipe_t's hot functions.
#pragma once
#include <memory>
#include <mutex>

#include "core/msg.hpp"
#include "core/ypipe.hpp"

namespace zlink {

#define ZLINK_COLD __attribute__((noinline, cold))

class conflate_slot {
public:
    conflate_slot() {
        id_.init();
        value_.init();
        delimiter_.init();
    }
    ~conflate_slot() {
        id_.close();
        value_.close();
        delimiter_.close();
    }
    conflate_slot(const conflate_slot &) = delete;
    conflate_slot &operator=(const conflate_slot &) = delete;

    ZLINK_COLD void write(const msg_t &m) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (m.is_delimiter())
            put(delimiter_, has_delimiter_, m);
        else if (m.flags() & msg_t::routing_id)
            put(id_, has_id_, m);
        else {
            put(value_, has_value_, m);
            value_.reset_flags(msg_t::more);
        }
    }
    // False when the reader is asleep and something is waiting: wake it once.
    ZLINK_COLD bool flush() {
        std::lock_guard<std::mutex> lock(mutex_);
        const bool wake = asleep_ && any();
        if (wake)
            asleep_ = false;
        return !wake;
    }
    ZLINK_COLD bool check_read() {
        std::lock_guard<std::mutex> lock(mutex_);
        asleep_ = !any();
        return !asleep_;
    }
    // The next message as it is now, copied for the reader (the writer may
    // replace the slot's value right after; read() then returns a newer one).
    ZLINK_COLD const msg_t &front() {
        std::lock_guard<std::mutex> lock(mutex_);
        peek_ = has_id_ ? id_ : has_value_ ? value_ : delimiter_;
        return peek_;
    }
    ZLINK_COLD bool read(msg_t &out) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (take(id_, has_id_, out) || take(value_, has_value_, out) ||
            take(delimiter_, has_delimiter_, out))
            return true;
        asleep_ = true;
        return false;
    }

private:
    bool any() const { return has_id_ || has_value_ || has_delimiter_; }
    static void put(msg_t &slot, bool &full, const msg_t &m) {
        if (full)
            slot.close();  // the message it replaces is dropped
        slot = m;
        full = true;
    }
    static bool take(msg_t &slot, bool &full, msg_t &out) {
        if (!full)
            return false;
        out = slot;
        slot.init();
        full = false;
        return true;
    }

    std::mutex mutex_;
    msg_t id_, value_, delimiter_;
    msg_t peek_;  // reader-owned copy handed out by front(); never closed
    bool has_id_ = false, has_value_ = false, has_delimiter_ = false;
    bool asleep_ = false;
};

// The queue a pipe end reads from or writes to: a ypipe, or a conflate slot.
// The ypipe path is the hot one: one predictable branch per call.
class msg_queue {
public:
    explicit msg_queue(bool conflate)
        : slot_(conflate ? std::make_unique<conflate_slot>() : nullptr) {}

    void write(const msg_t &m, bool incomplete) {
        if (__builtin_expect(slot_ != nullptr, 0))
            slot_->write(m);
        else
            queue_.write(m, incomplete);
    }
    bool unwrite(msg_t &m) {
        return __builtin_expect(slot_ != nullptr, 0) ? false : queue_.unwrite(m);
    }
    bool flush() { return __builtin_expect(slot_ != nullptr, 0) ? slot_->flush() : queue_.flush(); }
    bool check_read() {
        return __builtin_expect(slot_ != nullptr, 0) ? slot_->check_read() : queue_.check_read();
    }
    bool read(msg_t &m) {
        return __builtin_expect(slot_ != nullptr, 0) ? slot_->read(m) : queue_.read(m);
    }
    bool conflating() const { return slot_ != nullptr; }
    // Writer side: the reader has taken everything complete and sleeps
    // (ypipe::drained_before_staged); never for a conflate slot.
    bool drained_before_staged() const {
        return slot_ == nullptr && queue_.drained_before_staged();
    }
    std::uint64_t staged() const { return slot_ == nullptr ? queue_.staged() : 0; }
    // Valid right after check_read() returned true.
    const msg_t &front() {
        return __builtin_expect(slot_ != nullptr, 0) ? slot_->front() : queue_.front();
    }

private:
    ypipe<msg_t> queue_;
    std::unique_ptr<conflate_slot> slot_;
};

#undef ZLINK_COLD

}  // namespace zlink
