// Fan-out send: a copy of each message to every matching pipe that has room;
// a pipe at its high-water mark misses the message (spec 29: "For processing
// outgoing messages: SHALL silently drop the message if the queue for a
// subscriber is full."). PUB/XPUB use it with the subscription trie choosing
// the matching pipes, XSUB uses send_to_all for subscriptions.
//
// Pipe contract: as load_balance (write/flush/rollback/check_write). XPUB_NODROP
// asks check_write() of every matching pipe before sending; a full pipe then
// owes a write-activated event, which is what the blocked sender waits for.
// Msg contract (msg_t): has_more(); init() then copy(src) makes a cheap copy
// sharing the body (refcounted), so fan-out never copies payload bytes.
//
// The pipes vector is split into zones so match/deactivate are O(1) swaps:
//   [0, matching)   pipes the current message goes to
//   [0, active)     pipes that take messages (have room)
//   [0, eligible)   pipes that will become active at the next message boundary
//   [eligible, end) full pipes, or pipes attached mid-message
// Whatever zone a pipe is in, once the first frame of a message reached it,
// every following frame of that message does too (HWM counts whole messages),
// and a pipe attached mid-message joins only at the next message.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace zlink {

template <class Pipe>
class distribute {
public:
    void attach(Pipe *p) {
        pipes_.push_back(p);
        std::swap(pipes_.back(), pipes_[eligible_]);
        ++eligible_;
        if (!more_) {
            std::swap(pipes_[eligible_ - 1], pipes_[active_]);
            ++active_;
        }
    }

    // Mark `p` as a recipient of the next message. Idempotent.
    void match(Pipe *p) {
        const std::size_t i = index_of(p);
        if (i < matching_ || i >= active_)
            return;
        std::swap(pipes_[i], pipes_[matching_]);
        ++matching_;
    }
    void unmatch() { matching_ = 0; }
    // Flip the selection among the pipes that take messages: the matching
    // ones stop matching and the others match (ZMQ_INVERT_MATCHING).
    void reverse_match() {
        const std::size_t matched = matching_;
        matching_ = 0;
        for (std::size_t i = matched; i < active_; ++i)
            std::swap(pipes_[i], pipes_[matching_++]);
    }

    void terminated(Pipe *p) {
        std::size_t i = index_of(p);
        if (i == pipes_.size())
            return;
        if (i < matching_)
            move_down(i, matching_);
        if (i < active_)
            move_down(i, active_);
        if (i < eligible_)
            move_down(i, eligible_);
        pipes_.erase(pipes_.begin() + static_cast<std::ptrdiff_t>(i));
    }

    // The pipe has room again.
    void activated(Pipe *p) {
        std::size_t i = index_of(p);
        if (i == pipes_.size() || i < eligible_)
            return;
        std::swap(pipes_[i], pipes_[eligible_]);
        i = eligible_++;
        if (!more_) {
            std::swap(pipes_[i], pipes_[active_]);
            ++active_;
        }
    }

    template <class Msg, class Drop>
    void send_to_all(Msg &m, Drop &&drop) {
        matching_ = active_;
        send_to_matching(m, drop);
    }

    // Writes m (consumed via drop when nobody takes it) to the matching pipes.
    template <class Msg, class Drop>
    void send_to_matching(Msg &m, Drop &&drop) {
        const bool frame_more = m.has_more();
        // Copies for all but the last recipient, which takes m itself.
        for (std::size_t i = 0; i + 1 < matching_;) {
            Msg copy;
            copy.init();
            copy.copy(m);
            if (write(i, copy))
                ++i;
            else
                drop(copy);  // pipe left the zone; slot i now holds another
        }
        if (matching_ > 0) {
            if (!write(matching_ - 1, m))
                drop(m);
        } else {
            drop(m);
        }
        if (!frame_more) {
            active_ = eligible_;  // pipes freed mid-message rejoin now
            matching_ = 0;
        }
        more_ = frame_more;
    }

    // True when every matching pipe can take a message (XPUB_NODROP).
    bool check_hwm() {
        for (std::size_t i = 0; i < matching_; ++i)
            if (!pipes_[i]->check_write())
                return false;
        return true;
    }
    bool has_out() const { return true; }  // PUB never blocks
    std::size_t size() const { return pipes_.size(); }

private:
    std::size_t index_of(Pipe *p) const {
        return static_cast<std::size_t>(std::find(pipes_.begin(), pipes_.end(), p) -
                                        pipes_.begin());
    }
    // Shrink a zone [0, bound) by one, moving slot i out of it.
    void move_down(std::size_t &i, std::size_t &bound) {
        --bound;
        std::swap(pipes_[i], pipes_[bound]);
        i = bound;
    }
    template <class Msg>
    bool write(std::size_t i, Msg &m) {
        Pipe *p = pipes_[i];
        const bool frame_more = m.has_more();
        if (!p->write(m)) {
            // Full: out of every zone until activated(). Only possible at the
            // first frame (HWM counts messages), so nothing to roll back.
            move_down(i, matching_);
            move_down(i, active_);
            move_down(i, eligible_);
            return false;
        }
        if (!frame_more)
            p->flush();
        return true;
    }

    std::vector<Pipe *> pipes_;
    std::size_t matching_ = 0;
    std::size_t active_ = 0;
    std::size_t eligible_ = 0;
    bool more_ = false;
};

}  // namespace zlink
