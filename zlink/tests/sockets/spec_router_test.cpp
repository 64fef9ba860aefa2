// ROUTER against RFC 28/REQREP, each case over tcp, ipc and inproc.
#include "spec_util.hpp"

#include <set>

namespace {

using namespace spec;

using frames = std::vector<std::string>;

class Router : public transport_test {
protected:
    void SetUp() override {
        transport_test::SetUp();
        router = socket(ZMQ_ROUTER);
        endpoint = bind(router);
    }
    // A DEALER with `id` (empty: none) that has said hello, so the ROUTER
    // knows it; returns the id the ROUTER uses for it.
    std::string dealer(void *&d, const std::string &id) {
        d = socket(ZMQ_DEALER);
        if (!id.empty())
            set_str(d, ZMQ_ROUTING_ID, id);
        connect(d, endpoint);
        send(d, "hello");
        frames got = recv_all(router);
        EXPECT_EQ(got.size(), 2u);
        EXPECT_EQ(got.back(), "hello");
        return got.front();
    }
    void *router = nullptr;
    std::string endpoint;
};

// RFC 28, ROUTER: "SHALL prefix each incoming message with a frame containing
// the identity of the originating double queue." and "SHOULD allow the peer
// to specify its identity explicitly through the Identity metadata property."
TEST_P(Router, PrefixesSenderIdentity) {
    void *d;
    EXPECT_EQ(dealer(d, "peer-A"), "peer-A");
    send_all(d, {"x", "", "z"});
    EXPECT_EQ(recv_all(router), (frames{"peer-A", "x", "", "z"}));
}

// RFC 28, ROUTER: "SHALL identify each double queue using a unique "identity"
// binary string." Without an announced id, libzmq 4.3.5 generates five bytes
// starting with a zero byte; replies to it reach the peer.
TEST_P(Router, GeneratesIdentityForAnonymousPeer) {
    void *a, *b;
    const std::string ida = dealer(a, ""), idb = dealer(b, "");
    ASSERT_EQ(ida.size(), 5u);
    EXPECT_EQ(ida[0], '\0');
    EXPECT_NE(ida, idb);
    send_all(router, {idb, "for-b"});
    send_all(router, {ida, "for-a"});
    EXPECT_EQ(recv(a), "for-a");
    EXPECT_EQ(recv(b), "for-b");
}

// RFC 28, ROUTER: "SHALL remove the first frame from each outgoing message and
// use this as the identity of a double queue." and "SHALL route the message
// to the outgoing queue if that queue exists, and has space."
TEST_P(Router, RoutesByFirstFrame) {
    void *a, *b;
    dealer(a, "A");
    dealer(b, "B");
    send_all(router, {"B", "to-b", "part2"});
    send_all(router, {"A", "to-a"});
    EXPECT_EQ(recv_all(b), (frames{"to-b", "part2"}));
    EXPECT_EQ(recv_all(a), (frames{"to-a"}));
    EXPECT_TRUE(nothing_arrives(a, std::chrono::milliseconds(50)));
}

// RFC 28, ROUTER: "SHALL either silently drop the message, or return an
// error, depending on configuration, if the queue does not exist, or is
// full." Default: silent drop.
TEST_P(Router, UnroutableIsDroppedByDefault) {
    void *a;
    dealer(a, "A");
    EXPECT_EQ(send(router, "nobody", ZMQ_SNDMORE), 6);
    EXPECT_EQ(send(router, "lost"), 4);
    send_all(router, {"A", "kept"});
    EXPECT_EQ(recv(a), "kept");
}

// Same sentence, with ZMQ_ROUTER_MANDATORY (zmq_setsockopt(3)): "the socket
// shall fail with EHOSTUNREACH" for an unknown peer.
TEST_P(Router, MandatoryUnroutableIsEhostunreach) {
    set_int(router, ZMQ_ROUTER_MANDATORY, 1);
    void *a;
    dealer(a, "A");
    EXPECT_EQ(send(router, "nobody", ZMQ_SNDMORE | ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), EHOSTUNREACH);
    send_all(router, {"A", "kept"});
    EXPECT_EQ(recv(a), "kept");
}

// Same sentence, queue full, with ZMQ_ROUTER_MANDATORY: the send is refused
// (EAGAIN under ZMQ_DONTWAIT) instead of dropping; nothing accepted is lost.
TEST_P(Router, MandatoryFullQueueIsEagainAndLosesNothing) {
    set_int(router, ZMQ_ROUTER_MANDATORY, 1);
    set_int(router, ZMQ_SNDHWM, 5);
    void *a = socket(ZMQ_DEALER);
    set_int(a, ZMQ_RCVHWM, 5);
    set_str(a, ZMQ_ROUTING_ID, "A");
    connect(a, endpoint);
    send(a, "hello");
    ASSERT_EQ(recv_all(router), (frames{"A", "hello"}));
    int accepted = 0;
    const std::string pad(1000, 'x');
    for (; accepted < 100000; ++accepted) {
        if (send(router, "A", ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
            ASSERT_EQ(zmq_errno(), EAGAIN);
            break;
        }
        ASSERT_EQ(send(router, std::to_string(accepted) + "|" + pad, ZMQ_DONTWAIT),
                  1001 + static_cast<int>(std::to_string(accepted).size()));
    }
    ASSERT_LT(accepted, 100000) << "HWM never reached";
    for (int i = 0; i < accepted; ++i) {
        const std::string m = recv(a);
        ASSERT_EQ(m.substr(0, m.find('|')), std::to_string(i));
    }
}

// RFC 28, ROUTER: "SHALL receive incoming messages from its peers using a
// fair-queuing strategy."
TEST_P(Router, FairQueuedReceive) {
    void *d[3];
    for (int i = 0; i < 3; ++i)
        dealer(d[i], std::string(1, static_cast<char>('A' + i)));
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 10; ++k)
            send(d[i], "m");
    sleep_ms(200);
    take_commands(router);  // every queue non-empty, and the ROUTER knows it (spec_util.hpp)
    std::multiset<std::string> first;
    for (int k = 0; k < 6; ++k)
        first.insert(recv_all(router).front());
    for (const char *id : {"A", "B", "C"})
        EXPECT_EQ(first.count(id), 2u) << id;
}

// zmq_setsockopt(3), ZMQ_ROUTER_HANDOVER: "If two clients use the same
// identity when connecting to a ROUTER, the results shall depend on the
// ZMQ_ROUTER_HANDOVER option setting. If that is not set (or set to the
// default of zero), the ROUTER socket shall reject clients trying to connect
// with an already-used identity. If that option is set to 1, the ROUTER
// socket shall hand-over the connection to the new client and disconnect the
// existing one."
TEST_P(Router, DuplicateIdentityRejectedWithoutHandover) {
    void *first;
    dealer(first, "X");
    void *second = socket(ZMQ_DEALER);
    set_str(second, ZMQ_ROUTING_ID, "X");
    connect(second, endpoint);
    send(second, "from-second");
    EXPECT_TRUE(nothing_arrives(router, std::chrono::milliseconds(300)));
    send_all(router, {"X", "to-x"});
    EXPECT_EQ(recv(first), "to-x");
}

TEST_P(Router, HandoverGivesIdentityToNewPeer) {
    set_int(router, ZMQ_ROUTER_HANDOVER, 1);
    void *first;
    dealer(first, "X");
    void *second = socket(ZMQ_DEALER);
    set_str(second, ZMQ_ROUTING_ID, "X");
    connect(second, endpoint);
    send(second, "from-second");
    EXPECT_EQ(recv_all(router), (frames{"X", "from-second"}));
    send_all(router, {"X", "to-x"});
    EXPECT_EQ(recv(second), "to-x");
    EXPECT_TRUE(nothing_arrives(first, std::chrono::milliseconds(100)));
}

// zmq_setsockopt(3), ZMQ_CONNECT_ROUTING_ID: "Sets the peer id of the peer
// connected via the following zmq_connect() call, such that that connection
// is immediately ready for data transmission."
TEST_P(Router, ConnectRoutingIdNamesThePeer) {
    void *client = socket(ZMQ_ROUTER);
    set_str(client, ZMQ_CONNECT_ROUTING_ID, "server");
    connect(client, endpoint);
    set_int(client, ZMQ_ROUTER_MANDATORY, 1);
    // Sendable by that name as soon as the connection exists.
    bool sent = false;
    for (int i = 0; i < 300 && !sent; ++i) {
        if (send(client, "server", ZMQ_SNDMORE | ZMQ_DONTWAIT) == 6)
            sent = true;
        else
            sleep_ms(10);
    }
    ASSERT_TRUE(sent) << zmq_strerror(zmq_errno());
    send(client, "ping");
    frames got = recv_all(router);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1], "ping");
    send_all(router, {got[0], "pong"});
    EXPECT_EQ(recv_all(client), (frames{"server", "pong"}));
}

// zmq_poll(3): "ZMQ_POLLIN: For 0MQ sockets, at least one message may be
// received from the socket without blocking." A ROUTER polled for input
// reports it exactly when a message (id frame + body) can be read.
TEST_P(Router, PollReportsIncomingMessages) {
    void *a;
    dealer(a, "A");
    zmq_pollitem_t item{router, 0, ZMQ_POLLIN, 0};
    EXPECT_EQ(zmq_poll(&item, 1, 50), 0);
    for (int i = 0; i < 3; ++i)
        send(a, "m" + std::to_string(i));
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(zmq_poll(&item, 1, recv_timeout_ms), 1);
        EXPECT_TRUE(item.revents & ZMQ_POLLIN);
        EXPECT_EQ(recv_all(router, ZMQ_DONTWAIT), (frames{"A", "m" + std::to_string(i)}));
    }
    EXPECT_EQ(zmq_poll(&item, 1, 50), 0);
}

SPEC_ALL_TRANSPORTS(Router);

}  // namespace
