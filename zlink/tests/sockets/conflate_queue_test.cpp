// The ZMQ_CONFLATE queue (core/msg_queue.hpp) on its own: what it keeps, in
// which order, that replaced messages are freed, and the wake-up handshake.
// Header under test first: proves it stands alone.
#include "core/msg_queue.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace {

using zlink::msg_queue;
using zlink::msg_t;

int g_freed = 0;
void count_free(void *data, void *) {
    ++g_freed;
    delete[] static_cast<char *>(data);
}

// A message whose body lives outside msg_t, so freeing it is observable.
msg_t external(const std::string &body) {
    char *buf = new char[body.size()];
    std::memcpy(buf, body.data(), body.size());
    msg_t m;
    m.init_data(buf, body.size(), count_free, nullptr);
    return m;
}

std::string text(msg_t &m) { return {static_cast<const char *>(m.data()), m.size()}; }

std::string read_one(msg_queue &q) {
    msg_t m;
    m.init();
    if (!q.read(m))
        return "<none>";
    std::string s = m.is_delimiter() ? "<delimiter>" : text(m);
    m.close();
    return s;
}

TEST(ConflateQueue, KeepsOnlyTheNewestAndFreesTheRest) {
    g_freed = 0;
    {
        msg_queue q(true);
        for (int i = 0; i < 5; ++i)
            q.write(external("m" + std::to_string(i)), false);
        EXPECT_EQ(g_freed, 4);  // m0..m3 replaced and freed at once
        EXPECT_EQ(read_one(q), "m4");
        EXPECT_EQ(read_one(q), "<none>");
        q.write(external("left"), false);
    }
    EXPECT_EQ(g_freed, 6);  // m4 read and closed; "left" freed with the queue
}

TEST(ConflateQueue, RoutingIdThenValueThenDelimiter) {
    msg_queue q(true);
    msg_t id;
    id.init_buffer("peer", 4);
    id.set_flags(msg_t::routing_id);
    q.write(id, false);
    q.write(external("old"), false);
    q.write(external("new"), false);
    msg_t d;
    d.init_delimiter();
    q.write(d, false);
    EXPECT_EQ(read_one(q), "peer");  // a pipe still announces its peer
    EXPECT_EQ(read_one(q), "new");   // the last value survives the pipe's end
    EXPECT_EQ(read_one(q), "<delimiter>");
    EXPECT_EQ(read_one(q), "<none>");
}

TEST(ConflateQueue, MultipartKeepsTheLastFrameAsAWholeMessage) {
    msg_queue q(true);
    msg_t a = external("a"), b = external("b");
    a.set_flags(msg_t::more);
    q.write(a, true);
    q.write(b, false);
    msg_t m;
    m.init();
    ASSERT_TRUE(q.read(m));
    EXPECT_EQ(text(m), "b");
    EXPECT_FALSE(m.has_more());
    m.close();
    msg_t c = external("c");
    c.set_flags(msg_t::more);
    q.write(c, true);
    m.init();
    ASSERT_TRUE(q.read(m));
    EXPECT_FALSE(m.has_more()) << "a reader must never wait for an overwritten tail";
    m.close();
    msg_t u;
    EXPECT_FALSE(q.unwrite(u));  // nothing to withdraw: each frame stands alone
}

// Same contract as ypipe: flush() returns false exactly once after the
// reader found the queue empty, so exactly one wake-up is sent per sleep.
TEST(ConflateQueue, WakeUpHandshake) {
    msg_queue q(true);
    q.write(external("x"), false);
    EXPECT_TRUE(q.flush());  // reader never slept
    EXPECT_EQ(read_one(q), "x");
    EXPECT_FALSE(q.check_read());  // now asleep
    EXPECT_TRUE(q.flush());        // nothing new: no wake-up due
    q.write(external("y"), false);
    EXPECT_FALSE(q.flush());  // wake it
    q.write(external("z"), false);
    EXPECT_TRUE(q.flush());  // already woken
    EXPECT_TRUE(q.check_read());
    EXPECT_EQ(q.front().size(), 1u);
    EXPECT_EQ(read_one(q), "z");
}

// Without conflate the queue is the ordinary ypipe: everything, in order.
TEST(ConflateQueue, PlainQueueKeepsEverything) {
    msg_queue q(false);
    for (int i = 0; i < 3; ++i)
        q.write(external("m" + std::to_string(i)), false);
    q.flush();
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(read_one(q), "m" + std::to_string(i));
}

}  // namespace
