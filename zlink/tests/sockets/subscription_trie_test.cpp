// Header under test first: proves it stands alone.
#include "policy/pipe_trie.hpp"
#include "policy/subscription_trie.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace {

using zlink::pipe_trie;
using zlink::subscription_trie;

std::set<std::string> prefixes(subscription_trie &t) {
    std::set<std::string> out;
    t.for_each([&](std::span<const std::byte> p) {
        out.emplace(reinterpret_cast<const char *>(p.data()), p.size());
    });
    return out;
}

TEST(SubscriptionTrie, NothingMatchesWithoutSubscriptions) {
    subscription_trie t;
    EXPECT_FALSE(t.match("anything"));
    EXPECT_FALSE(t.match(""));
}

TEST(SubscriptionTrie, EmptyPrefixMatchesEverything) {
    subscription_trie t;
    EXPECT_TRUE(t.add(""));
    EXPECT_TRUE(t.match(""));
    EXPECT_TRUE(t.match("x"));
    EXPECT_TRUE(t.match(std::string(1000, 'z')));
}

TEST(SubscriptionTrie, PrefixMatching) {
    subscription_trie t;
    t.add("ab");
    EXPECT_TRUE(t.match("ab"));
    EXPECT_TRUE(t.match("abc"));
    EXPECT_FALSE(t.match("a"));
    EXPECT_FALSE(t.match("ba"));
    EXPECT_FALSE(t.match("aB"));
    EXPECT_FALSE(t.match(""));
}

TEST(SubscriptionTrie, BinaryPrefixesIncludingZeroBytes) {
    subscription_trie t;
    const std::string p("\0\x01\xff", 3);
    t.add(p);
    EXPECT_TRUE(t.match(p + "tail"));
    EXPECT_FALSE(t.match(std::string("\0\x01", 2)));
    EXPECT_FALSE(t.match(std::string("\0\x02\xff", 3)));
}

TEST(SubscriptionTrie, SplitAndNestedPrefixes) {
    subscription_trie t;
    EXPECT_TRUE(t.add("abcdef"));
    EXPECT_TRUE(t.add("abcxyz"));  // splits the "abcdef" edge at "abc"
    EXPECT_FALSE(t.match("abc"));  // inner node without a value
    EXPECT_TRUE(t.add("ab"));      // splits again, value on the inner node
    EXPECT_TRUE(t.match("abc"));
    EXPECT_TRUE(t.match("abz"));  // via "ab"
    EXPECT_TRUE(t.remove("ab"));
    EXPECT_FALSE(t.match("abz"));
    EXPECT_TRUE(t.match("abcdefg"));
    EXPECT_TRUE(t.match("abcxyz"));
    EXPECT_FALSE(t.match("abcdxx"));
    EXPECT_EQ(prefixes(t), (std::set<std::string>{"abcdef", "abcxyz"}));
}

TEST(SubscriptionTrie, CountedSubscriptionsReportTransitions) {
    subscription_trie t;
    EXPECT_TRUE(t.add("topic"));      // 0 -> 1: tell upstream
    EXPECT_FALSE(t.add("topic"));     // 1 -> 2
    EXPECT_FALSE(t.remove("topic"));  // 2 -> 1: still subscribed
    EXPECT_TRUE(t.match("topic.1"));
    EXPECT_TRUE(t.remove("topic"));  // 1 -> 0: tell upstream
    EXPECT_FALSE(t.match("topic.1"));
    EXPECT_FALSE(t.remove("topic"));  // not subscribed: no-op
    EXPECT_EQ(t.size(), 0u);
}

TEST(SubscriptionTrie, RemovingUnknownPrefixIsNoOp) {
    subscription_trie t;
    t.add("abc");
    EXPECT_FALSE(t.remove("ab"));    // inner point of an edge
    EXPECT_FALSE(t.remove("abcd"));  // beyond a leaf
    EXPECT_FALSE(t.remove("x"));
    EXPECT_TRUE(t.match("abc"));
}

