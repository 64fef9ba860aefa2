// libzmq 4.3.5 behaviours its own suite checks on STREAM sockets and on the
// connect side's monitor events (test_stream, test_stream_disconnect,
// test_reconnect_options), each as the smallest case that failed on zlink.
// zmq.h only.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api_test_util.hpp"
#include "zmq.h"

namespace {

using api_test::last_endpoint;
using api_test::set_int;

struct event_t {
    int id = -1;  // -1: none within the wait
    uint32_t value = 0;
};

class dropin_stream_monitor : public api_test::socket_owner {
protected:
    dropin_stream_monitor() : socket_owner(3000) {}
    void *monitor(void *s, const char *name) {
        EXPECT_EQ(0, zmq_socket_monitor(s, name, ZMQ_EVENT_ALL));
        void *m = socket(ZMQ_PAIR);
        EXPECT_EQ(0, zmq_connect(m, name));
        return m;
    }
    static event_t next_event(void *mon, int timeout_ms) {
        set_int(mon, ZMQ_RCVTIMEO, timeout_ms);
        unsigned char head[6];
        char addr[256];
        event_t e;
        if (zmq_recv(mon, head, sizeof head, 0) != 6)
            return e;
        zmq_recv(mon, addr, sizeof addr, 0);
        uint16_t id;
        std::memcpy(&id, head, 2);
        std::memcpy(&e.value, head + 2, 4);
        e.id = id;
        return e;
    }
    // Receives one STREAM message (id frame, data frame); returns the data.
    static std::string recv_stream(void *s, zmq_msg_t &id) {
        EXPECT_GT(zmq_msg_recv(&id, s, 0), 0);
        EXPECT_TRUE(zmq_msg_more(&id));
        char buf[256];
        const int n = zmq_recv(s, buf, sizeof buf, 0);
        EXPECT_GE(n, 0);
        return std::string(buf, std::max(n, 0));
    }
};

// zmq_msg_gets(3): "Peer-Address" is a property of messages received over tcp
// and ipc. libzmq gives it to both frames of a STREAM message, the id frame
// included, and to ZMQ_STREAM_NOTIFY's connect notice (test_stream).
TEST_F(dropin_stream_monitor, StreamIdFramesCarryPeerAddress) {
    void *server = socket(ZMQ_STREAM);
    set_int(server, ZMQ_STREAM_NOTIFY, 1);
    ASSERT_EQ(0, zmq_bind(server, "tcp://127.0.0.1:*"));
    void *client = socket(ZMQ_STREAM);
    ASSERT_EQ(0, zmq_connect(client, last_endpoint(server).c_str()));

    zmq_msg_t id;
    zmq_msg_init(&id);
    EXPECT_EQ("", recv_stream(server, id));  // the connect notice
    const char *address = zmq_msg_gets(&id, "Peer-Address");
    ASSERT_NE(nullptr, address);
    EXPECT_STREQ("127.0.0.1", address);

    zmq_msg_t client_id;
    zmq_msg_init(&client_id);
    EXPECT_EQ("", recv_stream(client, client_id));
    ASSERT_GE(zmq_msg_send(&client_id, client, ZMQ_SNDMORE), 0);
    ASSERT_EQ(5, zmq_send(client, "hello", 5, 0));
    EXPECT_EQ("hello", recv_stream(server, id));
    address = zmq_msg_gets(&id, "Peer-Address");
    ASSERT_NE(nullptr, address);
    EXPECT_STREQ("127.0.0.1", address);
    zmq_msg_close(&id);
    zmq_msg_close(&client_id);
}

// zmq_socket(3), ZMQ_STREAM: "To close a specific connection, send the
// identity frame followed by a zero-length message". With ZMQ_STREAM_NOTIFY the
// other side then gets its disconnect notice (id + empty frame); the connecting
// side closing must not quietly open a new connection instead
// (test_stream_disconnect).
TEST_F(dropin_stream_monitor, StreamClientCloseReachesServerAsDisconnectNotice) {
    void *server = socket(ZMQ_STREAM);
    set_int(server, ZMQ_STREAM_NOTIFY, 1);
    ASSERT_EQ(0, zmq_bind(server, "tcp://127.0.0.1:*"));
    void *client = socket(ZMQ_STREAM);
    ASSERT_EQ(0, zmq_connect(client, last_endpoint(server).c_str()));

    zmq_msg_t server_side, client_side;
    zmq_msg_init(&server_side);
    zmq_msg_init(&client_side);
    EXPECT_EQ("", recv_stream(server, server_side));
    EXPECT_EQ("", recv_stream(client, client_side));
    ASSERT_GE(zmq_msg_send(&client_side, client, ZMQ_SNDMORE), 0);
    ASSERT_EQ(0, zmq_send(client, "", 0, 0));  // close this connection

    EXPECT_EQ("", recv_stream(server, server_side));  // the disconnect notice
    // No second connection comes up in its place.
    set_int(server, ZMQ_RCVTIMEO, 300);
    EXPECT_EQ(-1, zmq_msg_recv(&server_side, server, 0));
    zmq_msg_close(&server_side);
    zmq_msg_close(&client_side);
}

// libzmq 4.3.5's monitor sequence for a connect side whose peer goes away
// (test_reconnect_options): CONNECT_DELAYED (value EINPROGRESS) while the tcp
// connect is pending, CONNECTED, HANDSHAKE_SUCCEEDED; after the peer closes,
// DISCONNECTED and at once CONNECT_RETRIED with the wait as its value (RECONNECT_IVL
// plus a random part below it), not when the retry starts.
TEST_F(dropin_stream_monitor, ConnectSideEventsAsLibzmq) {
    void *server = socket(ZMQ_PUB);
    ASSERT_EQ(0, zmq_bind(server, "tcp://127.0.0.1:*"));
    void *client = socket(ZMQ_SUB);
    set_int(client, ZMQ_RECONNECT_IVL, 60 * 1000);
    void *mon = monitor(client, "inproc://dropin-connect-events");
    ASSERT_EQ(0, zmq_connect(client, last_endpoint(server).c_str()));

    event_t e = next_event(mon, 3000);
    EXPECT_EQ(ZMQ_EVENT_CONNECT_DELAYED, e.id);
    EXPECT_EQ(static_cast<uint32_t>(EINPROGRESS), e.value);
    EXPECT_EQ(ZMQ_EVENT_CONNECTED, next_event(mon, 3000).id);
    EXPECT_EQ(ZMQ_EVENT_HANDSHAKE_SUCCEEDED, next_event(mon, 3000).id);
    close_now(server);
    EXPECT_EQ(ZMQ_EVENT_DISCONNECTED, next_event(mon, 3000).id);
    e = next_event(mon, 3000);
    EXPECT_EQ(ZMQ_EVENT_CONNECT_RETRIED, e.id);
    EXPECT_GE(e.value, 60u * 1000u);
    EXPECT_LT(e.value, 2u * 60u * 1000u);
    EXPECT_EQ(-1, next_event(mon, 300).id);
    zmq_socket_monitor(client, nullptr, 0);
}

}  // namespace
