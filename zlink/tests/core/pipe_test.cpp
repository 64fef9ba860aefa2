// ypipe / pipe_t: ordering across threads, multipart atomicity, HWM.
#include "core/ypipe.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "core/msg.hpp"

using zlink::msg_t;
using zlink::ypipe;

TEST(Ypipe, ReaderSleepsAndWriterIsToldToWakeIt) {
    ypipe<msg_t, 4> q;
    msg_t m;
    EXPECT_FALSE(q.check_read());  // empty: reader now asleep
    m.init_buffer("a", 1);
    q.write(m, false);
    EXPECT_FALSE(q.flush());  // reader was asleep: caller must wake it
    m.init_buffer("b", 1);
    q.write(m, false);
    EXPECT_TRUE(q.flush());  // reader not asleep any more (it has not looked yet)
    msg_t out;
    ASSERT_TRUE(q.read(out));
    EXPECT_EQ(*static_cast<char *>(out.data()), 'a');
    out.close();
}

TEST(Ypipe, IncompleteItemsStayInvisible) {
    ypipe<msg_t, 4> q;
    msg_t m;
    m.init_buffer("1", 1);
    q.write(m, true);
    q.flush();
    EXPECT_FALSE(q.check_read());
    m.init_buffer("2", 1);
    q.write(m, false);
    q.flush();
    EXPECT_TRUE(q.check_read());
}

TEST(Ypipe, TwoThreadsPreserveOrderAcrossChunks) {
    ypipe<msg_t, 8> q;
    constexpr int n = 200000;
    std::thread writer([&] {
        for (int i = 0; i < n; ++i) {
            msg_t m;
            m.init_size(sizeof i);
            std::memcpy(m.data(), &i, sizeof i);
            q.write(m, false);
            q.flush();
        }
    });
    int expected = 0;
    while (expected < n) {
        msg_t m;
        if (!q.read(m))
            continue;
        int v;
        std::memcpy(&v, m.data(), sizeof v);
        ASSERT_EQ(v, expected);
        ++expected;
        m.close();
    }
    writer.join();
}
