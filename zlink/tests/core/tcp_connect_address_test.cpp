// zmq_connect over tcp refuses at once an address that cannot name a host
// and a numeric port (libzmq 4.3.5's test_connect_resolve), instead of
// accepting it and retrying a resolution that can never succeed.
#include <gtest/gtest.h>

#include <cerrno>

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
