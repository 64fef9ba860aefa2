// msg_t: inline vs shared bodies, zero-copy free callback, move/copy.
#include "core/msg.hpp"

#include <gtest/gtest.h>

#include <cstring>

using zlink::msg_t;

TEST(Msg, SmallBodiesAreInline) {
    msg_t m;
    ASSERT_EQ(m.init_size(msg_t::max_inline), 0);
    EXPECT_FALSE(m.is_external());
    EXPECT_EQ(m.size(), msg_t::max_inline);
    // The body is inside the object itself.
    auto *p = static_cast<unsigned char *>(m.data());
    auto *base = reinterpret_cast<unsigned char *>(&m);
    EXPECT_TRUE(p >= base && p < base + sizeof m);
    m.close();
}

TEST(Msg, CopySharesLargeBody) {
    msg_t a, b;
    ASSERT_EQ(a.init_size(1000), 0);
    std::memset(a.data(), 7, 1000);
    b.init();
    ASSERT_EQ(b.copy(a), 0);
    EXPECT_EQ(a.data(), b.data());
    EXPECT_TRUE(a.is_shared());
    a.close();
    EXPECT_EQ(static_cast<unsigned char *>(b.data())[999], 7);
    b.close();
}

static int freed = 0;
static void free_fn(void *data, void *hint) {
    EXPECT_EQ(hint, reinterpret_cast<void *>(0x42));
    delete[] static_cast<char *>(data);
    ++freed;
}

TEST(Msg, InitDataIsZeroCopyAndFreedOnce) {
    freed = 0;
    char *buf = new char[4096];
    msg_t a, b;
    ASSERT_EQ(a.init_data(buf, 4096, free_fn, reinterpret_cast<void *>(0x42)), 0);
    EXPECT_EQ(a.data(), buf);
    b.init();
    b.copy(a);
    a.close();
    EXPECT_EQ(freed, 0);
    b.close();
    EXPECT_EQ(freed, 1);
}

TEST(Msg, MoveLeavesSourceEmpty) {
    msg_t a, b;
    a.init_buffer("hello", 5);
    a.set_flags(msg_t::more);
    b.init();
    b.move(a);
    EXPECT_EQ(b.size(), 5u);
    EXPECT_TRUE(b.has_more());
    EXPECT_EQ(a.size(), 0u);
    EXPECT_FALSE(a.has_more());
    a.close();
    b.close();
}
