// Headers under test first: proves they stand alone.
#include "policy/distribute.hpp"
#include "policy/fair_queue.hpp"
#include "policy/load_balance.hpp"
#include "policy/routing_table.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_pipe.hpp"

namespace {

using namespace zlink;
using zlink::testing::fake_msg;
using zlink::testing::fake_pipe;
using zlink::testing::frame;

auto drop = [](fake_msg &m) { m.body.clear(); };

// --- fair_queue -----------------------------------------------------------

TEST(FairQueue, BerserkSenderCannotStarveOthers) {
    fake_pipe busy, quiet;
    for (int i = 0; i < 100; ++i)
        busy.push("b" + std::to_string(i));
    quiet.push("q0");
    quiet.push("q1");
    fair_queue<fake_pipe> fq;
    fq.attach(&busy);
    fq.attach(&quiet);
    std::vector<std::string> got;
    fake_msg m;
    for (int i = 0; i < 4 && fq.recv(m); ++i)
        got.push_back(m.body);
    // Alternates between the two pipes: quiet's messages come within 4 reads.
    int quiet_seen = 0;
    for (auto &s : got)
        quiet_seen += s[0] == 'q';
    EXPECT_EQ(quiet_seen, 2);
}

TEST(FairQueue, MultipartStaysOnOnePipe) {
    fake_pipe a, b;
    a.push("a1", true);
    a.push("a2", true);
    a.push("a3");
    b.push("b1");
    fair_queue<fake_pipe> fq;
    fq.attach(&a);
    fq.attach(&b);
    std::vector<std::string> got;
    fake_msg m;
    fake_pipe *from = nullptr;
    while (fq.recv(m, &from))
        got.push_back(m.body);
    // Whichever comes first, a's three frames are contiguous.
    auto it = std::find(got.begin(), got.end(), "a1");
    ASSERT_NE(it, got.end());
    ASSERT_LE(it + 3, got.end());
    EXPECT_EQ(*(it + 1), "a2");
    EXPECT_EQ(*(it + 2), "a3");
    EXPECT_EQ(got.size(), 4u);
}

TEST(FairQueue, DryPipeReturnsAfterActivation) {
    fake_pipe a;
    fair_queue<fake_pipe> fq;
    fq.attach(&a);
    fake_msg m;
    EXPECT_FALSE(fq.has_in());
    EXPECT_FALSE(fq.recv(m));
    a.push("late");
    EXPECT_FALSE(fq.has_in());  // deactivated until the pipe says otherwise
    fq.activated(&a);
    ASSERT_TRUE(fq.recv(m));
    EXPECT_EQ(m.body, "late");
    EXPECT_EQ(fq.last_in(), &a);
}

TEST(FairQueue, TerminatedPipeIsForgotten) {
    fake_pipe a, b;
    a.push("a");
    b.push("b");
    fair_queue<fake_pipe> fq;
    fq.attach(&a);
    fq.attach(&b);
    fq.terminated(&a);
    fake_msg m;
    ASSERT_TRUE(fq.recv(m));
    EXPECT_EQ(m.body, "b");
    EXPECT_FALSE(fq.recv(m));
    EXPECT_EQ(fq.size(), 1u);
}

// --- load_balance ---------------------------------------------------------

TEST(LoadBalance, RoundRobinOverPipes) {
    fake_pipe a, b, c;
    load_balance<fake_pipe> lb;
    lb.attach(&a);
    lb.attach(&b);
    lb.attach(&c);
    for (int i = 0; i < 6; ++i) {
        fake_msg m = frame(std::to_string(i));
        ASSERT_EQ(lb.send(m, drop), send_result::sent);
    }
    EXPECT_EQ(a.messages, 2u);
    EXPECT_EQ(b.messages, 2u);
    EXPECT_EQ(c.messages, 2u);
}

TEST(LoadBalance, SkipsPipesAtHwmAndReportsAgainWhenAllFull) {
    fake_pipe full(1), roomy(3);
    full.push("x");  // at HWM
    load_balance<fake_pipe> lb;
    lb.attach(&full);
    lb.attach(&roomy);
    for (int i = 0; i < 3; ++i) {
        fake_msg m = frame("m");
        ASSERT_EQ(lb.send(m, drop), send_result::sent);
    }
    EXPECT_EQ(roomy.messages, 3u);
    fake_msg m = frame("blocked");
    EXPECT_EQ(lb.send(m, drop), send_result::again);
    EXPECT_EQ(m.body, "blocked");  // untouched: caller may retry
    EXPECT_FALSE(lb.has_out());
    full.pop_body();
    lb.activated(&full);
    EXPECT_TRUE(lb.has_out());
    EXPECT_EQ(lb.send(m, drop), send_result::sent);
    EXPECT_EQ(full.frames.back().body, "blocked");
}

TEST(LoadBalance, MultipartGoesWholeToOnePipe) {
    fake_pipe a(1), b(1);
    load_balance<fake_pipe> lb;
    lb.attach(&a);
    lb.attach(&b);
    for (const char *s : {"1", "2", "3"}) {
        fake_msg m = frame(s, std::string(s) != "3");
        ASSERT_EQ(lb.send(m, drop), send_result::sent);  // HWM 1 still takes all frames
    }
    EXPECT_EQ(a.frames.size() + b.frames.size(), 3u);
    EXPECT_TRUE(a.frames.size() == 3 || b.frames.size() == 3);
}

TEST(LoadBalance, PipeLostMidMessageDropsTheRest) {
    fake_pipe a, b;
    load_balance<fake_pipe> lb;
    lb.attach(&a);
    lb.attach(&b);
    fake_msg m1 = frame("p1", true);
    ASSERT_EQ(lb.send(m1, drop), send_result::sent);
    fake_pipe *first = a.frames.empty() ? &b : &a;
    fake_pipe *other = first == &a ? &b : &a;
    first->closed = true;
    lb.terminated(first);
    fake_msg m2 = frame("p2", true), m3 = frame("p3");
    EXPECT_EQ(lb.send(m2, drop), send_result::sent);
    EXPECT_EQ(lb.send(m3, drop), send_result::sent);
    EXPECT_TRUE(other->frames.empty());  // no truncated message elsewhere
    fake_msg next = frame("next");
    EXPECT_EQ(lb.send(next, drop), send_result::sent);
    EXPECT_EQ(other->pop_body(), "next");
}

// --- distribute -----------------------------------------------------------

TEST(Distribute, CopiesToMatchingPipesOnly) {
    fake_pipe a, b, c;
    distribute<fake_pipe> d;
    d.attach(&a);
    d.attach(&b);
    d.attach(&c);
    d.match(&a);
    d.match(&c);
    d.match(&a);  // idempotent
    fake_msg m = frame("hello");
    d.send_to_matching(m, drop);
    EXPECT_EQ(a.pop_body(), "hello");
    EXPECT_EQ(c.pop_body(), "hello");
    EXPECT_FALSE(b.check_read());
    EXPECT_FALSE(a.check_read());  // exactly one copy
}

TEST(Distribute, FullPipeMissesMessagesOthersKeepGettingThem) {
    fake_pipe slow(2), fast;
    distribute<fake_pipe> d;
    d.attach(&slow);
    d.attach(&fast);
    for (int i = 0; i < 5; ++i) {
        fake_msg m = frame(std::to_string(i));
        d.send_to_all(m, drop);
    }
    EXPECT_EQ(fast.messages, 5u);
    EXPECT_EQ(slow.messages, 2u);  // 2, 3, 4 dropped for it
    EXPECT_EQ(slow.pop_body(), "0");
    EXPECT_EQ(slow.pop_body(), "1");
    d.activated(&slow);
    fake_msg m = frame("5");
    d.send_to_all(m, drop);
    EXPECT_EQ(slow.pop_body(), "5");
}

TEST(Distribute, MultipartAtomicPerPipeAndLateJoinerWaitsForBoundary) {
    fake_pipe a(1);
    distribute<fake_pipe> d;
    d.attach(&a);
    fake_msg f1 = frame("1", true);
    d.send_to_all(f1, drop);
    fake_pipe late;
    d.attach(&late);  // mid-message: must not get a message tail
    fake_msg f2 = frame("2", true), f3 = frame("3");
    d.send_to_all(f2, drop);
    d.send_to_all(f3, drop);
    EXPECT_EQ(a.frames.size(), 3u);  // HWM 1 but the whole message got through
    EXPECT_TRUE(late.frames.empty());
    fake_msg n = frame("next");
    d.send_to_all(n, drop);
    EXPECT_EQ(late.pop_body(), "next");
}

TEST(Distribute, CheckHwmSeesFullMatchingPipe) {
    fake_pipe a(1), b;
    distribute<fake_pipe> d;
    d.attach(&a);
    d.attach(&b);
    d.match(&a);
    d.match(&b);
    EXPECT_TRUE(d.check_hwm());
    a.push("fill");
    EXPECT_FALSE(d.check_hwm());
    d.terminated(&a);
    d.unmatch();
    d.match(&b);
    EXPECT_TRUE(d.check_hwm());
}

// ZMQ_INVERT_MATCHING: the pipes that did not match get the message, those
// that matched do not; a full pipe stays out either way.
TEST(Distribute, ReverseMatchSelectsTheOthers) {
    fake_pipe a, b, c, full(1);
    distribute<fake_pipe> d;
    for (fake_pipe *p : {&a, &b, &c, &full})
        d.attach(p);
    fake_msg fill = frame("fill");
    d.send_to_all(fill, drop);  // `full` is at its HWM now (and leaves the active zone)
    fake_msg x = frame("x");
    d.send_to_all(x, drop);
    for (fake_pipe *p : {&a, &b, &c})
        while (p->check_read())
            p->pop_body();
    d.match(&b);
    d.reverse_match();
    fake_msg m = frame("inverted");
    d.send_to_matching(m, drop);
    EXPECT_EQ(a.pop_body(), "inverted");
    EXPECT_EQ(c.pop_body(), "inverted");
    EXPECT_FALSE(b.check_read());
    EXPECT_EQ(full.frames.size(), 1u);  // only "fill"
    d.unmatch();
    d.reverse_match();  // nothing matched: everyone active
    fake_msg all = frame("all");
    d.send_to_matching(all, drop);
    for (fake_pipe *p : {&a, &b, &c})
        EXPECT_EQ(p->pop_body(), "all");
}

// --- routing_table --------------------------------------------------------

TEST(RoutingTable, GeneratedIdsAreFiveBytesStartingWithZero) {
    routing_table<fake_pipe> t;
    const std::string a = t.generate(), b = t.generate();
    EXPECT_EQ(a.size(), 5u);
    EXPECT_EQ(a[0], '\0');
    EXPECT_NE(a, b);
}

TEST(RoutingTable, AddFindRemove) {
    routing_table<fake_pipe> t;
    fake_pipe p, q;
    EXPECT_TRUE(t.add(&p, "peer"));
    EXPECT_FALSE(t.add(&q, "peer"));  // taken
    EXPECT_EQ(t.find("peer"), &p);
    EXPECT_EQ(*t.id_of(&p), "peer");
    EXPECT_EQ(t.id_of(&q), nullptr);
    t.remove(&p);
    EXPECT_EQ(t.find("peer"), nullptr);
    EXPECT_EQ(t.size(), 0u);
}

TEST(RoutingTable, HandOverRenamesThePreviousOwner) {
    routing_table<fake_pipe> t;
    fake_pipe old_pipe, new_pipe;
    t.add(&old_pipe, "A");
    EXPECT_EQ(t.hand_over(&new_pipe, "A"), &old_pipe);
    EXPECT_EQ(t.find("A"), &new_pipe);
    ASSERT_NE(t.id_of(&old_pipe), nullptr);
    EXPECT_NE(*t.id_of(&old_pipe), "A");
    EXPECT_EQ(t.size(), 2u);
}

}  // namespace
