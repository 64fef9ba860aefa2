// LINGER and zmq_ctx_term semantics over tcp.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "zmq.h"

TEST(Linger, CloseWithDefaultLingerStillDeliversQueuedMessages) {
    void *ctx = zmq_ctx_new();
    void *rx = zmq_socket(ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(rx, "tcp://127.0.0.1:*"), 0);
    char ep[256];
    size_t len = sizeof ep;
    zmq_getsockopt(rx, ZMQ_LAST_ENDPOINT, ep, &len);
    void *tx = zmq_socket(ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_connect(tx, ep), 0);
    constexpr int n = 5000;
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(zmq_send(tx, &i, sizeof i, 0), 4);
    zmq_close(tx);  // linger -1: the session must still flush everything
    int to = 5000;
    zmq_setsockopt(rx, ZMQ_RCVTIMEO, &to, sizeof to);
    for (int i = 0; i < n; ++i) {
        int v = -1;
        ASSERT_EQ(zmq_recv(rx, &v, sizeof v, 0), 4) << "message " << i;
        ASSERT_EQ(v, i);
    }
    zmq_close(rx);
    EXPECT_EQ(zmq_ctx_term(ctx), 0);
}

TEST(Linger, ZeroLingerDropsUnsentAndTermReturnsAtOnce) {
    void *ctx = zmq_ctx_new();
    void *tx = zmq_socket(ctx, ZMQ_PAIR);
    int zero = 0;
    zmq_setsockopt(tx, ZMQ_LINGER, &zero, sizeof zero);
    ASSERT_EQ(zmq_connect(tx, "tcp://127.0.0.1:1"), 0);  // nobody listens there
    ASSERT_EQ(zmq_send(tx, "x", 1, 0), 1);
    zmq_close(tx);
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(zmq_ctx_term(ctx), 0);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST(Linger, PositiveLingerBoundsTheWait) {
    void *ctx = zmq_ctx_new();
    void *tx = zmq_socket(ctx, ZMQ_PAIR);
    int linger = 200;
    zmq_setsockopt(tx, ZMQ_LINGER, &linger, sizeof linger);
    ASSERT_EQ(zmq_connect(tx, "tcp://127.0.0.1:1"), 0);
    ASSERT_EQ(zmq_send(tx, "x", 1, 0), 1);
    zmq_close(tx);
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(zmq_ctx_term(ctx), 0);
    auto spent = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(spent, std::chrono::milliseconds(150));
    EXPECT_LT(spent, std::chrono::seconds(3));
}

TEST(CtxTerm, BlocksUntilSocketsClose) {
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_PAIR);
    bool closed = false;
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        closed = true;
        zmq_close(s);
    });
    EXPECT_EQ(zmq_ctx_term(ctx), 0);
    EXPECT_TRUE(closed);
    t.join();
}

TEST(CtxTerm, KnobsAreContextOptions) {
    void *ctx = zmq_ctx_new();
    EXPECT_EQ(zmq_ctx_set(ctx, 0x5a4c01 /* ZMQ_ASIO_IN_BATCH_SIZE */, 65536), 0);
    EXPECT_EQ(zmq_ctx_get(ctx, 0x5a4c01), 65536);
    EXPECT_EQ(zmq_ctx_set(ctx, 0x5a4c01, 0), -1);  // zero is not a batch size
    EXPECT_EQ(zmq_errno(), EINVAL);
    EXPECT_EQ(zmq_ctx_set(ctx, ZMQ_IO_THREADS, 2), 0);
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_IO_THREADS), 2);
    EXPECT_EQ(zmq_ctx_set(ctx, 12345, 1), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
    EXPECT_EQ(zmq_ctx_term(ctx), 0);
}
