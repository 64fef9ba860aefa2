// A poller sees ZMQ_POLLIN for every message a burst delivers (zmq.h: POLLIN
// means at least one message may be received without blocking).
//
// The engine publishes the frames of a run of full reads without waking the
// socket's thread and wakes it once at the run's end (engine_input.hpp): a
// large body read in place, or a chunk read that fills its buffer, lets the
// wake-up wait.  These bursts make such runs, end them with an empty socket,
// with the peer's hang-up (the engine stops in the run: the session's flush
// must send the owed wake-up), and on both sides of the connection (the
// connecting side keeps its pipe across the disconnect, the binding side ends
// it).  A lost wake-up shows as a poll that times out with messages queued.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "zmq.h"

namespace {

constexpr int poll_timeout_ms = 5000;  // a lost wake-up, not a slow host

// Receives `count` messages of `size` bytes, sleeping in zmq_poll whenever the
// socket has nothing (so every later message needs a wake-up).
void receive_by_polling(void *pull, int count, std::size_t size) {
    std::vector<char> buf(size + 1);
    int got = 0;
    while (got < count) {
        zmq_pollitem_t item{pull, 0, ZMQ_POLLIN, 0};
        ASSERT_EQ(zmq_poll(&item, 1, poll_timeout_ms), 1)
            << "no POLLIN with " << count - got << " of " << count << " messages still to come";
        ASSERT_EQ(item.revents, ZMQ_POLLIN);
        int n = 0;
        while ((n = zmq_recv(pull, buf.data(), buf.size(), ZMQ_DONTWAIT)) >= 0) {
            ASSERT_EQ(static_cast<std::size_t>(n), size);
            ++got;
        }
        ASSERT_EQ(zmq_errno(), EAGAIN);
    }
}

// A bound endpoint's address (the port the kernel picked).
std::string last_endpoint(void *s) {
    char ep[256];
    size_t len = sizeof ep;
    EXPECT_EQ(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len), 0);
    return ep;
}

// One burst from `push` (handed to the sending thread); `hang_up`: then closes
// it (linger flushes everything first), so the receiver's last read meets
// end-of-stream.
void send_burst(void *push, void *push_ctx, int count, std::size_t size, bool hang_up) {
    const std::string body(size, 'b');
    for (int i = 0; i < count; ++i)
        ASSERT_EQ(zmq_send(push, body.data(), body.size(), 0), static_cast<int>(size));
    if (hang_up) {
        zmq_close(push);
        zmq_ctx_term(push_ctx);
    }
}

struct burst_case {
    const char *name;
    std::size_t size;
    bool pull_binds;
    bool hang_up;
};

class PollBurst : public ::testing::TestWithParam<burst_case> {};

TEST_P(PollBurst, EveryMessageOfTheBurstIsPolledIn) {
    const auto c = GetParam();
    constexpr int count = 40;
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push_ctx = zmq_ctx_new();
    void *push = zmq_socket(push_ctx, ZMQ_PUSH);
    void *binder = c.pull_binds ? pull : push;
    void *connecter = c.pull_binds ? push : pull;
    ASSERT_EQ(zmq_bind(binder, "tcp://127.0.0.1:*"), 0);
    ASSERT_EQ(zmq_connect(connecter, last_endpoint(binder).c_str()), 0);
    std::thread sender([&] { send_burst(push, push_ctx, count, c.size, c.hang_up); });
    receive_by_polling(pull, count, c.size);
    sender.join();
    if (!c.hang_up) {
        zmq_close(push);
        zmq_ctx_term(push_ctx);
    }
    zmq_close(pull);
    zmq_ctx_term(ctx);
}

INSTANTIATE_TEST_SUITE_P(
    Bursts, PollBurst,
    ::testing::Values(burst_case{"large_bind_open", 256 * 1024, true, false},
                      burst_case{"large_bind_hangup", 256 * 1024, true, true},
                      burst_case{"large_connect_hangup", 256 * 1024, false, true},
                      burst_case{"small_bind_hangup", 64, true, true},
                      burst_case{"small_connect_open", 64, false, false}),
    [](const ::testing::TestParamInfo<burst_case> &i) { return std::string(i.param.name); });

}  // namespace
