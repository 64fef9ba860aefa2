// direct_send: when the application may write a message to the connection itself,
// what a partial write hands to the IO thread, how the engine's rule cuts the
// write, and ypipe::drained, the pipe-side half of the rule (core/direct_send.hpp).
// Over a socketpair: the bytes on the wire are read back and checked.
#include "core/direct_send.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "core/msg.hpp"
#include "core/ypipe.hpp"

using zlink::direct_send;
using zlink::msg_t;

namespace {

struct socket_pair {
    int app = -1, peer = -1;
    explicit socket_pair(int sndbuf = 0) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
            app = sv[0];
            peer = sv[1];
        }
        if (sndbuf > 0)
            ::setsockopt(app, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    }
    ~socket_pair() {
        ::close(app);
        ::close(peer);
    }
    // Everything the peer can read now (non-blocking).
    std::vector<unsigned char> drain() const {
        std::vector<unsigned char> out;
        unsigned char buf[65536];
        for (;;) {
            const ssize_t n = ::recv(peer, buf, sizeof buf, MSG_DONTWAIT);
            if (n <= 0)
                return out;
            out.insert(out.end(), buf, buf + n);
        }
    }
};

int frees = 0;
void count_free(void *data, void *) {
    ++frees;
    delete[] static_cast<unsigned char *>(data);
}

// A zero-copy message of n bytes, byte i = i * 7 (its free is counted).
msg_t patterned(std::size_t n) {
    auto *p = new unsigned char[n];
    for (std::size_t i = 0; i < n; ++i)
        p[i] = static_cast<unsigned char>(i * 7);
    msg_t m;
    m.init_data(p, n, count_free, nullptr);
    return m;
}

// The long frame header of an n-byte body, then the body.
bool is_frame_of(const std::vector<unsigned char> &wire, std::size_t n) {
    if (wire.size() != 9 + n || wire[0] != 0x02)
        return false;
    std::uint64_t size = 0;
    for (int i = 1; i < 9; ++i)
        size = size << 8 | wire[i];
    if (size != n)
        return false;
    for (std::size_t i = 0; i < n; ++i)
        if (wire[9 + i] != static_cast<unsigned char>(i * 7))
            return false;
    return true;
}

}  // namespace

// Message frames only: MORE is the one flag allowed (REQ's delimiter frame has it).
TEST(DirectSend, OnlyMessageFrames) {
    msg_t m;
    m.init_size(100);
    EXPECT_TRUE(direct_send::candidate_frame(m));
    m.set_flags(msg_t::more);
    EXPECT_TRUE(direct_send::candidate_frame(m));
    m.close();
    m.init_size(10);             // inline: the flag alone, no body to share
    m.set_flags(msg_t::shared);  // as a copied message's
    EXPECT_TRUE(direct_send::candidate_frame(m));
    m.close();
    m.init_size(100);
    m.set_flags(msg_t::routing_id);
    EXPECT_FALSE(direct_send::candidate_frame(m));
    m.close();
    m.init_size(100);
    m.set_flags(msg_t::command);
    EXPECT_FALSE(direct_send::candidate_frame(m));
    m.close();
}

// Nothing is written before the IO thread attached and said it is idle, nor
// after it claimed the connection back.
TEST(DirectSend, OnlyWhileAttachedAndIdle) {
    socket_pair s;
    direct_send d;
    int wakes = 0;
    msg_t m = patterned(64 * 1024);
    EXPECT_FALSE(d.try_send(&m, 1));  // not attached
    d.attach(&d, s.app, [&] { ++wakes; });
    EXPECT_FALSE(d.try_send(&m, 1));  // attached, not idle yet
    d.now_idle();
    direct_send::rest rest;
    EXPECT_FALSE(d.claim(rest));  // I takes it back: nothing was left
    EXPECT_FALSE(d.try_send(&m, 1));
    EXPECT_TRUE(s.drain().empty());
    EXPECT_EQ(m.size(), 64u * 1024);  // untouched: it goes into the pipe
    EXPECT_EQ(d.sent(), 0u);
    EXPECT_EQ(wakes, 0);
    m.close();
}

