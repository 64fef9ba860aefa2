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

#include <cstddef>

#include "pipe_rotation.hpp"

namespace zlink {

enum class send_result { sent, again };

template <class Pipe>
class load_balance {
public:
    // A new pipe starts active: it may have room.
    void attach(Pipe *p) { pipes_.add(p); }

    // The pipe has room again.
    void activated(Pipe *p) { pipes_.activate(p); }

    void terminated(Pipe *p) {
        // Losing the pipe mid-message: drop the remaining frames rather than
        // deliver a truncated message elsewhere.
        if (more_ && pipes_.is_current(p))
            dropping_ = true;
        pipes_.remove(p);
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
        while (pipes_.any_active()) {
            Pipe *p = pipes_.current();
            const bool frame_more = m.has_more();
            if (p->write(m)) {
                if (to != nullptr)
                    *to = p;
                more_ = frame_more;
                if (!more_) {
                    p->flush();
                    pipes_.advance();
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
            pipes_.deactivate_current();
        }
        return send_result::again;
    }

    bool has_out() {
        if (more_)
            return true;
        while (pipes_.any_active()) {
            if (pipes_.current()->check_write())
                return true;
            pipes_.deactivate_current();
        }
        return false;
    }

    std::size_t size() const { return pipes_.size(); }

private:
    pipe_rotation<Pipe> pipes_;
    bool more_ = false;      // inside a multipart message on the current pipe
    bool dropping_ = false;  // discarding the rest of a message
};

}  // namespace zlink
