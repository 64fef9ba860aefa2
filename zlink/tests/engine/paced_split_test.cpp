// paced_first_write: which lone batches go short piece first on a paced tcp
// connection, and paced_split's lookup of a real loopback socket's congestion
// control, segment size and pacing rate (transport/paced_split.hpp).
#include "transport/paced_split.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "loopback_socket.hpp"

using zlink::paced_first_write;
using zlink::paced_split;
using zlink::paced_wait_limit_ns;

namespace {

constexpr std::size_t loopback_mss = 65483;  // a 65,536-byte loopback MTU with timestamps
constexpr std::size_t lone_64k = 65536 + 9;  // a 64 KiB body and its long-frame header
// The rate at which a full loopback segment's pacing wait is exactly the limit.
constexpr std::uint64_t rate_at_limit = loopback_mss * 1'000'000'000ull / paced_wait_limit_ns;

}  // namespace

// The measured case: 65,545 bytes at 6.5 GB/s (a ~10 us wait) go 62 bytes first.
TEST(PacedSplit, ALoneBatchJustOverASegmentGoesShortPieceFirst) {
    EXPECT_EQ(paced_first_write(lone_64k, loopback_mss, 6'500'000'000ull), 62u);
    EXPECT_EQ(paced_first_write(loopback_mss + 1, loopback_mss, 6'500'000'000ull), 1u);
    EXPECT_EQ(paced_first_write(2 * loopback_mss - 1, loopback_mss, 6'500'000'000ull),
              loopback_mss - 1);
}

// One segment or less has nothing behind it; two or more would leave full segments
// waiting whatever the order, so the rule keeps out of those.
TEST(PacedSplit, OnlyBatchesBetweenOneAndTwoSegments) {
    EXPECT_EQ(paced_first_write(loopback_mss, loopback_mss, 1'000'000'000ull), 0u);
    EXPECT_EQ(paced_first_write(1024, loopback_mss, 1'000'000'000ull), 0u);
    EXPECT_EQ(paced_first_write(2 * loopback_mss, loopback_mss, 1'000'000'000ull), 0u);
    EXPECT_EQ(paced_first_write(256 * 1024, loopback_mss, 1'000'000'000ull), 0u);
}

// A fast connection's wait is shorter than the split's own cost: one write.
TEST(PacedSplit, OnlyWhereTheWaitReachesTheLimit) {
    EXPECT_EQ(paced_first_write(lone_64k, loopback_mss, rate_at_limit), 62u);
    EXPECT_EQ(paced_first_write(lone_64k, loopback_mss, rate_at_limit + 1000), 0u);
    EXPECT_EQ(paced_first_write(lone_64k, loopback_mss, 80'000'000'000ull), 0u);
}

// Nothing known (no segment size or rate yet): one write.
TEST(PacedSplit, UnknownFiguresMeanOneWrite) {
    EXPECT_EQ(paced_first_write(lone_64k, 0, 1'000'000'000ull), 0u);
    EXPECT_EQ(paced_first_write(lone_64k, loopback_mss, 0), 0u);
}

namespace {

struct loopback_connection {
    test_support::loopback_listener listener;
    test_support::unique_fd client = test_support::connect_loopback(listener.port());
    test_support::unique_fd server = listener.accept(2000);
};

bool set_congestion_control(int fd, const char *name) {
    return ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name,
                        static_cast<socklen_t>(std::strlen(name))) == 0;
}

}  // namespace

// reno never paces by itself: read() says so and nothing is split, even at a
// pacing rate that would make the wait long.
TEST(PacedSplit, ACongestionControlThatDoesNotPaceIsNeverSplit) {
    loopback_connection c;
    ASSERT_TRUE(c.server);
    ASSERT_TRUE(set_congestion_control(c.client.get(), "reno")) << std::strerror(errno);
    const unsigned long slow = 1'000'000'000ul;
    ASSERT_EQ(::setsockopt(c.client.get(), SOL_SOCKET, SO_MAX_PACING_RATE, &slow, sizeof slow), 0);
    paced_split::figures f;
    ASSERT_TRUE(paced_split::read(c.client.get(), f));
    EXPECT_FALSE(f.paced);
    EXPECT_GT(f.mss, 0u);
    paced_split split;
    EXPECT_EQ(split.first_write(c.client.get(), f.mss + 62), 0u);
}

// BBR on loopback, its rate capped at 1 GB/s (a full segment then waits tens of
// microseconds): the lookup reads the socket's own figures and splits.
TEST(PacedSplit, ABbrLoopbackConnectionAtALowRateIsSplit) {
    loopback_connection c;
    ASSERT_TRUE(c.server);
    if (!set_congestion_control(c.client.get(), "bbr"))
        GTEST_SKIP() << "this kernel offers no bbr to this process: " << std::strerror(errno);
    const unsigned long slow = 1'000'000'000ul;
    ASSERT_EQ(::setsockopt(c.client.get(), SOL_SOCKET, SO_MAX_PACING_RATE, &slow, sizeof slow), 0);
    paced_split::figures f;
    ASSERT_TRUE(paced_split::read(c.client.get(), f));
    EXPECT_TRUE(f.paced);
    ASSERT_GT(f.mss, 536u);
    EXPECT_GT(f.pacing_rate, 0u);
    EXPECT_LE(f.pacing_rate, slow);
    paced_split split;
    EXPECT_EQ(split.first_write(c.client.get(), f.mss + 62), 62u);
    EXPECT_EQ(split.first_write(c.client.get(), f.mss), 0u);
}

// Not a tcp socket: nothing to read, and never split.
TEST(PacedSplit, NotATcpSocketIsNeverSplit) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    paced_split::figures f;
    EXPECT_FALSE(paced_split::read(sv[0], f));
    paced_split split;
    EXPECT_EQ(split.first_write(sv[0], 65545), 0u);
    ::close(sv[0]);
    ::close(sv[1]);
}
