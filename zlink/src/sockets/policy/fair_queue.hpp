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

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace zlink {

template <class Pipe>
class fair_queue {
public:
    // A new pipe starts active: it may already hold messages.
    void attach(Pipe *p) {
        pipes_.push_back(p);
        std::swap(pipes_.back(), pipes_[active_]);
        ++active_;
    }

    // The pipe had run dry and now has data again.
    void activated(Pipe *p) {
        const std::size_t i = index_of(p);
        if (i < active_ || i == pipes_.size()) return;
        std::swap(pipes_[i], pipes_[active_]);
        ++active_;
    }

    void terminated(Pipe *p) {
        std::size_t i = index_of(p);
        if (i == pipes_.size()) return;
        if (i < active_) {
            --active_;
            std::swap(pipes_[i], pipes_[active_]);
            // If the current pipe was the one swapped into slot i, follow it,
            // so an unrelated termination never switches pipes mid-message.
            if (current_ == active_) current_ = (i < active_) ? i : 0;
            i = active_;
        }
        pipes_.erase(pipes_.begin() + static_cast<std::ptrdiff_t>(i));
        if (p == last_in_) last_in_ = nullptr;
        if (more_ && p == reading_) more_ = false;  // the rest of that message is gone
    }

    // Next frame, fairly chosen; `from` (optional) receives its pipe.
    // Returns false (caller reports EAGAIN) when no pipe has a message.
    template <class Msg>
    bool recv(Msg &m, Pipe **from = nullptr) {
        while (active_ > 0) {
            Pipe *p = pipes_[current_];
            if (p->read(m)) {
                if (from != nullptr) *from = p;
                more_ = m.has_more();
                reading_ = p;
                if (!more_) {
                    last_in_ = p;
                    current_ = (current_ + 1) % active_;
                }
                return true;
            }
            deactivate_current();
        }
        return false;
    }

    bool has_in() {
        if (more_) return true;
        while (active_ > 0) {
            if (pipes_[current_]->check_read()) return true;
            deactivate_current();
        }
        return false;
    }

    // Pipe the last complete message came from (ROUTER needs it for replies).
    Pipe *last_in() const { return last_in_; }
    std::size_t size() const { return pipes_.size(); }

private:
    std::size_t index_of(Pipe *p) const {
        return static_cast<std::size_t>(std::find(pipes_.begin(), pipes_.end(), p) - pipes_.begin());
    }
    // The pipe at current_ is dry: move it out of the active zone. A pipe
    // cannot run dry mid-message (messages arrive whole), so more_ resets.
    void deactivate_current() {
        more_ = false;
        --active_;
        std::swap(pipes_[current_], pipes_[active_]);
        if (current_ == active_) current_ = 0;
    }

    std::vector<Pipe *> pipes_;   // [0, active_) may have data; the rest are dry
    std::size_t active_ = 0;
    std::size_t current_ = 0;
    bool more_ = false;           // inside a multipart message from reading_
    Pipe *reading_ = nullptr;
    Pipe *last_in_ = nullptr;
};

}  // namespace zlink
