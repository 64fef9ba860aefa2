// zmq_connect over tcp refuses at once an address that cannot name a host
// and a numeric port (libzmq 4.3.5's test_connect_resolve), instead of
// accepting it and retrying a resolution that can never succeed.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "loopback_socket.hpp"
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

}  // namespace

// "tcp://source;destination" (libzmq's test_bind_src_address and
// test_reqrep_tcp's test_multi_connect): the connection leaves from the
// source port; before, the whole text was taken for a host name and the
// connect was retried in the background for ever.
TEST_F(TcpConnectAddress, SourcePartIsTheConnectionsLocalAddress) {
    // Plain kernel listeners on 127.0.0.1, to see where the connection comes from.
    // free_port: a port nobody uses, once closed.
    test_support::loopback_listener free_port, server;
    const std::uint16_t source = free_port.port();
    free_port.close();
    const std::string ep = "tcp://127.0.0.1:" + std::to_string(source) + ";" + server.address();
    ASSERT_EQ(zmq_connect(sock_, ep.c_str()), 0);
    std::uint16_t peer_port = 0;
    ASSERT_TRUE(server.accept(5000, &peer_port)) << "no connection within 5 s";
    EXPECT_EQ(peer_port, source);
}

TEST_F(TcpConnectAddress, BadSourcePartIsRefused) {
    EXPECT_EQ(zmq_connect(sock_, "tcp://127.0.0.1;127.0.0.1:1234"), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
}