TEST(DirectSend, AnIdleConnectionGetsTheWholeFrame) {
    socket_pair s;
    direct_send d;
    int wakes = 0;
    d.attach(&d, s.app, [&] { ++wakes; });
    d.now_idle();
    frees = 0;
    msg_t m = patterned(64 * 1024);
    ASSERT_TRUE(d.try_send(&m, 1));
    EXPECT_EQ(m.size(), 0u);  // left empty
    EXPECT_EQ(frees, 1);      // written whole: freed by the sender at once
    EXPECT_TRUE(is_frame_of(s.drain(), 64 * 1024));
    EXPECT_EQ(d.sent(), 1u);
    EXPECT_EQ(wakes, 0);
    // Still idle: the next one goes the same way.
    msg_t m2 = patterned(40000);
    ASSERT_TRUE(d.try_send(&m2, 1));
    EXPECT_TRUE(is_frame_of(s.drain(), 40000));
}

// REQ's shape: an empty delimiter frame with MORE, then the body; one sendmsg.
TEST(DirectSend, TheFramesOfOneMessageGoTogether) {
    socket_pair s;
    direct_send d;
    d.attach(&d, s.app, [] {});
    d.now_idle();
    msg_t frames[2];
    frames[0].init();
    frames[0].set_flags(msg_t::more);
    frames[1] = patterned(64 * 1024);
    ASSERT_TRUE(d.try_send(frames, 2));
    EXPECT_EQ(frames[1].size(), 0u);
    std::vector<unsigned char> wire = s.drain();
    ASSERT_GE(wire.size(), 2u);
    EXPECT_EQ(wire[0], 0x01);  // short frame, MORE
    EXPECT_EQ(wire[1], 0x00);  // no body
    wire.erase(wire.begin(), wire.begin() + 2);
    EXPECT_TRUE(is_frame_of(wire, 64 * 1024));
    msg_t too_many[direct_send::max_frames + 1];
    for (auto &f : too_many)
        f.init();
    EXPECT_FALSE(d.try_send(too_many, direct_send::max_frames + 1));
}

// A socket buffer smaller than the message: the kernel takes part, the rest is
// handed to the IO thread (one wake-up), which must send it before anything else;
// until it says idle again nothing more is written directly.
TEST(DirectSend, APartialWriteIsHandedToTheIoThread) {
    socket_pair s(64 * 1024);
    direct_send d;
    int wakes = 0;
    d.attach(&d, s.app, [&] { ++wakes; });
    d.now_idle();
    frees = 0;
    constexpr std::size_t n = 4 * 1024 * 1024;
    msg_t m = patterned(n);
    ASSERT_TRUE(d.try_send(&m, 1));
    EXPECT_EQ(wakes, 1);
    EXPECT_EQ(frees, 0);  // the IO thread still has to send its rest
    msg_t next = patterned(64 * 1024);
    EXPECT_FALSE(d.try_send(&next, 1));  // I owns the connection now
    next.close();
    direct_send::rest rest;
    ASSERT_TRUE(d.claim(rest));
    ASSERT_EQ(rest.count, 1u);
    EXPECT_EQ(rest.header_sizes[0], 9u);
    ASSERT_GT(rest.written, 0u);
    ASSERT_LT(rest.written, 9 + n);
    // What the peer got plus what is left is the whole frame.
    std::vector<unsigned char> wire = s.drain();
    EXPECT_EQ(wire.size(), rest.written);
    const std::size_t skip = rest.written > 9 ? rest.written - 9 : 0;
    if (rest.written < 9)
        wire.insert(wire.end(), rest.headers[0] + rest.written, rest.headers[0] + 9);
    const auto *body = static_cast<const unsigned char *>(rest.frames[0].data());
    wire.insert(wire.end(), body + skip, body + n);
    EXPECT_TRUE(is_frame_of(wire, n));
    direct_send::rest again;
    EXPECT_FALSE(d.claim(again));  // handed over once
    rest.frames[0].close();
    EXPECT_EQ(frees, 2);
}

// Each sendmsg's bytes, as a SOCK_SEQPACKET peer receives them (one record per
// sendmsg), for tests of how a write is cut.
std::vector<std::vector<unsigned char>> records_of(int peer) {
    std::vector<std::vector<unsigned char>> out;
    std::vector<unsigned char> buf(1 << 20);
    for (;;) {
        const ssize_t n = ::recv(peer, buf.data(), buf.size(), MSG_DONTWAIT);
        if (n <= 0)
            return out;
        out.emplace_back(buf.begin(), buf.begin() + n);
    }
}

struct seqpacket_pair {
    int app = -1, peer = -1;
    seqpacket_pair() {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0) {
            app = sv[0];
            peer = sv[1];
        }
    }
    ~seqpacket_pair() {
        ::close(app);
        ::close(peer);
    }
};

