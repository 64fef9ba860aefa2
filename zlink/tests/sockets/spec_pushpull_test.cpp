// PUSH and PULL against RFC 30/PIPELINE, each case over tcp, ipc and inproc.
#include "spec_util.hpp"

#include <algorithm>

namespace {

using namespace spec;

using frames = std::vector<std::string>;

class PushPull : public transport_test {};

// RFC 30, PUSH: "SHALL route outgoing messages to available peers using a
// round-robin strategy." The PUSH connects to three PULLs in order, so its
// queues exist (and the order is known) before any connection completes.
TEST_P(PushPull, PushRoundRobin) {
    void *push = socket(ZMQ_PUSH);
    std::vector<void *> pulls;
    for (int i = 0; i < 3; ++i) {
        pulls.push_back(socket(ZMQ_PULL));
        connect(push, bind(pulls.back()));
    }
    for (int i = 0; i < 9; ++i)
        ASSERT_EQ(send(push, "m" + std::to_string(i)), 2);
    for (int p = 0; p < 3; ++p) {
        for (int k = 0; k < 3; ++k)
            EXPECT_EQ(recv(pulls[p]), "m" + std::to_string(p + 3 * k));
        EXPECT_TRUE(nothing_arrives(pulls[p], std::chrono::milliseconds(50)));
    }
}

// RFC 30, PULL: "SHALL receive incoming messages from its peers using a
// fair-queuing strategy."
TEST_P(PushPull, PullFairQueues) {
    void *pull = socket(ZMQ_PULL);
    const std::string ep = bind(pull);
    std::vector<void *> pushes;
    for (int i = 0; i < 3; ++i) {
        pushes.push_back(socket(ZMQ_PUSH));
        connect(pushes.back(), ep);
        send(pushes.back(), "hello");
        ASSERT_EQ(recv(pull), "hello");  // this peer is attached
    }
    for (size_t i = 0; i < pushes.size(); ++i)
        for (int k = 0; k < 20; ++k)
            send(pushes[i], std::string(1, static_cast<char>('a' + i)));
    sleep_ms(200);        // every queue is non-empty before the first read
    take_commands(pull);  // ... and the PULL knows it (spec_util.hpp)
    std::string first;
    for (int k = 0; k < 6; ++k)
        first += recv(pull);
    for (char c : {'a', 'b', 'c'})
        EXPECT_EQ(std::count(first.begin(), first.end(), c), 2) << first;
}

// RFC 30, PUSH: "SHALL block on sending, or return a suitable error, when it
// has no available peers."
TEST_P(PushPull, PushWithoutPeersBlocksOrEagain) {
    void *push = socket(ZMQ_PUSH);
    bind(push);
    EXPECT_EQ(send(push, "x", ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), EAGAIN);
    set_int(push, ZMQ_SNDTIMEO, 100);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(send(push, "x"), -1);
    EXPECT_EQ(zmq_errno(), EAGAIN);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(90));
}

// RFC 30, PUSH: "SHALL consider a peer as available only when it has a
// outgoing queue that is not full.", "SHALL not accept further messages when
// it has no available peers." and "SHALL NOT discard messages that it cannot
// queue." A slow PULL stops the PUSH at the HWM; nothing accepted is lost.
TEST_P(PushPull, SlowPullLosesNothing) {
    void *push = socket(ZMQ_PUSH);
    void *pull = socket(ZMQ_PULL);
    set_int(push, ZMQ_SNDHWM, 5);
    set_int(pull, ZMQ_RCVHWM, 5);
    connect(pull, bind(push));
    send(push, "hello");
    ASSERT_EQ(recv(pull), "hello");
    const std::string pad(1000, 'x');
    int accepted = 0;
    for (; accepted < 100000; ++accepted)
        if (send(push, std::to_string(accepted) + "|" + pad, ZMQ_DONTWAIT) < 0)
            break;
    ASSERT_EQ(zmq_errno(), EAGAIN);
    ASSERT_GT(accepted, 0);
    ASSERT_LT(accepted, 100000) << "HWM never reached";
    for (int i = 0; i < accepted; ++i) {
        const std::string m = recv(pull);
        ASSERT_EQ(m.substr(0, m.find('|')), std::to_string(i)) << "lost or reordered";
    }
    EXPECT_EQ(send(push, "after", ZMQ_DONTWAIT), 5);
    EXPECT_EQ(recv(pull), "after");
}

