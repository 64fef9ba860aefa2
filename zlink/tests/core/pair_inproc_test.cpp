// PAIR over inproc through the C API.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "zmq.h"

namespace {

struct Ctx {
    void *ctx = zmq_ctx_new();
    ~Ctx() { EXPECT_EQ(zmq_ctx_term(ctx), 0); }
};

void set_int(void *s, int opt, int v) { ASSERT_EQ(zmq_setsockopt(s, opt, &v, sizeof v), 0); }

std::string recv_str(void *s, int flags = 0) {
    char buf[256];
    int n = zmq_recv(s, buf, sizeof buf, flags);
    if (n < 0)
        return "<error " + std::to_string(zmq_errno()) + ">";
    return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

TEST(PairInproc, BindThenConnectBothDirections) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    void *b = zmq_socket(c.ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(a, "inproc://p1"), 0);
    ASSERT_EQ(zmq_connect(b, "inproc://p1"), 0);
    ASSERT_EQ(zmq_send(b, "hello", 5, 0), 5);
    EXPECT_EQ(recv_str(a), "hello");
    ASSERT_EQ(zmq_send(a, "world", 5, 0), 5);
    EXPECT_EQ(recv_str(b), "world");
    zmq_close(a);
    zmq_close(b);
}

TEST(PairInproc, ConnectBeforeBind) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    void *b = zmq_socket(c.ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_connect(b, "inproc://late"), 0);
    ASSERT_EQ(zmq_send(b, "early", 5, 0), 5);  // queued before the binder exists
    ASSERT_EQ(zmq_bind(a, "inproc://late"), 0);
    EXPECT_EQ(recv_str(a), "early");
    ASSERT_EQ(zmq_send(a, "back", 4, 0), 4);
    EXPECT_EQ(recv_str(b), "back");
    zmq_close(a);
    zmq_close(b);
}

TEST(PairInproc, ConnecterClosesBeforeAnyBind) {
    Ctx c;
    void *b = zmq_socket(c.ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_connect(b, "inproc://never"), 0);
    ASSERT_EQ(zmq_send(b, "lost", 4, 0), 4);
    zmq_close(b);  // ctx_term must still return
}

TEST(PairInproc, MultipartArrivesWhole) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    void *b = zmq_socket(c.ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(a, "inproc://mp"), 0);
    ASSERT_EQ(zmq_connect(b, "inproc://mp"), 0);
    ASSERT_EQ(zmq_send(b, "1", 1, ZMQ_SNDMORE), 1);
    // Nothing visible until the last frame is sent.
    char x;
    EXPECT_EQ(zmq_recv(a, &x, 1, ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), EAGAIN);
    ASSERT_EQ(zmq_send(b, "2", 1, 0), 1);
    EXPECT_EQ(recv_str(a), "1");
    int more = 0;
    size_t len = sizeof more;
    ASSERT_EQ(zmq_getsockopt(a, ZMQ_RCVMORE, &more, &len), 0);
    EXPECT_EQ(more, 1);
    EXPECT_EQ(recv_str(a), "2");
    ASSERT_EQ(zmq_getsockopt(a, ZMQ_RCVMORE, &more, &len), 0);
    EXPECT_EQ(more, 0);
    zmq_close(a);
    zmq_close(b);
}

TEST(PairInproc, HwmBlocksThenEagainWithDontwait) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    void *b = zmq_socket(c.ctx, ZMQ_PAIR);
    set_int(a, ZMQ_RCVHWM, 2);
    set_int(b, ZMQ_SNDHWM, 2);
    ASSERT_EQ(zmq_bind(a, "inproc://hwm"), 0);
    ASSERT_EQ(zmq_connect(b, "inproc://hwm"), 0);
    int sent = 0;
    while (zmq_send(b, "x", 1, ZMQ_DONTWAIT) == 1)
        ++sent;
    EXPECT_EQ(zmq_errno(), EAGAIN);
    EXPECT_EQ(sent, 4);  // inproc HWM is sender SNDHWM + receiver RCVHWM
    set_int(b, ZMQ_SNDTIMEO, 50);
    EXPECT_EQ(zmq_send(b, "x", 1, 0), -1);
    EXPECT_EQ(zmq_errno(), EAGAIN);
    for (int i = 0; i < sent; ++i)
        EXPECT_EQ(recv_str(a), "x");
    // Reading freed space: a blocking send now succeeds.
    set_int(b, ZMQ_SNDTIMEO, 2000);
    EXPECT_EQ(zmq_send(b, "y", 1, 0), 1);
    EXPECT_EQ(recv_str(a), "y");
    zmq_close(a);
    zmq_close(b);
}

