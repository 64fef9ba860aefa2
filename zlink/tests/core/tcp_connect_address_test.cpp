// zmq_connect over tcp refuses at once an address that cannot name a host
// and a numeric port (libzmq 4.3.5's test_connect_resolve), instead of
// accepting it and retrying a resolution that can never succeed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "zmq.h"

namespace {

class TcpConnectAddress : public ::testing::Test {
protected:
    void SetUp() override {
        ctx_ = zmq_ctx_new();
        sock_ = zmq_socket(ctx_, ZMQ_PUB);
        int zero = 0;
        zmq_setsockopt(sock_, ZMQ_LINGER, &zero, sizeof zero);
    }
    void TearDown() override {
        zmq_close(sock_);
        zmq_ctx_term(ctx_);
    }
    void *ctx_ = nullptr;
    void *sock_ = nullptr;
};

TEST_F(TcpConnectAddress, HostWithSpacesIsRefused) {
    EXPECT_EQ(zmq_connect(sock_, "tcp://in val id:1234"), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
}

TEST_F(TcpConnectAddress, NonNumericOrWildcardPortIsRefused) {
    EXPECT_EQ(zmq_connect(sock_, "tcp://localhost:invalid"), -1);
    EXPECT_EQ(zmq_connect(sock_, "tcp://127.0.0.1:*"), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
}

TEST_F(TcpConnectAddress, NamesAddressesAndSourcesAreAccepted) {
    EXPECT_EQ(zmq_connect(sock_, "tcp://localhost:1234"), 0);
    EXPECT_EQ(zmq_connect(sock_, "tcp://[::1]:1234"), 0);
    EXPECT_EQ(zmq_connect(sock_, "tcp://127.0.0.1:0;127.0.0.1:1234"), 0);
    EXPECT_EQ(zmq_connect(sock_, "tcp://my_host-1.example:1234"), 0);
}

// A plain kernel listener on 127.0.0.1 (an ephemeral port), to see where a
// connection comes from.
struct raw_listener {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int port = 0;
    raw_listener() {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
        ::listen(fd, 4);
        socklen_t len = sizeof a;
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
        port = ntohs(a.sin_port);
    }
    ~raw_listener() { ::close(fd); }
    // The peer's port of the next connection, or -1 after 5 s without one.
    int accepted_peer_port() {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 5000) != 1)
            return -1;
        sockaddr_in peer{};
        socklen_t len = sizeof peer;
        int c = ::accept(fd, reinterpret_cast<sockaddr *>(&peer), &len);
        if (c < 0)
            return -1;
        ::close(c);
        return ntohs(peer.sin_port);
    }
};

}  // namespace

// "tcp://source;destination" (libzmq's test_bind_src_address and
// test_reqrep_tcp's test_multi_connect): the connection leaves from the
// source port; before, the whole text was taken for a host name and the
// connect was retried in the background for ever.
TEST_F(TcpConnectAddress, SourcePartIsTheConnectionsLocalAddress) {
    raw_listener free_port, server;  // free_port: a port nobody uses, once closed
    const int source = free_port.port;
    ::close(free_port.fd);
    free_port.fd = -1;
    const std::string ep = "tcp://127.0.0.1:" + std::to_string(source) + ";127.0.0.1:" +
                           std::to_string(server.port);
    ASSERT_EQ(zmq_connect(sock_, ep.c_str()), 0);
    EXPECT_EQ(server.accepted_peer_port(), source);
}

TEST_F(TcpConnectAddress, BadSourcePartIsRefused) {
    EXPECT_EQ(zmq_connect(sock_, "tcp://127.0.0.1;127.0.0.1:1234"), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
}
