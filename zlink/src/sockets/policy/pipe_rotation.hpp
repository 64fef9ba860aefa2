// The pipes of a fair_queue or a load_balance: an active zone [0, active) of
// pipes that may be used now (data to read, room to write) and the dry or full
// ones after it, with a cursor that visits the active zone in turn. Pipes move
// between the zones by swapping, so every step is O(1) except finding a pipe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace zlink {

template <class Pipe>
class pipe_rotation {
public:
    // A new pipe joins the active zone: it may already hold messages or room.
    void add(Pipe *p) {
        pipes_.push_back(p);
        std::swap(pipes_.back(), pipes_[active_]);
        ++active_;
    }

    // A known pipe that had run dry or full can be used again.
    void activate(Pipe *p) {
        const std::size_t i = index_of(p);
        if (i < active_ || i == pipes_.size())
            return;
        std::swap(pipes_[i], pipes_[active_]);
        ++active_;
    }

    // Forgets p (no-op if unknown). If the current pipe is the one swapped into
    // p's slot, the cursor follows it, so an unrelated removal never switches
    // pipes in the middle of a message.
    void remove(Pipe *p) {
        std::size_t i = index_of(p);
        if (i == pipes_.size())
            return;
        if (i < active_) {
            --active_;
            std::swap(pipes_[i], pipes_[active_]);
            if (current_ == active_)
                current_ = (i < active_) ? i : 0;
            i = active_;
        }
        pipes_.erase(pipes_.begin() + static_cast<std::ptrdiff_t>(i));
    }

    // The current pipe is dry (or full): out of the active zone.
    void deactivate_current() {
        --active_;
        std::swap(pipes_[current_], pipes_[active_]);
        if (current_ == active_)
            current_ = 0;
    }

    // The current pipe took or gave a whole message: the next one's turn.
    void advance() { current_ = (current_ + 1) % active_; }

    bool any_active() const { return active_ > 0; }
    Pipe *current() const { return pipes_[current_]; }
    bool is_current(const Pipe *p) const { return current_ < active_ && pipes_[current_] == p; }
    std::size_t size() const { return pipes_.size(); }

private:
    std::size_t index_of(Pipe *p) const {
        return static_cast<std::size_t>(std::find(pipes_.begin(), pipes_.end(), p) -
                                        pipes_.begin());
    }

    std::vector<Pipe *> pipes_;  // [0, active_) usable now; the rest dry or full
    std::size_t active_ = 0;
    std::size_t current_ = 0;
};

}  // namespace zlink