// RFC 30, PUSH: "SHALL create this queue when initiating an outgoing
// connection to a peer, and SHALL maintain the queue whether or not the
// connection is established." Messages sent before the PULL exists arrive.
TEST_P(PushPull, QueueExistsBeforeConnection) {
    const std::string ep = endpoint_for_later_bind();
    void *push = socket(ZMQ_PUSH);
    connect(push, ep);
    for (int i = 0; i < 5; ++i)
        ASSERT_EQ(send(push, "early" + std::to_string(i), ZMQ_DONTWAIT), 6);
    void *pull = socket(ZMQ_PULL);
    bind_at(pull, ep);
    for (int i = 0; i < 5; ++i)
        EXPECT_EQ(recv(pull), "early" + std::to_string(i));
}

// RFC 30: PUSH "SHALL only send messages", PULL "SHALL only receive
// messages"; libzmq answers the other direction with ENOTSUP.
TEST_P(PushPull, DirectionsAreEnforced) {
    void *push = socket(ZMQ_PUSH);
    void *pull = socket(ZMQ_PULL);
    connect(pull, bind(push));
    EXPECT_EQ(send(pull, "x", ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), ENOTSUP);
    EXPECT_EQ(recv(push, ZMQ_DONTWAIT), "<error: " + std::string(zmq_strerror(ENOTSUP)) + ">");
    int ev = 0;
    size_t len = sizeof ev;
    zmq_getsockopt(pull, ZMQ_EVENTS, &ev, &len);
    EXPECT_EQ(ev & ZMQ_POLLOUT, 0);
}

// RFC 30: "SHALL not filter or modify outgoing messages in any way."
// Multipart messages arrive whole, in order, also when large.
TEST_P(PushPull, MultipartArrivesWhole) {
    void *push = socket(ZMQ_PUSH);
    void *pull = socket(ZMQ_PULL);
    connect(push, bind(pull));
    send_all(push, {"a", "", std::string(70000, 'y')});
    send_all(push, {""});
    EXPECT_EQ(recv_all(pull), (frames{"a", "", std::string(70000, 'y')}));
    EXPECT_EQ(recv_all(pull), (frames{""}));
}

