// DEALER against RFC 28/REQREP, each case over tcp, ipc and inproc.
#include "spec_util.hpp"

#include <algorithm>
#include <set>

namespace {

using namespace spec;

int g_index(const std::string &m) { return std::stoi(m.substr(1)); }

class Dealer : public transport_test {
protected:
    // A bound DEALER and `n` connected DEALER peers, each of which has sent
    // one greeting, so every pipe is known to be attached on both sides.
    void make_star(int n) {
        hub = socket(ZMQ_DEALER);
        const std::string ep = bind(hub);
        for (int i = 0; i < n; ++i) {
            void *p = socket(ZMQ_DEALER);
            connect(p, ep);
            peers.push_back(p);
            send(p, "hello");
            ASSERT_EQ(recv(hub), "hello");
        }
    }
    void *hub = nullptr;
    std::vector<void *> peers;
};

// RFC 28, DEALER: "SHALL route outgoing messages to available peers using a
// round-robin strategy."
TEST_P(Dealer, RoundRobinSend) {
    make_star(3);
    for (int i = 0; i < 9; ++i)
        ASSERT_EQ(send(hub, "m" + std::to_string(i)), 2);
    std::set<std::string> all;
    for (void *p : peers) {
        // Each peer gets exactly every third message.
        std::vector<std::string> got{recv(p), recv(p), recv(p)};
        EXPECT_TRUE(nothing_arrives(p, std::chrono::milliseconds(50)));
        for (auto &g : got)
            all.insert(g);
        const int first = g_index(got[0]);
        EXPECT_EQ(g_index(got[1]), first + 3);
        EXPECT_EQ(g_index(got[2]), first + 6);
    }
    EXPECT_EQ(all.size(), 9u);
}

// RFC 28, DEALER: "SHALL receive incoming messages from its peers using a
// fair-queuing strategy."
TEST_P(Dealer, FairQueuedReceive) {
    make_star(3);
    for (size_t i = 0; i < peers.size(); ++i)
        for (int k = 0; k < 20; ++k)
            send(peers[i], std::string(1, static_cast<char>('a' + i)));
    sleep_ms(200);       // all three queues are non-empty before the first read
    take_commands(hub);  // ... and the hub knows it (spec_util.hpp)
    std::string first;
    for (int k = 0; k < 6; ++k)
        first += recv(hub);
    for (char c : {'a', 'b', 'c'})
        EXPECT_EQ(std::count(first.begin(), first.end(), c), 2) << first;
}

// RFC 28, DEALER: "SHALL block on sending, or return a suitable error, when it
// has no available peers."
TEST_P(Dealer, NoPeersBlocksOrEagain) {
    void *d = socket(ZMQ_DEALER);
    EXPECT_EQ(send(d, "x", ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), EAGAIN);
    set_int(d, ZMQ_SNDTIMEO, 100);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(send(d, "x"), -1);
    EXPECT_EQ(zmq_errno(), EAGAIN);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(90));
}

// RFC 28, DEALER: "SHALL consider a peer as available only when it has a
// outgoing queue that is not full." and "SHALL NOT discard messages that it
// cannot queue." A slow consumer makes the sender stop (EAGAIN); once the
// consumer reads, every message accepted is delivered, in order.
TEST_P(Dealer, SlowConsumerLosesNothing) {
    void *sender = socket(ZMQ_DEALER);
    void *receiver = socket(ZMQ_DEALER);
    set_int(sender, ZMQ_SNDHWM, 5);
    set_int(receiver, ZMQ_RCVHWM, 5);
    connect(receiver, bind(sender));
    send(receiver, "hello");
    ASSERT_EQ(recv(sender), "hello");
    int accepted = 0;
    const std::string pad(1000, 'x');
    for (int tries = 0; tries < 100000; ++tries) {
        if (send(sender, std::to_string(accepted) + "|" + pad, ZMQ_DONTWAIT) < 0) {
            ASSERT_EQ(zmq_errno(), EAGAIN);
            break;
        }
        ++accepted;
    }
    ASSERT_GT(accepted, 0);
    ASSERT_LT(accepted, 100000) << "HWM never reached";
    for (int i = 0; i < accepted; ++i) {
        const std::string m = recv(receiver);
        ASSERT_EQ(m.substr(0, m.find('|')), std::to_string(i)) << "lost or reordered";
    }
    // Room again: sending resumes.
    EXPECT_EQ(send(sender, "after", ZMQ_DONTWAIT), 5);
    EXPECT_EQ(recv(receiver), "after");
}

// RFC 28, DEALER: "SHALL not filter or modify outgoing or incoming messages
// in any way." Multipart messages are atomic: all frames or none.
TEST_P(Dealer, MultipartAtomic) {
    make_star(1);
    send_all(hub, {"a", "", "c"});
    send_all(peers[0], {"x", std::string(70000, 'y')});
    EXPECT_EQ(recv_all(peers[0]), (std::vector<std::string>{"a", "", "c"}));
    EXPECT_EQ(recv_all(hub), (std::vector<std::string>{"x", std::string(70000, 'y')}));
}

// Multipart atomicity with a slow consumer: HWM counts whole messages, so a
// sender at its HWM is refused at a message boundary, never mid-message, and
// the consumer gets every accepted message complete.
TEST_P(Dealer, MultipartAtomicUnderHwm) {
    void *sender = socket(ZMQ_DEALER);
    void *receiver = socket(ZMQ_DEALER);
    set_int(sender, ZMQ_SNDHWM, 3);
    set_int(receiver, ZMQ_RCVHWM, 3);
    connect(receiver, bind(sender));
    send(receiver, "hello");
    ASSERT_EQ(recv(sender), "hello");
    int accepted = 0;
    const std::string pad(2000, 'z');
    for (; accepted < 100000; ++accepted) {
        if (send(sender, std::to_string(accepted), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
            ASSERT_EQ(zmq_errno(), EAGAIN);
            break;
        }
        // Once the first frame is taken, the rest of the message must be too.
        ASSERT_EQ(send(sender, "", ZMQ_SNDMORE | ZMQ_DONTWAIT), 0) << "refused mid-message";
        ASSERT_EQ(send(sender, pad, ZMQ_DONTWAIT), 2000) << "refused mid-message";
    }
    ASSERT_LT(accepted, 100000) << "HWM never reached";
    for (int i = 0; i < accepted; ++i)
        ASSERT_EQ(recv_all(receiver), (std::vector<std::string>{std::to_string(i), "", pad}));
}

SPEC_ALL_TRANSPORTS(Dealer);

}  // namespace
