// Large messages over inproc through the C API: the body moves by reference (the
// receiver sees the sender's bytes, never a copy), and a stream's blocks are reused
// from one burst to the next rather than allocated per message
// (docs/profiling/2026-12-03-inproc-large.md).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "zmq.h"

namespace {

constexpr size_t body = 64 * 1024;
constexpr int burst = 300;  // below the inproc pipe's HWM (1000 + 1000): nothing blocks

// Sends `burst` messages of `body` bytes; returns their data pointers.
std::vector<void *> send_burst(void *push) {
    std::vector<void *> sent;
    for (int i = 0; i < burst; ++i) {
        zmq_msg_t m;
        EXPECT_EQ(zmq_msg_init_size(&m, body), 0);
        sent.push_back(zmq_msg_data(&m));
        EXPECT_EQ(zmq_msg_send(&m, push, 0), static_cast<int>(body));
    }
    return sent;
}

// Receives `burst` messages; returns their data pointers (the messages are closed).
std::vector<void *> recv_burst(void *pull) {
    std::vector<void *> got;
    zmq_msg_t m;
    zmq_msg_init(&m);
    for (int i = 0; i < burst; ++i) {
        EXPECT_EQ(zmq_msg_recv(&m, pull, 0), static_cast<int>(body));
        got.push_back(zmq_msg_data(&m));
    }
    zmq_msg_close(&m);
    return got;
}

}  // namespace

TEST(InprocLarge, ABurstMovesByReferenceAndTheNextReusesItsBlocks) {
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    ASSERT_EQ(zmq_bind(pull, "inproc://large"), 0);
    ASSERT_EQ(zmq_connect(push, "inproc://large"), 0);

    const std::vector<void *> first = send_burst(push);
    EXPECT_EQ(recv_burst(pull), first);  // the same bodies, in order: no copy
    const std::set<void *> first_blocks(first.begin(), first.end());
    ASSERT_EQ(first_blocks.size(), static_cast<size_t>(burst));

    const std::vector<void *> second = send_burst(push);
    int reused = 0;
    for (void *p : second)
        reused += static_cast<int>(first_blocks.count(p));
    EXPECT_EQ(reused, burst) << "blocks of the second burst that the first had freed";
    EXPECT_EQ(recv_burst(pull), second);

    zmq_close(push);
    zmq_close(pull);
    EXPECT_EQ(zmq_ctx_term(ctx), 0);
}