// A PULL that goes away does not stop the pipeline: the PUSH learns of it
// and sends the rest to the PULL that remains (RFC 30: "If this peer
// disconnects, the PUSH socket SHALL destroy its queue").
TEST_P(PushPull, ClosedPullLeavesRoundRobin) {
    void *push = socket(ZMQ_PUSH);
    const std::string ep = bind(push);
    void *stays = socket(ZMQ_PULL);
    void *leaves = socket(ZMQ_PULL);
    connect(stays, ep);
    connect(leaves, ep);
    // Both are attached once each has received something.
    bool stays_got = false, leaves_got = false;
    for (int i = 0; i < 300 && !(stays_got && leaves_got); ++i) {
        send(push, "warm", ZMQ_DONTWAIT);
        stays_got |= !nothing_arrives(stays, std::chrono::milliseconds(5));
        leaves_got |= !nothing_arrives(leaves, std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(stays_got && leaves_got);
    drain(stays);
    close(leaves);
    // Until the PUSH notices, some messages may still go to the dying queue;
    // afterwards every message reaches the PULL that stays: ten in a row.
    int streak = 0;
    for (int i = 0; i < 300 && streak < 10; ++i) {
        const std::string m = "m" + std::to_string(i);
        send(push, m);
        const bool here =
            !nothing_arrives(stays, std::chrono::milliseconds(50)) && recv(stays) == m;
        streak = here ? streak + 1 : 0;
        drain(stays);
    }
    EXPECT_EQ(streak, 10);
}

// RFC 30, PULL: "SHALL create this queue when initiating an outgoing
// connection to a peer [...] If this peer disconnects, the PULL socket SHALL
// destroy its queue and SHALL discard any messages it contains." The same
// when the PULL itself disconnects (libzmq's test_spec_pushpull
// multipart_atomic_drop relies on it): nothing queued from that endpoint is
// delivered afterwards.
TEST_P(PushPull, DisconnectDiscardsTheQueue) {
    void *push = socket(ZMQ_PUSH);
    void *pull = socket(ZMQ_PULL);
    const std::string ep = bind(push);
    connect(pull, ep);
    for (int i = 0; i < 3; ++i)
        send(push, "queued");
    zmq_pollitem_t item{pull, 0, ZMQ_POLLIN, 0};
    ASSERT_EQ(zmq_poll(&item, 1, recv_timeout_ms), 1);  // in the PULL's queue
    ASSERT_EQ(zmq_disconnect(pull, ep.c_str()), 0);
    EXPECT_EQ(recv(pull, ZMQ_DONTWAIT), "<error: " + std::string(zmq_strerror(EAGAIN)) + ">");
    EXPECT_TRUE(nothing_arrives(pull));
}

SPEC_ALL_TRANSPORTS(PushPull);

// Inproc queues hold SNDHWM + RCVHWM messages (0 on either side: unlimited),
// also when the connect came first and the bound side's HWM was not known
// yet (libzmq's test_hwm and test_sockopt_hwm count exactly this).
class InprocHwm : public ::testing::Test {
protected:
    void SetUp() override { ctx_ = zmq_ctx_new(); }
    void TearDown() override { zmq_ctx_term(ctx_); }
    // PUSH sends with ZMQ_DONTWAIT until refused (at most 10000); the PULL
    // then reads them all. `push_binds`: which side binds (after the connect).
    int queued(int sndhwm, int rcvhwm, bool push_binds) {
        void *push = zmq_socket(ctx_, ZMQ_PUSH);
        void *pull = zmq_socket(ctx_, ZMQ_PULL);
        const std::string ep = "inproc://hwm-" + unique_name();
        zmq_setsockopt(push, ZMQ_SNDHWM, &sndhwm, sizeof sndhwm);
        zmq_setsockopt(pull, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm);
        void *connecter = push_binds ? pull : push, *binder = push_binds ? push : pull;
        EXPECT_EQ(zmq_connect(connecter, ep.c_str()), 0);
        EXPECT_EQ(zmq_bind(binder, ep.c_str()), 0);
        int sent = 0;
        while (sent < 10000 && zmq_send(push, nullptr, 0, ZMQ_DONTWAIT) == 0)
            ++sent;
        int got = 0;
        while (zmq_recv(pull, nullptr, 0, ZMQ_DONTWAIT) == 0)
            ++got;
        EXPECT_EQ(got, sent) << "queued but not delivered";
        for (void *s : {push, pull}) {
            int zero = 0;
            zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
            zmq_close(s);
        }
        return sent;
    }
    void *ctx_ = nullptr;
};

TEST_F(InprocHwm, ConnectFirstQueueIsTheSum) {
    EXPECT_EQ(queued(1, 1, false), 2);      // PUSH connects first
    EXPECT_EQ(queued(2, 2, true), 4);       // PULL connects first
    EXPECT_EQ(queued(1, 0, false), 10000);  // RCVHWM 0: unlimited
    EXPECT_EQ(queued(0, 1, true), 10000);   // SNDHWM 0: unlimited
}

}  // namespace
