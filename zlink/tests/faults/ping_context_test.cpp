// PING/PONG from a raw ZMTP 3.1 peer (RFC 37: "ping-context = 0*16OCTET"; the
// PONG carries the PING's context back). libzmq 4.3.5 answers a PING whose
// context is longer than 16 octets with the first 16 instead of ignoring it,
// and its test_heartbeats waits for that PONG; so must we.
#include "fault_util.hpp"
#include "zmtp_bytes.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

using namespace faults;

namespace {

// A PING command with TTL 0 and the given context.
std::string ping(const std::string &context) {
    std::string body = std::string("\x04PING\0\0", 7) + context;
    return std::string("\x04", 1) + static_cast<char>(body.size()) + body;
}
std::string pong(const std::string &context) {
    std::string body = "\x04PONG" + context;
    return std::string("\x04", 1) + static_cast<char>(body.size()) + body;
}

// Reads exactly n bytes within 3 s (fewer if the peer stops sending).
std::string read_exactly(int fd, size_t n) {
    std::string got;
    char buf[256];
    while (got.size() < n) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 3000) != 1)
            break;
        const ssize_t r = ::recv(fd, buf, std::min(sizeof buf, n - got.size()), 0);
        if (r <= 0)
            break;
        got.append(buf, static_cast<size_t>(r));
    }
    return got;
}

}  // namespace

TEST(PingContext, PongEchoesTheContextCutTo16Octets) {
    void *ctx = zmq_ctx_new();
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    set_int(router, ZMQ_LINGER, 0);
    ASSERT_EQ(0, zmq_bind(router, "tcp://127.0.0.1:*"));
    const std::string ep = last_endpoint(router);
    test_support::unique_fd conn = test_support::connect_loopback(test_support::port_of(ep));
    const int fd = conn.get();

    const std::string hello = greeting() + ready_dealer();
    ASSERT_EQ(static_cast<ssize_t>(hello.size()), ::send(fd, hello.data(), hello.size(), 0));
    const std::string theirs = read_exactly(fd, 64);
    ASSERT_EQ(64u, theirs.size());
    // Their READY: a short command frame, size in the second octet.
    const std::string ready_head = read_exactly(fd, 2);
    ASSERT_EQ(2u, ready_head.size());
    read_exactly(fd, static_cast<unsigned char>(ready_head[1]));

    const std::string long_context = "LOL" + std::string(55, 'z');
    const std::string pings = ping("LOL") + ping(long_context);
    ASSERT_EQ(static_cast<ssize_t>(pings.size()), ::send(fd, pings.data(), pings.size(), 0));
    const std::string want = pong("LOL") + pong(long_context.substr(0, 16));
    EXPECT_EQ(want, read_exactly(fd, want.size()));

    conn.reset();  // closed before the router, as a peer that hangs up first
    zmq_close(router);
    zmq_ctx_term(ctx);
}
