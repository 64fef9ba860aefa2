// An inproc connect racing the binder's zmq_close. The connect used to look
// the binder up under the context lock, release it, build the pipe pair and
// then post the pipe to the binder's mailbox; a binder closed in that window
// could already be reaped and deleted, so the post went into freed memory
// (a crash, a corrupted heap, or a hang later). Each round closes the binder
// while connecters are between lookup and post as often as the scheduler allows.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "zmq.h"

namespace {

void connect_and_close_until(void *ctx, const std::atomic<bool> &stop) {
    while (!stop.load()) {
        void *c = zmq_socket(ctx, ZMQ_PAIR);
        ASSERT_NE(c, nullptr);
        ASSERT_EQ(zmq_connect(c, "inproc://binder-close-race"), 0);
        int zero = 0;
        zmq_setsockopt(c, ZMQ_LINGER, &zero, sizeof zero);
        zmq_close(c);
        std::this_thread::yield();  // lets the reaper keep up (descriptors)
    }
}

}  // namespace

TEST(InprocBinderClose, ConnectRacingTheBindersCloseNeitherCrashesNorHangs) {
    void *ctx = zmq_ctx_new();
    std::atomic<bool> stop{false};
    std::vector<std::thread> connecters;
    for (int i = 0; i < 2; ++i)
        connecters.emplace_back(connect_and_close_until, ctx, std::cref(stop));
    for (int round = 0; round < 1000; ++round) {
        void *b = zmq_socket(ctx, ZMQ_PAIR);
        ASSERT_NE(b, nullptr) << "round " << round << ": " << zmq_strerror(zmq_errno());
        ASSERT_EQ(zmq_bind(b, "inproc://binder-close-race"), 0);
        zmq_close(b);  // no pipes yet: the reaper deletes it at once
        std::this_thread::yield();
    }
    stop = true;
    for (auto &t : connecters)
        t.join();
    auto term = std::async(std::launch::async, [ctx] { return zmq_ctx_term(ctx); });
    ASSERT_EQ(term.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(term.get(), 0);
}