TEST(PairInproc, RcvtimeoTimesOut) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(a, "inproc://to"), 0);
    set_int(a, ZMQ_RCVTIMEO, 30);
    char x;
    EXPECT_EQ(zmq_recv(a, &x, 1, 0), -1);
    EXPECT_EQ(zmq_errno(), EAGAIN);
    zmq_close(a);
}

TEST(PairInproc, BlockingRecvWakesAcrossThreads) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    void *b = zmq_socket(c.ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(a, "inproc://thr"), 0);
    ASSERT_EQ(zmq_connect(b, "inproc://thr"), 0);
    constexpr int n = 100000;
    std::thread sender([&] {
        for (int i = 0; i < n; ++i)
            ASSERT_EQ(zmq_send(b, &i, sizeof i, 0), 4);
    });
    for (int i = 0; i < n; ++i) {
        int v = -1;
        ASSERT_EQ(zmq_recv(a, &v, sizeof v, 0), 4);
        ASSERT_EQ(v, i);
    }
    sender.join();
    zmq_close(a);
    zmq_close(b);
}

TEST(PairInproc, ZeroCopyMessageKeepsItsBytes) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    void *b = zmq_socket(c.ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(a, "inproc://zc"), 0);
    ASSERT_EQ(zmq_connect(b, "inproc://zc"), 0);
    static bool freed = false;
    char *buf = new char[100000];
    std::memset(buf, 'z', 100000);
    zmq_msg_t m;
    ASSERT_EQ(zmq_msg_init_data(
                  &m, buf, 100000,
                  [](void *d, void *) {
                      delete[] static_cast<char *>(d);
                      freed = true;
                  },
                  nullptr),
              0);
    ASSERT_EQ(zmq_msg_send(&m, b, 0), 100000);
    zmq_msg_t r;
    zmq_msg_init(&r);
    ASSERT_EQ(zmq_msg_recv(&r, a, 0), 100000);
    EXPECT_EQ(zmq_msg_data(&r), static_cast<void *>(buf));  // same bytes, no copy
    EXPECT_FALSE(freed);
    zmq_msg_close(&r);
    EXPECT_TRUE(freed);
    zmq_close(a);
    zmq_close(b);
}

TEST(PairInproc, CtxTermUnblocksRecvWithEterm) {
    void *ctx = zmq_ctx_new();
    void *a = zmq_socket(ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(a, "inproc://term"), 0);
    std::thread t([&] {
        char x;
        EXPECT_EQ(zmq_recv(a, &x, 1, 0), -1);
        EXPECT_EQ(zmq_errno(), ETERM);
        zmq_close(a);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(zmq_ctx_term(ctx), 0);
    t.join();
}

TEST(Api, UnknownOptionIsEinval) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    int v = 1;
    EXPECT_EQ(zmq_setsockopt(a, 9999, &v, sizeof v), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
    zmq_close(a);
}

TEST(Api, HasAndVersionTellTheTruth) {
    EXPECT_EQ(zmq_has("ipc"), 1);
    // zmq_has("curve") depends on the build: tests/security/security_api_test.cpp.
    EXPECT_EQ(zmq_has("pgm"), 0);
    int ma, mi, pa;
    zmq_version(&ma, &mi, &pa);
    EXPECT_EQ(ma * 10000 + mi * 100 + pa, 40305);  // the libzmq API level
}

#include <csignal>
#include <pthread.h>

TEST(PairInproc, SignalInterruptsBlockingRecvWithEintr) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(a, "inproc://eintr"), 0);
    struct sigaction sa{};
    sa.sa_handler = [](int) {};
    sigaction(SIGUSR1, &sa, nullptr);  // no SA_RESTART: poll() returns EINTR
    pthread_t self = pthread_self();
    std::thread killer([self] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        pthread_kill(self, SIGUSR1);
    });
    char x;
    EXPECT_EQ(zmq_recv(a, &x, 1, 0), -1);
    EXPECT_EQ(zmq_errno(), EINTR);
    killer.join();
    zmq_close(a);
}

TEST(PairInproc, MaxMsgSizeIsPerSocketOption) {
    Ctx c;
    void *a = zmq_socket(c.ctx, ZMQ_PAIR);
    int64_t m = 100;
    ASSERT_EQ(zmq_setsockopt(a, ZMQ_MAXMSGSIZE, &m, sizeof m), 0);
    int64_t got = 0;
    size_t len = sizeof got;
    ASSERT_EQ(zmq_getsockopt(a, ZMQ_MAXMSGSIZE, &got, &len), 0);
    EXPECT_EQ(got, 100);
    zmq_close(a);
}
