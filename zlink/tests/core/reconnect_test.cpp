// A connecting socket that gets a pipe per connection (ZMQ_IMMEDIATE, ROUTER)
// must get a working pipe for a new connection even when it has not yet
// acknowledged the end of the last one (libzmq 4.3.5's test_immediate_3).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "zmq.h"

namespace {

void *dealer(void *ctx) {
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    int zero = 0, timeout = 3000;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(s, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
    return s;
}

}  // namespace

TEST(Reconnect, ImmediateSocketReceivesAfterPeerComesBack) {
    void *ctx = zmq_ctx_new();
    void *backend = dealer(ctx);
    void *frontend = dealer(ctx);
    int on = 1;
    zmq_setsockopt(frontend, ZMQ_IMMEDIATE, &on, sizeof on);
    ASSERT_EQ(zmq_bind(backend, "tcp://127.0.0.1:*"), 0);
    char ep[256];
    size_t len = sizeof ep;
    zmq_getsockopt(backend, ZMQ_LAST_ENDPOINT, ep, &len);
    ASSERT_EQ(zmq_connect(frontend, ep), 0);
    char buf[16];
    ASSERT_EQ(zmq_send(backend, "up", 2, 0), 2);
    ASSERT_EQ(zmq_recv(frontend, buf, sizeof buf, 0), 2);

    zmq_close(backend);  // the frontend reads nothing while the peer is away
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(zmq_send(frontend, "x", 1, ZMQ_DONTWAIT), -1);  // IMMEDIATE: no pipe
    backend = dealer(ctx);
    ASSERT_EQ(zmq_bind(backend, ep), 0);
    ASSERT_EQ(zmq_send(backend, "again", 5, 0), 5);
    EXPECT_EQ(zmq_recv(frontend, buf, sizeof buf, 0), 5);
    EXPECT_EQ(zmq_send(frontend, "ok", 2, ZMQ_DONTWAIT), 2);

    zmq_close(backend);
    zmq_close(frontend);
    zmq_ctx_term(ctx);
}
