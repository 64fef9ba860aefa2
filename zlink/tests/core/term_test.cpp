// zmq_ctx_term must return once every socket is closed and nothing is left to
// deliver: each case here is a way it used to hang (libzmq 4.3.5's own tests
// found them). A hang is reported as a failure after a deadline instead of
// stalling the test program.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "zmq.h"

namespace {

// Runs zmq_ctx_term on a helper thread; false when it is still blocked after
// `limit` (the thread is then left behind: the program exits regardless).
bool term_within(void *ctx, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    auto done = std::make_shared<std::promise<int>>();
    auto result = done->get_future();
    std::thread([ctx, done] { done->set_value(zmq_ctx_term(ctx)); }).detach();
    if (result.wait_for(limit) != std::future_status::ready)
        return false;
    return result.get() == 0;
}

}  // namespace

// libzmq's test_connect_resolve: a connect nobody answers (refused, retried)
// with the default LINGER (-1) and nothing queued: the close has nothing to
// deliver, so the term must not wait for a connection.
TEST(Term, UnansweredConnectWithNothingQueued) {
    void *ctx = zmq_ctx_new();
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    ASSERT_EQ(zmq_connect(pub, "tcp://127.0.0.1:1"), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a refused attempt or two
    zmq_close(pub);
    EXPECT_TRUE(term_within(ctx));
}

// The same, closed at once (the connect is still resolving or pending).
TEST(Term, ConnectClosedBeforeAnyAttemptEnds) {
    void *ctx = zmq_ctx_new();
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    ASSERT_EQ(zmq_connect(dealer, "tcp://localhost:1"), 0);
    zmq_close(dealer);
    EXPECT_TRUE(term_within(ctx));
}
