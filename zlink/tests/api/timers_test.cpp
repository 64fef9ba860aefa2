// zmq_timers_*: libzmq 4.3.5's contract (ids, EINVAL for unknown or cancelled
// timers, timeout -1 without touching errno) plus the cases libzmq's own test
// leaves out: handlers that cancel or add timers while execute() runs, and an
// interval so large that now + interval would wrap.
#include <chrono>
#include <climits>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "zmq.h"

namespace {

struct fired_log {
    std::vector<int> ids;
};

void record(int id, void *arg) { static_cast<fired_log *>(arg)->ids.push_back(id); }

class Timers : public ::testing::Test {
protected:
    void SetUp() override { timers = zmq_timers_new(); }
    void TearDown() override { EXPECT_EQ(zmq_timers_destroy(&timers), 0); }

    // Waits until timeout() says something is due, then executes.
    void wait_and_execute() {
        for (long t = zmq_timers_timeout(timers); t > 0; t = zmq_timers_timeout(timers))
            std::this_thread::sleep_for(std::chrono::milliseconds(t));
        ASSERT_EQ(zmq_timers_execute(timers), 0);
    }

    void *timers = nullptr;
    fired_log log;
};

TEST_F(Timers, IdsAreDistinctAndPositive) {
    int a = zmq_timers_add(timers, 10, record, &log);
    int b = zmq_timers_add(timers, 10, record, &log);
    EXPECT_GT(a, 0);
    EXPECT_GT(b, 0);
    EXPECT_NE(a, b);
}

TEST_F(Timers, TimeoutWithoutTimersIsMinusOneAndLeavesErrno) {
    errno = 12345;
    EXPECT_EQ(zmq_timers_timeout(timers), -1);
    EXPECT_EQ(errno, 12345);
}

TEST_F(Timers, FiresAfterItsIntervalAndAgainAfterTheNext) {
    int id = zmq_timers_add(timers, 20, record, &log);
    EXPECT_EQ(zmq_timers_execute(timers), 0);
    EXPECT_TRUE(log.ids.empty());  // not due yet
    wait_and_execute();
    ASSERT_EQ(log.ids, std::vector<int>{id});
    long next = zmq_timers_timeout(timers);
    EXPECT_GT(next, 0);  // rescheduled one interval later
    EXPECT_LE(next, 20);
    wait_and_execute();
    EXPECT_EQ(log.ids.size(), 2u);
}

TEST_F(Timers, CancelledTimerNeverFiresAndCannotBeCancelledTwice) {
    int id = zmq_timers_add(timers, 0, record, &log);
    EXPECT_EQ(zmq_timers_cancel(timers, id), 0);
    errno = 0;
    EXPECT_EQ(zmq_timers_cancel(timers, id), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(zmq_timers_execute(timers), 0);
    EXPECT_TRUE(log.ids.empty());
    EXPECT_EQ(zmq_timers_timeout(timers), -1);
}

TEST_F(Timers, SetIntervalAndResetMoveTheDeadline) {
    int id = zmq_timers_add(timers, 100000, record, &log);
    EXPECT_GT(zmq_timers_timeout(timers), 1000);
    ASSERT_EQ(zmq_timers_set_interval(timers, id, 0), 0);
    EXPECT_EQ(zmq_timers_timeout(timers), 0);
    ASSERT_EQ(zmq_timers_set_interval(timers, id, 100000), 0);
    ASSERT_EQ(zmq_timers_reset(timers, id), 0);
    EXPECT_GT(zmq_timers_timeout(timers), 1000);
    errno = 0;
    EXPECT_EQ(zmq_timers_set_interval(timers, id + 1, 5), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(zmq_timers_reset(timers, id + 1), -1);
}

TEST_F(Timers, HugeIntervalNeverWrapsIntoThePast) {
    zmq_timers_add(timers, SIZE_MAX, record, &log);
    EXPECT_GT(zmq_timers_timeout(timers), 1000000L);
    EXPECT_EQ(zmq_timers_execute(timers), 0);
    EXPECT_TRUE(log.ids.empty());
}

// A handler that cancels the other due timer: that one must not run.
struct canceller {
    void *timers;
    int victim;
    int runs = 0;
};

void cancel_victim(int, void *arg) {
    auto *c = static_cast<canceller *>(arg);
    ++c->runs;
    zmq_timers_cancel(c->timers, c->victim);
}

TEST_F(Timers, HandlerMayCancelAnotherDueTimer) {
    canceller first{timers, 0}, second{timers, 0};
    int a = zmq_timers_add(timers, 0, cancel_victim, &first);
    int b = zmq_timers_add(timers, 0, cancel_victim, &second);
    first.victim = b;
    second.victim = a;
    EXPECT_EQ(zmq_timers_execute(timers), 0);
    EXPECT_EQ(first.runs + second.runs, 1);  // whichever ran first removed the other
}

void add_another(int, void *arg) {
    auto *t = static_cast<void **>(arg);
    zmq_timers_add(*t, 0, add_another, arg);
}

TEST_F(Timers, HandlerAddingZeroIntervalTimersDoesNotLoopForever) {
    zmq_timers_add(timers, 0, add_another, &timers);
    EXPECT_EQ(zmq_timers_execute(timers), 0);  // returns: new timers wait for the next call
    EXPECT_EQ(zmq_timers_execute(timers), 0);
}

}  // namespace
