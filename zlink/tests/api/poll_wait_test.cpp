// zmq_poll's wait: before it sleeps it may offer the core once and look again
// (api/poll.cpp, as a blocking recv does).  That extra look must neither end a
// timed wait early nor miss a message that arrives while the poll sleeps.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "zmq.h"

namespace {

struct pair_world {
    void *ctx = zmq_ctx_new();
    void *a = zmq_socket(ctx, ZMQ_PAIR);
    void *b = zmq_socket(ctx, ZMQ_PAIR);
    pair_world() {
        EXPECT_EQ(zmq_bind(a, "inproc://poll-wait"), 0);
        EXPECT_EQ(zmq_connect(b, "inproc://poll-wait"), 0);
    }
    ~pair_world() {
        zmq_close(a);
        zmq_close(b);
        zmq_ctx_term(ctx);
    }
};

using ms = std::chrono::milliseconds;

}  // namespace

TEST(PollWait, AnIdleSocketWaitsTheWholeTimeout) {
    pair_world w;
    zmq_pollitem_t item{w.b, 0, ZMQ_POLLIN, 0};
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(zmq_poll(&item, 1, 100), 0);
    const auto waited = std::chrono::duration_cast<ms>(std::chrono::steady_clock::now() - t0);
    EXPECT_GE(waited.count(), 95) << "the look after offering the core ended the wait";
    EXPECT_EQ(item.revents, 0);
}

TEST(PollWait, AMessageSentWhileThePollSleepsWakesIt) {
    pair_world w;
    char byte = 'x';
    // Prime: a small message received, so the next wait offers the core first.
    ASSERT_EQ(zmq_send(w.a, &byte, 1, 0), 1);
    ASSERT_EQ(zmq_recv(w.b, &byte, 1, 0), 1);
    std::thread sender([&] {
        std::this_thread::sleep_for(ms(50));
        zmq_send(w.a, "y", 1, 0);
    });
    zmq_pollitem_t item{w.b, 0, ZMQ_POLLIN, 0};
    EXPECT_EQ(zmq_poll(&item, 1, 5000), 1);
    EXPECT_EQ(item.revents, ZMQ_POLLIN);
    EXPECT_EQ(zmq_recv(w.b, &byte, 1, ZMQ_DONTWAIT), 1);
    EXPECT_EQ(byte, 'y');
    sender.join();
}