TEST(SubscriptionTrie, RemoveKeepsSiblingsAndPrunes) {
    subscription_trie t;
    for (const char *p : {"a", "ab", "abc", "b", "ba"})
        t.add(p);
    EXPECT_EQ(t.size(), 5u);
    EXPECT_TRUE(t.remove("ab"));
    EXPECT_TRUE(t.remove("a"));
    EXPECT_TRUE(t.match("abcd"));
    EXPECT_FALSE(t.match("abd"));
    EXPECT_EQ(prefixes(t), (std::set<std::string>{"abc", "b", "ba"}));
    for (const char *p : {"abc", "b", "ba"})
        EXPECT_TRUE(t.remove(p));
    EXPECT_EQ(t.size(), 0u);
    EXPECT_FALSE(t.match("b"));
}

TEST(SubscriptionTrie, HugePrefixIsOneNodeNotAMillion) {
    // A hostile 1 MiB subscription must neither blow the stack nor memory.
    subscription_trie t;
    const std::string big(1 << 20, 'q');
    EXPECT_TRUE(t.add(big));
    EXPECT_TRUE(t.match(big + "!"));
    EXPECT_FALSE(t.match(big.substr(1)));
    EXPECT_TRUE(t.remove(big));
}

struct fake_pipe {
    int id;
};

TEST(PipeTrie, FirstSubscriberOfAPrefixIsReported) {
    pipe_trie<fake_pipe> t;
    fake_pipe a{1}, b{2};
    EXPECT_TRUE(t.add("news", &a));
    EXPECT_FALSE(t.add("news", &b));  // prefix already wanted
    EXPECT_FALSE(t.add("news", &a));  // duplicate from the same pipe
    using r = pipe_trie<fake_pipe>::removed;
    EXPECT_EQ(t.remove("news", &a), r::others_remain);
    EXPECT_EQ(t.remove("news", &a), r::not_subscribed);
    EXPECT_EQ(t.remove("news", &b), r::last);
    EXPECT_TRUE(t.empty());
}

TEST(PipeTrie, MatchReportsEverySubscribedPipe) {
    pipe_trie<fake_pipe> t;
    fake_pipe a{1}, b{2}, c{3};
    t.add("", &a);
    t.add("wea", &b);
    t.add("weather", &c);
    t.add("sport", &c);
    std::vector<int> hit;
    t.match(std::span(reinterpret_cast<const std::byte *>("weather.uk"), 10),
            [&](fake_pipe *p) { hit.push_back(p->id); });
    std::sort(hit.begin(), hit.end());
    EXPECT_EQ(hit, (std::vector<int>{1, 2, 3}));
    hit.clear();
    t.match(std::span(reinterpret_cast<const std::byte *>("wex"), 3),
            [&](fake_pipe *p) { hit.push_back(p->id); });
    EXPECT_EQ(hit, (std::vector<int>{1}));
}

TEST(PipeTrie, RemovePipeReportsPrefixesNobodyWants) {
    pipe_trie<fake_pipe> t;
    fake_pipe a{1}, b{2};
    t.add("x", &a);
    t.add("y", &a);
    t.add("y", &b);
    t.add("yz", &a);
    std::set<std::string> gone;
    auto collect = [&](std::span<const std::byte> p) {
        gone.emplace(reinterpret_cast<const char *>(p.data()), p.size());
    };
    t.remove_pipe(&a, collect, /*only_last=*/true);
    EXPECT_EQ(gone, (std::set<std::string>{"x", "yz"}));
    int hits = 0;
    t.match(std::span(reinterpret_cast<const std::byte *>("yz"), 2), [&](fake_pipe *) { ++hits; });
    EXPECT_EQ(hits, 1);  // only b's "y"
    gone.clear();
    t.remove_pipe(&b, collect, /*only_last=*/false);
    EXPECT_EQ(gone, (std::set<std::string>{"y"}));
    EXPECT_TRUE(t.empty());
}

}  // namespace
