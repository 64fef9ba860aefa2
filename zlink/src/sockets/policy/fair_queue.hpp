// Fair-queued receive: one whole message from each ready pipe in turn, so a
// peer that sends without pause (gone berserk) cannot starve the others
// (spec 28: DEALER/ROUTER "SHALL receive incoming messages from its peers
// using a fair-queuing strategy"; spec 29 says the same of SUB/XSUB).
//
// Pipe contract (CORE's pipe, or a fake in tests):
//   bool read(Msg &m)   false when nothing is readable; the pipe then owes the
//                       socket a read-activated event once data arrives
//   bool check_read()   same, without consuming
// A multipart message is readable only once complete, so after its first frame
// the rest follows from the same pipe: the queue stays on that pipe until the
// last frame (MORE clear), which gives multipart atomicity.
#pragma once

#include <cstddef>

#include "pipe_rotation.hpp"

namespace zlink {

template <class Pipe>
class fair_queue {
public:
    // A new pipe starts active: it may already hold messages.
    void attach(Pipe *p) { pipes_.add(p); }

    // The pipe had run dry and now has data again.
    void activated(Pipe *p) { pipes_.activate(p); }

    void terminated(Pipe *p) {
        pipes_.remove(p);
        if (p == last_in_)
            last_in_ = nullptr;
        if (more_ && p == reading_)
            more_ = false;  // the rest of that message is gone
    }

    // Next frame, fairly chosen; `from` (optional) receives its pipe.
    // Returns false (caller reports EAGAIN) when no pipe has a message.
    template <class Msg>
    bool recv(Msg &m, Pipe **from = nullptr) {
        while (pipes_.any_active()) {
            Pipe *p = pipes_.current();
            if (p->read(m)) {
                if (from != nullptr)
                    *from = p;
                more_ = m.has_more();
                reading_ = p;
                if (!more_) {
                    last_in_ = p;
                    pipes_.advance();
                }
                return true;
            }
            deactivate_current();
        }
        return false;
    }

    bool has_in() {
        if (more_)
            return true;
        while (pipes_.any_active()) {
            if (pipes_.current()->check_read())
                return true;
            deactivate_current();
        }
        return false;
    }

    // Pipe the last complete message came from (ROUTER needs it for replies).
    Pipe *last_in() const { return last_in_; }
    std::size_t size() const { return pipes_.size(); }

private:
    // The current pipe is dry. A pipe cannot run dry mid-message (messages
    // arrive whole), so more_ resets.
    void deactivate_current() {
        more_ = false;
        pipes_.deactivate_current();
    }

    pipe_rotation<Pipe> pipes_;
    bool more_ = false;  // inside a multipart message from reading_
    Pipe *reading_ = nullptr;
    Pipe *last_in_ = nullptr;
};

}  // namespace zlink