// tcp's shape: the engine's rule cuts the application's write as the IO thread
// would cut a lone batch: the first sendmsg short, each later one capped (the
// last takes a tail up to an eighth of the cap, as gather_list allows).
TEST(DirectSend, TheEnginesRuleCutsTheWrite) {
    seqpacket_pair s;
    ASSERT_GE(s.app, 0);
    direct_send d;
    std::vector<std::size_t> asked;
    d.attach(
        &d, s.app, [] {},
        [&](std::size_t bytes) {
            asked.push_back(bytes);
            return direct_send::cut{100, 16384};
        });
    d.now_idle();
    msg_t m = patterned(64 * 1024);
    ASSERT_TRUE(d.try_send(&m, 1));
    EXPECT_EQ(asked, std::vector<std::size_t>{9 + 64 * 1024});
    const auto records = records_of(s.peer);
    std::vector<std::size_t> sizes;
    std::vector<unsigned char> wire;
    for (const auto &r : records) {
        sizes.push_back(r.size());
        wire.insert(wire.end(), r.begin(), r.end());
    }
    EXPECT_EQ(sizes, (std::vector<std::size_t>{100, 16384, 16384, 16384, 16293}));
    EXPECT_TRUE(is_frame_of(wire, 64 * 1024));
}

// ipc's shape: no rule, one sendmsg for the whole message.
TEST(DirectSend, WithoutARuleOneWriteCarriesTheMessage) {
    seqpacket_pair s;
    ASSERT_GE(s.app, 0);
    direct_send d;
    d.attach(&d, s.app, [] {});
    d.now_idle();
    msg_t m = patterned(64 * 1024);
    ASSERT_TRUE(d.try_send(&m, 1));
    const auto records = records_of(s.peer);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_TRUE(is_frame_of(records[0], 64 * 1024));
}

// A full socket buffer: nothing written, the message stays the caller's.
TEST(DirectSend, AFullBufferLeavesTheMessageToThePipe) {
    socket_pair s(64 * 1024);
    std::vector<unsigned char> filler(4096, 1);
    while (::send(s.app, filler.data(), filler.size(), MSG_DONTWAIT) > 0) {
    }
    direct_send d;
    d.attach(&d, s.app, [] {});
    d.now_idle();
    msg_t m = patterned(64 * 1024);
    EXPECT_FALSE(d.try_send(&m, 1));
    EXPECT_EQ(m.size(), 64u * 1024);
    EXPECT_EQ(d.sent(), 0u);
    m.close();
}

// Detach ends direct writes; a rest nobody claimed is dropped (freed once), and
// only the owner that attached may detach.
TEST(DirectSend, DetachStopsWritesAndDropsTheRest) {
    socket_pair s(64 * 1024);
    direct_send d;
    int owner = 0, stranger = 0;
    d.attach(&owner, s.app, [] {});
    d.now_idle();
    frees = 0;
    msg_t m = patterned(4 * 1024 * 1024);
    ASSERT_TRUE(d.try_send(&m, 1));  // partial: a rest is left
    d.detach(&stranger);             // not the owner: nothing changes
    EXPECT_EQ(frees, 0);
    d.detach(&owner);
    EXPECT_EQ(frees, 1);
    direct_send::rest rest;
    EXPECT_FALSE(d.claim(rest));
    d.now_idle();  // detached: idle means nothing
    msg_t m2 = patterned(64 * 1024);
    EXPECT_FALSE(d.try_send(&m2, 1));
    m2.close();
}

// The pipe-side half: drained only once the reader took everything and slept,
// and never while the writer has something staged or unflushed.
TEST(DirectSend, YpipeDrainedMeansTheReaderTookAllAndSleeps) {
    zlink::ypipe<msg_t, 4> q;
    EXPECT_FALSE(q.drained());  // the reader has not looked yet
    EXPECT_FALSE(q.check_read());
    EXPECT_TRUE(q.drained());
    msg_t m;
    m.init_buffer("a", 1);
    q.write(m, true);  // staged, incomplete
    EXPECT_FALSE(q.drained());
    m.init_buffer("b", 1);
    q.write(m, false);
    EXPECT_FALSE(q.drained());
    q.flush();
    EXPECT_FALSE(q.drained());  // published, not read
    msg_t out;
    ASSERT_TRUE(q.read(out));
    out.close();
    ASSERT_TRUE(q.read(out));
    out.close();
    EXPECT_FALSE(q.drained());  // read, but the reader has not found it empty yet
    EXPECT_FALSE(q.check_read());
    EXPECT_TRUE(q.drained());
}
