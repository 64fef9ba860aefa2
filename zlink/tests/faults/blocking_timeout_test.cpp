// ZMQ_RCVTIMEO / ZMQ_SNDTIMEO end a blocking call no earlier than the timeout,
// as in libzmq 4.3.5 (zmq_setsockopt(3): "the operation returns EAGAIN after
// the timeout"; libzmq returns after 100.1-100.2 ms for 100).
//
// Why it matters (the faults experiment, run 20261202T134258Z-0bff): zlink's
// wait was rounded down to whole ms, so a 100 ms receive returned EAGAIN after
// ~99.1 ms. The lazy-pirate client waits for a reply until its own 1 s deadline
// in receive calls of RCVTIMEO 100 ms: ten calls ended 9 ms before that
// deadline, an eleventh waited another 100 ms, and every reply timeout lasted
// 1.09 s; with two timeouts per cut cycle, REQ_REP under the `cut` fault
// resumed ~175 ms after libzmq in every repetition.
// zmq.h only.
#include "fault_util.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>

using namespace faults;

namespace {

constexpr int timeout_ms = 100;
constexpr int calls = 5;

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(BlockingTimeout, RecvNeverReturnsBeforeRcvtimeo) {
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_PULL);  // bound, no peer: nothing ever arrives
    set_int(s, ZMQ_LINGER, 0);
    set_int(s, ZMQ_RCVTIMEO, timeout_ms);
    ASSERT_EQ(zmq_bind(s, "tcp://127.0.0.1:*"), 0);
    char buf[8];
    for (int i = 0; i < calls; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        EXPECT_EQ(zmq_recv(s, buf, sizeof buf, 0), -1);
        const double took = ms_since(t0);
        EXPECT_EQ(zmq_errno(), EAGAIN);
        EXPECT_GE(took, timeout_ms) << "call " << i;
    }
    zmq_close(s);
    zmq_ctx_term(ctx);
}

TEST(BlockingTimeout, SendNeverReturnsBeforeSndtimeo) {
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_PUSH);  // no peer: a send has nowhere to go
    set_int(s, ZMQ_LINGER, 0);
    set_int(s, ZMQ_SNDTIMEO, timeout_ms);
    ASSERT_EQ(zmq_bind(s, "tcp://127.0.0.1:*"), 0);
    for (int i = 0; i < calls; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        EXPECT_EQ(zmq_send(s, "x", 1, 0), -1);
        const double took = ms_since(t0);
        EXPECT_EQ(zmq_errno(), EAGAIN);
        EXPECT_GE(took, timeout_ms) << "call " << i;
    }
    zmq_close(s);
    zmq_ctx_term(ctx);
}
