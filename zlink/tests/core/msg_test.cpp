// msg_t: inline vs shared bodies, zero-copy free callback, move/copy.
#include "core/msg.hpp"

#include <gtest/gtest.h>

#include <cerrno>
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

// Windows: many small messages backed by one receive buffer, freed with the last.
TEST(Msg, WindowsShareTheOwnersBlockAndOutliveIt) {
    msg_t chunk, w1, w2;
    ASSERT_EQ(chunk.init_size(4096), 0);
    auto *base = static_cast<unsigned char *>(chunk.data());
    std::memcpy(base + 100, "first window", 12);
    std::memcpy(base + 2000, "second", 6);
    ASSERT_EQ(w1.init_window(chunk, base + 100, 12), 0);
    ASSERT_EQ(w2.init_window(chunk, base + 2000, 6), 0);
    EXPECT_TRUE(chunk.is_shared());
    EXPECT_EQ(w1.data(), base + 100);
    EXPECT_EQ(w2.size(), 6u);
    chunk.close();  // the windows keep the block (ASan: no use after free below)
    EXPECT_EQ(std::memcmp(w1.data(), "first window", 12), 0);
    w1.close();
    EXPECT_EQ(std::memcmp(w2.data(), "second", 6), 0);
    w2.close();  // last reference: the block goes (LSan: no leak)
}

TEST(Msg, WindowOutsideTheBlockOrOnAnInlineOwnerIsRefused) {
    msg_t chunk, small, w;
    ASSERT_EQ(chunk.init_size(100), 0);
    auto *base = static_cast<unsigned char *>(chunk.data());
    EXPECT_EQ(w.init_window(chunk, base + 90, 20), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_TRUE(w.valid());
    ASSERT_EQ(small.init_size(10), 0);
    EXPECT_EQ(w.init_window(small, small.data(), 5), -1);
    EXPECT_FALSE(chunk.is_shared()) << "a refused window took a reference";
    chunk.close();
    small.close();
    w.close();
}
