// Routing-id table of a ROUTER or STREAM socket.
//
// Spec 28: ROUTER "SHALL create a double queue when a peer connects to it ...
// SHALL generate a unique identity for the peer if it did not supply one"; a
// message sent to an identity that matches no peer is dropped (or, with
// ZMQ_ROUTER_MANDATORY, fails with EHOSTUNREACH). Generated ids follow libzmq
// 4.3.5's shape: five bytes, a zero byte then a 32-bit counter that starts at
// a random value, so they never collide with application ids (which may not
// start with a zero byte).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>

namespace zlink {

template <class Pipe>
class routing_table {
public:
    routing_table() : next_(std::random_device{}()) {}

    // A fresh id no peer uses.
    std::string generate() {
        for (;;) {
            const std::uint32_t v = next_++;
            std::string id(5, '\0');
            for (int k = 0; k < 4; ++k)
                id[static_cast<std::size_t>(4 - k)] = static_cast<char>(v >> (8 * k));
            if (by_id_.find(std::string_view(id)) == by_id_.end())
                return id;
        }
    }

    // False when the id is taken (caller decides: refuse, or hand over).
    bool add(Pipe *p, std::string id) {
        if (by_id_.find(std::string_view(id)) != by_id_.end())
            return false;
        by_pipe_[p] = id;
        by_id_.emplace(std::move(id), p);
        return true;
    }

    // ROUTER_HANDOVER: `id` now belongs to `p`; the previous owner (returned,
    // nullptr if none) gets a generated id so its queued messages stay
    // reachable as it shuts down, and the caller terminates it.
    Pipe *hand_over(Pipe *p, std::string id) {
        Pipe *old = find(id);
        if (old != nullptr)
            rename(old, generate());
        add(p, std::move(id));
        return old;
    }

    Pipe *find(std::string_view id) const {
        auto it = by_id_.find(id);
        return it == by_id_.end() ? nullptr : it->second;
    }

    // The id of `p`, or nullptr when it has none (not yet identified).
    const std::string *id_of(Pipe *p) const {
        auto it = by_pipe_.find(p);
        return it == by_pipe_.end() ? nullptr : &it->second;
    }

    void remove(Pipe *p) {
        auto it = by_pipe_.find(p);
        if (it == by_pipe_.end())
            return;
        by_id_.erase(by_id_.find(std::string_view(it->second)));
        by_pipe_.erase(it);
    }

    std::size_t size() const { return by_pipe_.size(); }

    // fn(pipe) for every identified pipe; fn returns true to stop early.
    template <class Fn>
    bool any_of(Fn &&fn) const {
        for (const auto &[p, id] : by_pipe_)
            if (fn(p))
                return true;
        return false;
    }

private:
    // Transparent hashing: look ids up from message bytes without a copy.
    struct hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const {
            return std::hash<std::string_view>{}(s);
        }
    };
    void rename(Pipe *p, std::string id) {
        remove(p);
        add(p, std::move(id));
    }

    std::unordered_map<std::string, Pipe *, hash, std::equal_to<>> by_id_;
    std::unordered_map<Pipe *, std::string> by_pipe_;
    std::uint32_t next_;
};

}  // namespace zlink
