// A radix (path-compressed) tree from byte prefixes to a small payload.
//
// Shared by the SUB filter (payload: a subscription count) and the XPUB
// subscription table (payload: the set of pipes subscribed). Path compression
// keeps a node per distinct prefix rather than per byte, so a peer that
// subscribes to a 1 MiB prefix costs one node, not a million, and walks and
// destruction never recurse deeper than the number of nested prefixes.
//
// Value must be default-constructible and provide `bool empty() const`; a node
// whose value is empty is "not a subscription" and is pruned when it has no
// children (or merged into its only child).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace zlink {

template <class Value>
class prefix_tree {
public:
    using bytes = std::span<const std::byte>;

    // The value stored at exactly `prefix`, created empty if absent.
    Value &at(bytes prefix) {
        node *n = &root_;
        std::size_t i = 0;
        while (i < prefix.size()) {
            auto it = n->lower(prefix[i]);
            if (it == n->children.end() || it->label[0] != prefix[i]) {
                const auto idx = it - n->children.begin();
                n->children.emplace(it, prefix.subspan(i));
                return n->children[static_cast<std::size_t>(idx)].value;
            }
            const std::size_t k = common(it->label, prefix.subspan(i));
            if (k < it->label.size())
                split(*it, k);
            n = &*it;
            i += k;
        }
        return n->value;
    }

    // The value at exactly `prefix`, or nullptr.
    Value *find(bytes prefix) {
        node *n = &root_;
        std::size_t i = 0;
        while (i < prefix.size()) {
            auto it = n->lower(prefix[i]);
            if (it == n->children.end() || it->label[0] != prefix[i])
                return nullptr;
            if (!starts_with(prefix.subspan(i), it->label))
                return nullptr;
            n = &*it;
            i += it->label.size();
        }
        return &n->value;
    }

    // After the caller emptied the value at `prefix`, drop the node (and merge
    // a lone child upwards) so memory follows the live set.
    void prune(bytes prefix) {
        std::vector<std::pair<node *, std::size_t>> path;  // (parent, child index)
        node *n = &root_;
        std::size_t i = 0;
        while (i < prefix.size()) {
            auto it = n->lower(prefix[i]);
            if (it == n->children.end() || it->label[0] != prefix[i])
                return;
            if (!starts_with(prefix.subspan(i), it->label))
                return;
            path.emplace_back(n, static_cast<std::size_t>(it - n->children.begin()));
            n = &*it;
            i += it->label.size();
        }
        // Walk back up: remove empty leaves, merge empty single-child nodes.
        while (!path.empty()) {
            auto [parent, idx] = path.back();
            path.pop_back();
            node &c = parent->children[idx];
            if (!c.value.empty())
                return;
            if (c.children.empty()) {
                parent->children.erase(parent->children.begin() + static_cast<std::ptrdiff_t>(idx));
                continue;  // the parent may now be an empty leaf too
            }
            if (c.children.size() == 1)
                merge_with_only_child(c);
            return;
        }
    }

    // fn(value) for every non-empty value whose prefix is a prefix of `data`,
    // shortest first; fn returns false to stop early.
    template <class Fn>
    void for_each_prefix_of(bytes data, Fn &&fn) const {
        const node *n = &root_;
        std::size_t i = 0;
        for (;;) {
            if (!n->value.empty() && !fn(n->value))
                return;
            if (i == data.size())
                return;
            auto it = n->lower(data[i]);
            if (it == n->children.end() || it->label[0] != data[i])
                return;
            if (!starts_with(data.subspan(i), it->label))
                return;
            n = &*it;
            i += it->label.size();
        }
    }

    // fn(prefix, value&) for every node with a non-empty value. fn may empty
    // the value (not restructure the tree); call prune_all() afterwards.
    template <class Fn>
    void for_each(Fn &&fn) {
        std::vector<std::byte> path;
        walk(root_, path, fn);
    }

    // Drop every empty branch (after a for_each that emptied values).
    void prune_all() { compact(root_, true); }

    bool empty() const { return root_.value.empty() && root_.children.empty(); }

private:
    struct node {
        std::vector<std::byte> label;  // edge from the parent; empty only at root
        Value value{};
        std::vector<node> children;  // sorted by label[0]

        node() = default;
        explicit node(bytes l) : label(l.begin(), l.end()) {}

        auto lower(std::byte b) {
            return std::lower_bound(children.begin(), children.end(), b,
                                    [](const node &c, std::byte v) { return c.label[0] < v; });
        }
        auto lower(std::byte b) const {
            return std::lower_bound(children.begin(), children.end(), b,
                                    [](const node &c, std::byte v) { return c.label[0] < v; });
        }
    };

    static std::size_t common(const std::vector<std::byte> &a, bytes b) {
        const std::size_t n = std::min(a.size(), b.size());
        std::size_t k = 0;
        while (k < n && a[k] == b[k])
            ++k;
        return k;
    }
    static bool starts_with(bytes data, const std::vector<std::byte> &label) {
        return data.size() >= label.size() && std::equal(label.begin(), label.end(), data.begin());
    }
    // Turn `c` (label L) into a node with label L[0,k) whose only child has L[k,..).
    static void split(node &c, std::size_t k) {
        node tail(bytes(c.label).subspan(k));
        tail.value = std::move(c.value);
        tail.children = std::move(c.children);
        c.label.resize(k);
        c.value = Value{};
        c.children.clear();
        c.children.push_back(std::move(tail));
    }
    static void merge_with_only_child(node &c) {
        node only = std::move(c.children.front());
        c.label.insert(c.label.end(), only.label.begin(), only.label.end());
        c.value = std::move(only.value);
        c.children = std::move(only.children);
    }
    template <class Fn>
    static void walk(node &n, std::vector<std::byte> &path, Fn &fn) {
        path.insert(path.end(), n.label.begin(), n.label.end());
        if (!n.value.empty())
            fn(bytes(path), n.value);
        for (node &c : n.children)
            walk(c, path, fn);
        path.resize(path.size() - n.label.size());
    }
    // Returns true when `n` is now removable (empty leaf).
    static bool compact(node &n, bool is_root) {
        std::erase_if(n.children, [](node &c) { return compact(c, false); });
        if (is_root)
            return false;
        if (n.value.empty() && n.children.empty())
            return true;
        if (n.value.empty() && n.children.size() == 1)
            merge_with_only_child(n);
        return false;
    }

    node root_;
};

}  // namespace zlink
