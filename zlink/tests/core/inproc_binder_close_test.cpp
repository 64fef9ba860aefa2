// An inproc connect racing the binder's zmq_close. The connect used to look
// the binder up under the context lock, release it, build the pipe pair and
// then post the pipe to the binder's mailbox; a binder closed in that window
// could already be reaped and deleted, so the post went into freed memory
// (a crash, a corrupted heap, or a hang later). Each round closes the binder
// while connecters are between lookup and post as often as the scheduler allows.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "zmq.h"

namespace {

constexpr const char *endpoint = "inproc://binder-close-race";

// A closed socket keeps its mailbox descriptor until the reaper thread has
// destroyed it. On a loaded host the reaper can fall behind three busy threads
// and the process runs out of descriptors (EMFILE); that is back-pressure, not
// the race under test, so wait for the reaper. A reaper that never catches up
// (a leak) still fails: the wait is bounded.
void *socket_when_descriptors_allow(void *ctx) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
        if (void *s = zmq_socket(ctx, ZMQ_PAIR))
            return s;
        if (zmq_errno() != EMFILE || std::chrono::steady_clock::now() > give_up)
            return nullptr;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void connect_and_close_until(void *ctx, const std::atomic<bool> &stop) {
    while (!stop.load()) {
        void *c = socket_when_descriptors_allow(ctx);
        ASSERT_NE(c, nullptr) << zmq_strerror(zmq_errno());
        ASSERT_EQ(zmq_connect(c, endpoint), 0) << zmq_strerror(zmq_errno());
        int zero = 0;
        zmq_setsockopt(c, ZMQ_LINGER, &zero, sizeof zero);
        zmq_close(c);
        std::this_thread::yield();  // lets the reaper keep up (descriptors)
    }
}

// Stops and joins the connecters however the test body leaves (a failed ASSERT
// returns early): a joinable std::thread destroyed would abort the whole binary
// and hide which check failed.
struct Connecters {
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    ~Connecters() { join(); }
    void join() {
        stop = true;
        for (auto &t : threads)
            if (t.joinable())
                t.join();
    }
};

}  // namespace

TEST(InprocBinderClose, ConnectRacingTheBindersCloseNeitherCrashesNorHangs) {
    void *ctx = zmq_ctx_new();
    {
        Connecters connecters;
        for (int i = 0; i < 2; ++i)
            connecters.threads.emplace_back(connect_and_close_until, ctx,
                                            std::cref(connecters.stop));
        for (int round = 0; round < 1000; ++round) {
            void *b = socket_when_descriptors_allow(ctx);
            ASSERT_NE(b, nullptr) << "round " << round << ": " << zmq_strerror(zmq_errno());
            ASSERT_EQ(zmq_bind(b, endpoint), 0)
                << "round " << round << ": " << zmq_strerror(zmq_errno());
            zmq_close(b);  // no pipes yet: the reaper deletes it at once
            std::this_thread::yield();
        }
    }
    auto term = std::async(std::launch::async, [ctx] { return zmq_ctx_term(ctx); });
    ASSERT_EQ(term.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(term.get(), 0);
}
