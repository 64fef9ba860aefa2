// gather_list: the write path of the engine's output and of the application's
// direct writes.  A batch is written by sendmsg() straight from where its bytes
// live; under a small socket buffer the kernel takes it in pieces, and each next
// call must start at the first unsent byte.
#include "core/gather_list.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

using zlink::gather_list;

namespace {

std::string pattern(size_t n, int seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>((i * 7 + i / 251 + static_cast<size_t>(seed)) & 0xff);
    return s;
}

// A Unix stream socketpair whose writer side has a small send buffer and
// whose reader side is non-blocking.
struct small_pair {
    int w = -1, r = -1;
    small_pair() {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
            return;
        w = fds[0];
        r = fds[1];
        int small = 4096;
        ::setsockopt(w, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        ::setsockopt(r, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        ::fcntl(r, F_SETFL, ::fcntl(r, F_GETFL) | O_NONBLOCK);
    }
    ~small_pair() {
        ::close(w);
        ::close(r);
    }
    void drain(std::string &into) const {
        char buf[1500];  // small reads: the writer sees room appear in pieces
        ssize_t n;
        while ((n = ::read(r, buf, sizeof buf)) > 0)
            into.append(buf, static_cast<size_t>(n));
    }
};

}  // namespace

TEST(GatherList, ConsumeDropsWholeEntriesThenTrimsThePartialOne) {
    const std::string a = "header", b = pattern(100, 1), c = "tail";
    gather_list g;
    g.add(a.data(), a.size());
    g.add(nullptr, 0);  // empty runs are not entries
    g.add(b.data(), b.size());
    g.add(c.data(), c.size());
    ASSERT_EQ(g.entry_count(), 3u);
    EXPECT_EQ(g.pending_bytes(), a.size() + b.size() + c.size());
    g.consume(a.size() + 10);
    ASSERT_EQ(g.entry_count(), 2u);
    EXPECT_EQ(g.entries()[0].iov_base, static_cast<const void *>(b.data() + 10));
    EXPECT_EQ(g.entries()[0].iov_len, b.size() - 10);
    g.consume(b.size() - 10 + 1);
    ASSERT_EQ(g.entry_count(), 1u);
    EXPECT_EQ(g.entries()[0].iov_base, static_cast<const void *>(c.data() + 1));
    g.consume(c.size() - 1);
    EXPECT_TRUE(g.empty());
}

// The batch shape of a large message: staged header, the body in place, a
// staged frame after it.  The socket buffer holds a few KiB, so the body goes
// in many pieces, each continuing where the last one stopped.
TEST(GatherList, PartialWritesContinueAtTheFirstUnsentByte) {
    small_pair p;
    ASSERT_GE(p.w, 0);
    const std::string head = pattern(9, 2), body = pattern(300 * 1024, 3), tail = pattern(70, 4);
    gather_list g;
    g.add(head.data(), head.size());
    g.add(body.data(), body.size());
    g.add(tail.data(), tail.size());
    std::string got;
    int partial = 0, blocked = 0;
    while (!g.empty()) {
        const size_t before = g.pending_bytes();
        std::error_code ec;
        const size_t n = g.write_to(p.w, 0, ec);
        if (ec) {  // full: make room, as the engine's wait for writability would
            ASSERT_EQ(ec, std::errc::resource_unavailable_try_again) << ec.message();
            ++blocked;
            p.drain(got);
        } else {
            ASSERT_GT(n, 0u);
            partial += n < before ? 1 : 0;
        }
        ASSERT_EQ(g.pending_bytes(), before - n);
    }
    p.drain(got);
    EXPECT_GT(partial, 10) << "the socket buffer was not small enough to split the body";
    EXPECT_GT(blocked, 0);
    ASSERT_EQ(got.size(), head.size() + body.size() + tail.size());
    EXPECT_TRUE(got == head + body + tail) << "bytes out of place after a partial write";
}

// ZMQ_ASIO_TCP_MAX_TRANSFER: no call writes more than the cap, even when the
// cap ends inside an entry; the entry is whole again for the next call.
TEST(GatherList, TheTransferCapEndsACallInsideAnEntry) {
    small_pair p;
    ASSERT_GE(p.w, 0);
    const std::string a = pattern(5, 5), b = pattern(23, 6), c = pattern(4, 7);
    gather_list g;
    g.add(a.data(), a.size());
    g.add(b.data(), b.size());
    g.add(c.data(), c.size());
    std::string got;
    std::vector<size_t> sizes;
    while (!g.empty()) {
        std::error_code ec;
        sizes.push_back(g.write_to(p.w, 7, ec));
        ASSERT_FALSE(ec) << ec.message();
        p.drain(got);
    }
    EXPECT_EQ(sizes, (std::vector<size_t>{7, 7, 7, 7, 4}));
    EXPECT_EQ(got, a + b + c);
}

// A cap the size of one message must not send the message's last bytes (its
// header's worth) in a call of their own: a tail within an eighth of the cap
// rides along; a longer one is still cut at the cap.
TEST(GatherList, AShortTailPastTheCapRidesAlong) {
    small_pair p;
    ASSERT_GE(p.w, 0);
    const std::string header = pattern(9, 1), body = pattern(800, 2);
    gather_list g;
    g.add(header.data(), header.size());
    g.add(body.data(), body.size());
    std::error_code ec;
    EXPECT_EQ(g.write_to(p.w, 800, ec), 809u) << "the 9-byte tail went in a call of its own";
    ASSERT_FALSE(ec) << ec.message();
    std::string got;
    p.drain(got);
    EXPECT_EQ(got, header + body);
    const std::string more = pattern(101, 3);  // 101 > 800 / 8: cut at the cap
    g.clear();
    g.add(body.data(), body.size());
    g.add(more.data(), more.size());
    EXPECT_EQ(g.write_to(p.w, 800, ec), 800u);
    EXPECT_EQ(g.write_to(p.w, 800, ec), 101u);
    got.clear();
    p.drain(got);
    EXPECT_EQ(got, body + more);
}

TEST(GatherList, AClosedPeerIsAnErrorNotASignal) {
    small_pair p;
    ASSERT_GE(p.w, 0);
    ::close(p.r);
    p.r = -1;
    const std::string a = pattern(64, 8);
    gather_list g;
    g.add(a.data(), a.size());
    std::error_code ec;
    EXPECT_EQ(g.write_to(p.w, 0, ec), 0u);  // would be SIGPIPE with write()
    EXPECT_EQ(ec, std::errc::broken_pipe);
    EXPECT_EQ(g.pending_bytes(), a.size());
}
