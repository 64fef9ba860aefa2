// Round-robin send: each whole message goes to the next pipe that has room,
// skipping pipes at their high-water mark (spec 28: DEALER "SHALL route
// outgoing messages to available peers using a round-robin strategy"; with no
// available peer it blocks, or the send fails with EAGAIN under ZMQ_DONTWAIT).
//
// Pipe contract:
//   bool write(Msg &m)   false when full (HWM) or closing; on success m is
//                        consumed. A full pipe owes a write-activated event.
//   bool check_write()   room for one more message (no side effect on m)
//   void flush()         publish written frames to the reader
//   void rollback()      withdraw unflushed frames (pipe closing mid-message)
// The pipe counts HWM in whole messages, so once the first frame of a
// multipart message is accepted the following frames are too: multipart
// messages are never split between pipes or truncated by HWM.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace zlink {

enum class send_result { sent, again };

template <class Pipe>
class load_balance {
public:
    void attach(Pipe *p) {
        pipes_.push_back(p);
        activated(p);
    }

    // The pipe has room again (or is new).
    void activated(Pipe *p) {
        const std::size_t i = index_of(p);
        if (i < active_ || i == pipes_.size()) return;
        std::swap(pipes_[i], pipes_[active_]);
        ++active_;
    }

    void terminated(Pipe *p) {
        std::size_t i = index_of(p);
        if (i == pipes_.size()) return;
        // Losing the pipe mid-message: drop the remaining frames rather than
        // deliver a truncated message elsewhere.
        if (more_ && i == current_) dropping_ = true;
        if (i < active_) {
            --active_;
            std::swap(pipes_[i], pipes_[active_]);
            if (current_ == active_) current_ = (i < active_) ? i : 0;
            i = active_;
        }
        pipes_.erase(pipes_.begin() + static_cast<std::ptrdiff_t>(i));
    }

    // Sends one frame. `again` means no pipe can take it now (the caller blocks
    // until activated() or reports EAGAIN); m is then untouched, except in the
    // dropping case below where the whole message is discarded silently (as
    // libzmq does) and m is consumed by `drop`.
    template <class Msg, class Drop>
    send_result send(Msg &m, Drop &&drop, Pipe **to = nullptr) {
        if (dropping_) {
            more_ = m.has_more();
            dropping_ = more_;
            drop(m);
            return send_result::sent;
        }
        while (active_ > 0) {
            Pipe *p = pipes_[current_];
            const bool frame_more = m.has_more();
            if (p->write(m)) {
                if (to != nullptr) *to = p;
                more_ = frame_more;
                if (!more_) {
                    p->flush();
                    current_ = (current_ + 1) % active_;
                }
                return send_result::sent;
            }
            if (more_) {
                // Pipe closed mid-message: withdraw what was written and drop
                // the rest, keeping the message all-or-nothing.
                p->rollback();
                more_ = false;
                dropping_ = frame_more;
                drop(m);
                return send_result::sent;
            }
            deactivate_current();
        }
        return send_result::again;
    }

    bool has_out() {
        if (more_) return true;
        while (active_ > 0) {
            if (pipes_[current_]->check_write()) return true;
            deactivate_current();
        }
        return false;
    }

    std::size_t size() const { return pipes_.size(); }

private:
    std::size_t index_of(Pipe *p) const {
        return static_cast<std::size_t>(std::find(pipes_.begin(), pipes_.end(), p) - pipes_.begin());
    }
    void deactivate_current() {
        --active_;
        std::swap(pipes_[current_], pipes_[active_]);
        if (current_ == active_) current_ = 0;
    }

    std::vector<Pipe *> pipes_;  // [0, active_) have room
    std::size_t active_ = 0;
    std::size_t current_ = 0;
    bool more_ = false;          // inside a multipart message on pipes_[current_]
    bool dropping_ = false;      // discarding the rest of a message
};

}  // namespace zlink
