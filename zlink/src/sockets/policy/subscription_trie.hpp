// Counted prefix subscriptions: the filter of a SUB / XSUB socket.
//
// Spec 29 (PUB-SUB): a subscription is a byte prefix; a message matches when
// any subscribed prefix is a prefix of its first frame, and the empty prefix
// matches everything. The same prefix may be subscribed several times and stays
// in force until unsubscribed as many times (libzmq 4.3.5 counts the same way),
// so add/remove report the 0->1 and 1->0 transitions: a CANCEL sent upstream
// while the count is still positive would cut off a subscription still in use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "prefix_tree.hpp"

namespace zlink {

class subscription_trie {
public:
    using bytes = std::span<const std::byte>;

    // True when `prefix` was not subscribed before (count 0 -> 1).
    bool add(bytes prefix) {
        if (tree_.at(prefix).n++ != 0)
            return false;
        ++distinct_;
        return true;
    }
    // True when the last subscription of `prefix` went away (1 -> 0).
    // Removing a prefix that is not subscribed is a no-op returning false.
    bool remove(bytes prefix) {
        counter *c = tree_.find(prefix);
        if (c == nullptr || c->n == 0)
            return false;
        if (--c->n != 0)
            return false;
        --distinct_;
        tree_.prune(prefix);
        return true;
    }
    // True when some subscribed prefix is a prefix of `data`.
    bool match(bytes data) const {
        bool hit = false;
        tree_.for_each_prefix_of(data, [&](const counter &) { return !(hit = true); });
        return hit;
    }
    // fn(prefix) once per distinct live prefix: replays the subscriptions to a
    // publisher that attaches after they were made.
    template <class Fn>
    void for_each(Fn &&fn) {
        tree_.for_each([&](bytes p, counter &) { fn(p); });
    }
    std::size_t size() const { return distinct_; }

    // Text overloads (tests, option values).
    bool add(std::string_view p) { return add(as_bytes(p)); }
    bool remove(std::string_view p) { return remove(as_bytes(p)); }
    bool match(std::string_view d) const { return match(as_bytes(d)); }

private:
    struct counter {
        std::uint32_t n = 0;
        bool empty() const { return n == 0; }
    };
    static bytes as_bytes(std::string_view s) {
        return {reinterpret_cast<const std::byte *>(s.data()), s.size()};
    }

    prefix_tree<counter> tree_;
    std::size_t distinct_ = 0;
};

}  // namespace zlink
