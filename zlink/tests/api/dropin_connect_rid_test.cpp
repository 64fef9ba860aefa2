// ZMQ_CONNECT_ROUTING_ID as libzmq 4.3.5 gives it (test_connect_rid): the
// connecting ROUTER or STREAM can address the peer by the chosen id right
// after zmq_connect, before the connection exists; the message waits for it.
// zmq_setsockopt(3): "The ZMQ_CONNECT_ROUTING_ID option sets the peer id of
// the peer connected via the next zmq_connect() call, such that that
// connection is immediately ready for data transfer with the given routing-id."
// zmq.h only.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api_test_util.hpp"
#include "zmq.h"

namespace {

using api_test::last_endpoint;
using api_test::set_int;

std::string recv_string(void *s) {
    char buf[256];
    const int n = zmq_recv(s, buf, sizeof buf, 0);
    return n < 0 ? std::string("<none>") : std::string(buf, std::min<int>(n, sizeof buf));
}

class dropin_connect_rid : public api_test::socket_owner {
protected:
    dropin_connect_rid() : socket_owner(3000) {}
    // Connects `s` to `peer` under the connect routing id "conn1".
    void connect_named(void *s, void *peer) {
        ASSERT_EQ(0, zmq_setsockopt(s, ZMQ_CONNECT_ROUTING_ID, "conn1", 5));
        ASSERT_EQ(0, zmq_connect(s, last_endpoint(peer).c_str()));
    }
};

TEST_F(dropin_connect_rid, StreamSendsToTheNamedPeerRightAfterConnect) {
    void *server = socket(ZMQ_STREAM);
    set_int(server, ZMQ_STREAM_NOTIFY, 0);
    ASSERT_EQ(0, zmq_bind(server, "tcp://127.0.0.1:*"));
    void *client = socket(ZMQ_STREAM);
    connect_named(client, server);
    ASSERT_EQ(5, zmq_send(client, "conn1", 5, ZMQ_SNDMORE));  // no EHOSTUNREACH
    ASSERT_EQ(4, zmq_send(client, "hi 1", 4, 0));
    char id[256];
    ASSERT_GT(zmq_recv(server, id, sizeof id, 0), 0);
    EXPECT_EQ(0, id[0]);  // the server's generated id for this connection
    EXPECT_EQ("hi 1", recv_string(server));
}

TEST_F(dropin_connect_rid, RouterSendsToTheNamedPeerRightAfterConnect) {
    void *server = socket(ZMQ_ROUTER);
    ASSERT_EQ(0, zmq_bind(server, "tcp://127.0.0.1:*"));
    void *client = socket(ZMQ_ROUTER);
    ASSERT_EQ(0, zmq_setsockopt(client, ZMQ_ROUTING_ID, "Y", 1));
    connect_named(client, server);
    ASSERT_EQ(5, zmq_send(client, "conn1", 5, ZMQ_SNDMORE));
    ASSERT_EQ(4, zmq_send(client, "hi 1", 4, 0));
    EXPECT_EQ("Y", recv_string(server));
    EXPECT_EQ("hi 1", recv_string(server));
    // The answer comes back under the id the client chose.
    ASSERT_EQ(1, zmq_send(server, "Y", 1, ZMQ_SNDMORE));
    ASSERT_EQ(2, zmq_send(server, "ok", 2, 0));
    EXPECT_EQ("conn1", recv_string(client));
    EXPECT_EQ("ok", recv_string(client));
}

}  // namespace
