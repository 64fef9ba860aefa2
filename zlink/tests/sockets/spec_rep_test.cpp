// REP against RFC 28/REQREP, each case over tcp, ipc and inproc.
#include "spec_util.hpp"

#include <algorithm>

namespace {

using namespace spec;

using frames = std::vector<std::string>;

class Rep : public transport_test {
protected:
    void SetUp() override {
        transport_test::SetUp();
        rep = socket(ZMQ_REP);
        endpoint = bind(rep);
    }
    // A DEALER talking to the REP; it must write the envelope itself.
    void *dealer() {
        void *d = socket(ZMQ_DEALER);
        connect(d, endpoint);
        return d;
    }
    void *rep = nullptr;
    std::string endpoint;
};

std::string efsm() { return "<error: " + std::string(zmq_strerror(EFSM)) + ">"; }

// RFC 28, REP: "SHALL remove and store the address envelope, including the
// delimiter.", "SHALL pass the remaining data frames to its calling
// application.", "SHALL prepend the address envelope and delimiter." and
// "SHALL deliver this message back to the originating peer."
TEST_P(Rep, EnvelopeStoredAndRestored) {
    void *d = dealer();
    send_all(d, {"X", "Y", "", "body", "more"});
    EXPECT_EQ(recv_all(rep), (frames{"body", "more"}));
    send_all(rep, {"re", "ply"});
    EXPECT_EQ(recv_all(d), (frames{"X", "Y", "", "re", "ply"}));
}

// RFC 28, REP: "SHALL receive incoming messages from its peers using a
// fair-queuing strategy."
TEST_P(Rep, FairQueuedRequests) {
    std::vector<void *> peers{dealer(), dealer(), dealer()};
    for (size_t i = 0; i < peers.size(); ++i) {
        // First a round trip, so the peer is known to be attached.
        send_all(peers[i], {"", "hello"});
        ASSERT_EQ(recv(rep), "hello");
        send(rep, "hi");
        ASSERT_EQ(recv_all(peers[i]), (frames{"", "hi"}));
    }
    for (size_t i = 0; i < peers.size(); ++i)
        for (int k = 0; k < 10; ++k)
            send_all(peers[i], {"", std::string(1, static_cast<char>('a' + i))});
    sleep_ms(200);       // every queue is non-empty before the first read
    take_commands(rep);  // ... and the REP knows it (spec_util.hpp)
    std::string first;
    for (int k = 0; k < 6; ++k) {
        first += recv(rep);
        send(rep, "ok");
    }
    for (char c : {'a', 'b', 'c'})
        EXPECT_EQ(std::count(first.begin(), first.end(), c), 2) << first;
}

// RFC 28, REP: "SHALL receive and then send exactly one message at a time."
// libzmq reports the wrong order with EFSM.
TEST_P(Rep, StrictAlternation) {
    EXPECT_EQ(send(rep, "x", ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), EFSM);
    void *r = socket(ZMQ_REQ);
    connect(r, endpoint);
    send(r, "q");
    EXPECT_EQ(recv(rep), "q");
    EXPECT_EQ(recv(rep, ZMQ_DONTWAIT), efsm());
    send(rep, "a");
    EXPECT_EQ(send(rep, "again", ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), EFSM);
    EXPECT_EQ(recv(r), "a");
}

// RFC 28, REP: "SHALL silently discard the reply, or return an error, if the
// originating peer is no longer connected." The REP goes on serving others.
TEST_P(Rep, ReplyToVanishedPeerDiscarded) {
    void *gone = socket(ZMQ_REQ);
    connect(gone, endpoint);
    send(gone, "q1");
    EXPECT_EQ(recv(rep), "q1");
    close(gone);
    sleep_ms(100);
    EXPECT_EQ(send(rep, "nobody"), 6);
    void *r = socket(ZMQ_REQ);
    connect(r, endpoint);
    send(r, "q2");
    EXPECT_EQ(recv(rep), "q2");
    send(rep, "a2");
    EXPECT_EQ(recv(r), "a2");
}

// RFC 28, REP: "SHALL not block on sending." A peer that never reads its
// replies fills its queue; the REP drops replies instead of waiting.
TEST_P(Rep, NeverBlocksOnSend) {
    set_int(rep, ZMQ_SNDHWM, 1);
    void *d = dealer();
    set_int(d, ZMQ_RCVHWM, 1);
    const std::string pad(100000, 'p');
    for (int i = 0; i < 40; ++i) {
        send_all(d, {"", "q"});
        ASSERT_EQ(recv(rep), "q") << i;
        ASSERT_EQ(send(rep, pad, ZMQ_DONTWAIT), static_cast<int>(pad.size())) << "reply " << i;
    }
    EXPECT_EQ(recv_all(d), (frames{"", pad}));  // some got through, whole
}

// A request without a delimiter is malformed: discarded silently, and the
// next well-formed request is served (its reply goes to the right peer).
TEST_P(Rep, MalformedRequestDiscarded) {
    void *d = dealer();
    send_all(d, {"no-delimiter"});
    send_all(d, {"label", "still-none"});
    send_all(d, {"", "good"});
    EXPECT_EQ(recv_all(rep), (frames{"good"}));
    send(rep, "answer");
    EXPECT_EQ(recv_all(d), (frames{"", "answer"}));
}

// REQ and REP together: many round trips, each request and reply whole.
TEST_P(Rep, ReqRepRoundTrips) {
    void *r = socket(ZMQ_REQ);
    connect(r, endpoint);
    for (int i = 0; i < 100; ++i) {
        const std::string n = std::to_string(i);
        send_all(r, {"q" + n, ""});
        ASSERT_EQ(recv_all(rep), (frames{"q" + n, ""}));
        send_all(rep, {"a" + n});
        ASSERT_EQ(recv_all(r), (frames{"a" + n}));
    }
}

SPEC_ALL_TRANSPORTS(Rep);

}  // namespace
