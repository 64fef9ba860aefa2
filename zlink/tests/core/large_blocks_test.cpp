// large_blocks: freed large message blocks are kept (bounded) and reused.
// The cache is process-wide, so each test uses sizes no other test uses and
// looks at changes in held_bytes(), not at its absolute value.
#include "core/large_blocks.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <set>
#include <vector>

#include "core/msg.hpp"

namespace lb = zlink::large_blocks;

TEST(LargeBlocks, AGivenBlockIsTakenAgainForTheSameSize) {
    const size_t n = 300001;
    void *a = lb::take(n);
    ASSERT_NE(a, nullptr);
    const size_t before = lb::held_bytes();
    lb::give(a, n);
    EXPECT_EQ(lb::held_bytes(), before + n);
    void *b = lb::take(n);
    EXPECT_EQ(b, a);
    EXPECT_EQ(lb::held_bytes(), before);
    lb::give(b, n);
}

TEST(LargeBlocks, ReuseIsBoundedToAnEighthLarger) {
    const size_t big = 400003;
    void *a = lb::take(big);
    ASSERT_NE(a, nullptr);
    lb::give(a, big);
    void *small = lb::take(300007);  // 100 KB spare > an eighth of 300 KB: not this one
    EXPECT_NE(small, a);
    void *close = lb::take(380011);  // 20 KB spare <= an eighth: reused
    EXPECT_EQ(close, a);
    std::memset(close, 1, 380011);  // the whole request is usable
    lb::give(small, 300007);
    lb::give(close, 380011);
}

TEST(LargeBlocks, SmallBlocksAreNotKept) {
    const size_t before = lb::held_bytes();
    void *a = lb::take(lb::min_bytes - 1);
    ASSERT_NE(a, nullptr);
    lb::give(a, lb::min_bytes - 1);
    EXPECT_EQ(lb::held_bytes(), before);
}

TEST(LargeBlocks, TheBudgetBoundsWhatIsHeld) {
    lb::release_unused(std::chrono::steady_clock::now());  // no decay step inside the test
    std::vector<void *> blocks;
    const size_t n = 1000033;
    for (size_t i = 0; i < lb::budget() / n + 4; ++i)
        blocks.push_back(lb::take(n));
    for (void *b : blocks)
        lb::give(b, n);
    EXPECT_LE(lb::held_bytes(), lb::budget());
    ASSERT_GE(lb::budget(), n);                     // the default budget, as the tests run
    EXPECT_GT(lb::held_bytes(), lb::budget() - n);  // it filled up to the budget
    // Drain them so later tests see room again.
    for (size_t i = 0; i < blocks.size(); ++i)
        lb::give(lb::take(n), 0);  // bytes 0: freed, never kept
}

// A stream keeps as many blocks in flight as its pipes allow (inproc PUSH_PULL at the
// default HWMs: 2,000 messages): all of them come back for the next burst, not the
// 32 the cache once kept (the rest were malloc'd and faulted in again).
TEST(LargeBlocks, EveryBlockOfABurstIsReusedByTheNextBurst) {
    lb::release_unused(std::chrono::steady_clock::now());
    const size_t n = 70001, burst = 300;
    std::set<void *> first;
    for (size_t i = 0; i < burst; ++i)
        first.insert(lb::take(n));
    ASSERT_EQ(first.size(), burst);
    for (void *b : first)
        lb::give(b, n);
    size_t reused = 0;
    std::vector<void *> second;
    for (size_t i = 0; i < burst; ++i) {
        second.push_back(lb::take(n));
        reused += first.count(second.back());
    }
    EXPECT_EQ(reused, burst);
    for (void *b : second)
        lb::give(b, 0);  // freed, never kept
}

// What no take needed for a whole interval goes back to malloc, down to the
// resident bytes; an interval that has not passed frees nothing.
TEST(LargeBlocks, BlocksIdleForAnIntervalAreFreedDownToTheResidentBytes) {
    const auto t0 = std::chrono::steady_clock::now();
    lb::release_unused(t0);
    const size_t n = 90001, burst = 200;  // 18 MB, above the resident 8 MiB
    std::vector<void *> blocks;
    for (size_t i = 0; i < burst; ++i)
        blocks.push_back(lb::take(n));
    for (void *b : blocks)
        lb::give(b, n);
    ASSERT_GT(lb::held_bytes(), lb::resident_bytes);
    const auto step = lb::idle_interval + std::chrono::milliseconds(1);
    EXPECT_EQ(lb::release_unused(t0 + lb::idle_interval / 2), 0u);
    lb::release_unused(t0 + step);  // the burst arrived during it: none held all through
    const size_t before = lb::held_bytes();
    EXPECT_GT(lb::release_unused(t0 + 2 * step), 0u);  // a whole interval idle
    EXPECT_LT(lb::held_bytes(), before);
    EXPECT_LE(lb::held_bytes(), lb::resident_bytes);
    EXPECT_GT(lb::held_bytes() + n, lb::resident_bytes);   // the resident ones stay
    lb::release_unused(std::chrono::steady_clock::now());  // back to the real clock
}

TEST(LargeBlocks, ClosingALargeMessageKeepsItsBlock) {
    const size_t before = lb::held_bytes();
    zlink::msg_t m;
    ASSERT_EQ(m.init_size(512 * 1024 + 17), 0);
    void *data = m.data();
    m.close();
    EXPECT_GT(lb::held_bytes(), before);
    zlink::msg_t again;
    ASSERT_EQ(again.init_size(512 * 1024 + 17), 0);
    EXPECT_EQ(again.data(), data);
    EXPECT_EQ(lb::held_bytes(), before);
    again.close();
}

TEST(LargeBlocks, TheBudgetComesFromTheEnvironmentValue) {
    EXPECT_EQ(lb::budget_from(nullptr), lb::default_budget);
    EXPECT_EQ(lb::budget_from("0"), 0u);
    EXPECT_EQ(lb::budget_from("1048576"), 1048576u);
    testing::internal::CaptureStderr();
    EXPECT_EQ(lb::budget_from("lots"), lb::default_budget);
    EXPECT_EQ(lb::budget_from("-5"), lb::default_budget);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("ZMQ_ASIO_BLOCK_CACHE='lots'"), std::string::npos) << err;
    EXPECT_NE(err.find("allowed"), std::string::npos) << err;
}

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>

// Under ASan a kept block is poisoned, so a message body used after its close
// is still reported, as it would be were the block freed.
TEST(LargeBlocks, AKeptBlockIsPoisonedUnderAsan) {
    const size_t n = 200003;
    void *a = lb::take(n);
    ASSERT_NE(a, nullptr);
    lb::give(a, n);
    EXPECT_TRUE(__asan_address_is_poisoned(a));
    void *b = lb::take(n);
    ASSERT_EQ(b, a);
    EXPECT_FALSE(__asan_address_is_poisoned(b));
    lb::give(b, n);
}
#endif
