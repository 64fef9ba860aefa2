// Prefix subscriptions per pipe: the subscription table of an XPUB / PUB.
//
// Spec 29: the publisher sends a message to every subscriber that has a
// subscription matching it. Each prefix maps to the set of pipes subscribed to
// it (a pipe subscribing twice to the same prefix is one entry; the subscriber
// side already counts duplicates and cancels only on its last unsubscribe).
// add/remove report whether the prefix itself appeared or disappeared, because
// XPUB passes a subscription to its application only when it is new (unless
// XPUB_VERBOSE) and an unsubscription only when nobody wants the prefix any more.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "prefix_tree.hpp"

namespace zlink {

template <class Pipe>
class pipe_trie {
public:
    using bytes = std::span<const std::byte>;
    enum class removed { not_subscribed, others_remain, last };

    // True when no pipe was subscribed to `prefix` before.
    bool add(bytes prefix, Pipe *pipe) {
        pipes &set = tree_.at(prefix);
        const bool first = set.v.empty();
        if (std::find(set.v.begin(), set.v.end(), pipe) == set.v.end())
            set.v.push_back(pipe);
        return first;
    }

    removed remove(bytes prefix, Pipe *pipe) {
        pipes *set = tree_.find(prefix);
        if (set == nullptr)
            return removed::not_subscribed;
        auto it = std::find(set->v.begin(), set->v.end(), pipe);
        if (it == set->v.end())
            return removed::not_subscribed;
        set->v.erase(it);
        if (!set->v.empty())
            return removed::others_remain;
        tree_.prune(prefix);
        return removed::last;
    }

    // Forget `pipe` everywhere (it terminated). on_removed(prefix) is called for
    // every prefix the pipe was subscribed to, or, if only_last, for those
    // nobody else wants any more.
    template <class Fn>
    void remove_pipe(Pipe *pipe, Fn &&on_removed, bool only_last) {
        tree_.for_each([&](bytes prefix, pipes &set) {
            auto it = std::find(set.v.begin(), set.v.end(), pipe);
            if (it == set.v.end())
                return;
            set.v.erase(it);
            if (!only_last || set.v.empty())
                on_removed(prefix);
        });
        tree_.prune_all();
    }

    // fn(pipe) for each pipe with a subscription matching `data`. A pipe with
    // several matching prefixes is reported once per prefix; callers that need
    // one delivery per pipe must de-duplicate (the distributor's match() does).
    template <class Fn>
    void match(bytes data, Fn &&fn) const {
        tree_.for_each_prefix_of(data, [&](const pipes &set) {
            for (Pipe *p : set.v)
                fn(p);
            return true;
        });
    }

    bool add(std::string_view p, Pipe *pipe) { return add(as_bytes(p), pipe); }
    removed remove(std::string_view p, Pipe *pipe) { return remove(as_bytes(p), pipe); }
    bool empty() const { return tree_.empty(); }

private:
    struct pipes {
        std::vector<Pipe *> v;  // usually one or a few subscribers per prefix
        bool empty() const { return v.empty(); }
    };
    static bytes as_bytes(std::string_view s) {
        return {reinterpret_cast<const std::byte *>(s.data()), s.size()};
    }
    prefix_tree<pipes> tree_;
};

}  // namespace zlink
