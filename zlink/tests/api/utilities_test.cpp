// Versions, capabilities, error strings, atomic counters, stopwatch and
// zmq_threadstart: small, but programs and libzmq's perf tools rely on them.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include <gtest/gtest.h>

#include "zlink.h"
#include "zmq.h"
#include "zmq_utils.h"  // must still compile: older programs include it

namespace {

TEST(Version, ZmqVersionIsTheLibzmqApiLevel) {
    int major = -1, minor = -1, patch = -1;
    zmq_version(&major, &minor, &patch);
    EXPECT_EQ(ZMQ_MAKE_VERSION(major, minor, patch), ZMQ_VERSION);
    EXPECT_EQ(ZMQ_VERSION, 40305);
}

TEST(Version, ZlinkVersionIsZlinksOwn) {
    int major = -1, minor = -1, patch = -1;
    zlink_version(&major, &minor, &patch);
    EXPECT_EQ(ZLINK_MAKE_VERSION(major, minor, patch), ZLINK_VERSION);
    EXPECT_NE(ZLINK_VERSION, ZMQ_VERSION);
    zmq_version(nullptr, nullptr, nullptr);  // tolerated
}

TEST(Capabilities, OnlyWhatWorks) {
    EXPECT_EQ(zmq_has("ipc"), 1);
    for (const char *absent : {"pgm", "tipc", "norm", "gssapi", "draft", "vmci", "WS", "WSS", ""})
        EXPECT_EQ(zmq_has(absent), 0) << absent;
    // CURVE: what zmq_has says must match what zmq_curve_keypair does.
    char pub[41], sec[41];
    const bool keypair_works = zmq_curve_keypair(pub, sec) == 0;
    EXPECT_EQ(zmq_has("curve") == 1, keypair_works);
}

TEST(Strerror, NativeErrorsHaveLibzmqsWords) {
    EXPECT_STREQ(zmq_strerror(ETERM), "Context was terminated");
    EXPECT_STREQ(zmq_strerror(EFSM), "Operation cannot be accomplished in current state");
    EXPECT_STREQ(zmq_strerror(ENOCOMPATPROTO),
                 "The protocol is not compatible with the socket type");
    EXPECT_STREQ(zmq_strerror(EMTHREAD), "No thread available");
    EXPECT_STREQ(zmq_strerror(EHOSTUNREACH), "Host unreachable");
    EXPECT_STREQ(zmq_strerror(EINVAL), std::strerror(EINVAL));
}

TEST(AtomicCounter, LibzmqSemantics) {
    void *c = zmq_atomic_counter_new();
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(zmq_atomic_counter_value(c), 0);
    EXPECT_EQ(zmq_atomic_counter_inc(c), 0);  // returns the value before
    EXPECT_EQ(zmq_atomic_counter_inc(c), 1);
    EXPECT_EQ(zmq_atomic_counter_dec(c), 1);  // still non-zero
    EXPECT_EQ(zmq_atomic_counter_dec(c), 0);  // reached zero
    EXPECT_EQ(zmq_atomic_counter_dec(c), 1);  // -1 is non-zero, as in libzmq
    zmq_atomic_counter_set(c, 42);
    EXPECT_EQ(zmq_atomic_counter_value(c), 42);
    zmq_atomic_counter_destroy(&c);
    EXPECT_EQ(c, nullptr);
}

TEST(Stopwatch, CountsMicroseconds) {
    void *w = zmq_stopwatch_start();
    ASSERT_NE(w, nullptr);
    zmq_sleep(0);
    zmq_sleep(-1);  // returns at once
    usleep(20000);
    unsigned long mid = zmq_stopwatch_intermediate(w);
    EXPECT_GE(mid, 20000ul);
    EXPECT_LT(mid, 20000000ul);
    EXPECT_GE(zmq_stopwatch_stop(w), mid);
}

struct thread_probe {
    std::atomic<bool> ran{false};
    std::atomic<bool> sigint_blocked{false};
};

void probe(void *arg) {
    auto *p = static_cast<thread_probe *>(arg);
    sigset_t current;
    pthread_sigmask(SIG_BLOCK, nullptr, &current);
    p->sigint_blocked = sigismember(&current, SIGINT) == 1;
    p->ran = true;
}

TEST(Threads, StartRunsTheFunctionWithSignalsBlockedAndCloseJoins) {
    thread_probe p;
    void *t = zmq_threadstart(probe, &p);
    ASSERT_NE(t, nullptr);
    zmq_threadclose(t);  // joins: afterwards the function has finished
    EXPECT_TRUE(p.ran);
    EXPECT_TRUE(p.sigint_blocked);
}

}  // namespace
