// REQ against RFC 28/REQREP (and libzmq 4.3.5's REQ_CORRELATE / REQ_RELAXED),
// each case over tcp, ipc and inproc.
#include "spec_util.hpp"

#include <cstdint>
#include <cstring>

namespace {

using namespace spec;

using frames = std::vector<std::string>;

class Req : public transport_test {
protected:
    // `n` bound services of `type`, and a REQ connected to all of them in
    // order, so its round-robin order is known from the first request on.
    void make_req_to(int n, int type) {
        req = socket(ZMQ_REQ);
        for (int i = 0; i < n; ++i) {
            void *s = socket(type);
            endpoints.push_back(bind(s));
            services.push_back(s);
        }
        for (auto &ep : endpoints)
            connect(req, ep);
    }
    // A ROUTER cannot address the REQ until the connection is up: retry.
    void router_send(void *router, const frames &msg) {
        for (int i = 0; i < 300; ++i) {
            if (send(router, msg[0], ZMQ_SNDMORE) >= 0) {
                send_all(router, frames(msg.begin() + 1, msg.end()));
                return;
            }
            ASSERT_EQ(zmq_errno(), EHOSTUNREACH);
            sleep_ms(10);
        }
        FAIL() << "peer '" << msg[0] << "' never became routable";
    }
    int events(void *s) {
        int ev = 0;
        size_t len = sizeof ev;
        EXPECT_EQ(zmq_getsockopt(s, ZMQ_EVENTS, &ev, &len), 0);
        return ev;
    }
    void *req = nullptr;
    std::vector<void *> services;
    std::vector<std::string> endpoints;
};

// RFC 28, REQ: "SHALL prefix the outgoing message with an empty delimiter
// frame." and the wire format "A delimiter, consisting of an empty frame,
// added by the REQ socket. One or more data frames, comprising the message
// visible to the application." The reply's delimiter is removed again.
TEST_P(Req, DelimiterAddedAndRemoved) {
    make_req_to(1, ZMQ_ROUTER);
    send_all(req, {"ABC", "DEF"});
    frames got = recv_all(services[0]);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(frames(got.begin() + 1, got.end()), (frames{"", "ABC", "DEF"}));
    send_all(services[0], {got[0], "", "GHI"});
    EXPECT_EQ(recv_all(req), (frames{"GHI"}));
}

// RFC 28, REQ: "SHALL route outgoing messages to connected peers using a
// round-robin strategy."
TEST_P(Req, RoundRobinOverRepPeers) {
    make_req_to(3, ZMQ_REP);
    for (int round = 0; round < 2; ++round)
        for (size_t i = 0; i < services.size(); ++i) {
            const std::string body = "q" + std::to_string(round) + std::to_string(i);
            ASSERT_EQ(send(req, body), 3);
            EXPECT_EQ(recv(services[i]), body) << "peer " << i;
            send(services[i], "a" + body.substr(1));
            EXPECT_EQ(recv(req), "a" + body.substr(1));
        }
}

// RFC 28, REQ: "SHALL block on sending, or return a suitable error, when it
// has no connected peers."
TEST_P(Req, NoPeersBlocksOrEagain) {
    void *r = socket(ZMQ_REQ);
    EXPECT_EQ(send(r, "x", ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), EAGAIN);
    set_int(r, ZMQ_SNDTIMEO, 100);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(send(r, "x"), -1);
    EXPECT_EQ(zmq_errno(), EAGAIN);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(90));
    // Nothing was half-sent: the socket still expects a request.
    EXPECT_EQ(recv(r, ZMQ_DONTWAIT), "<error: " + std::string(zmq_strerror(EFSM)) + ">");
}

// RFC 28, REQ: "SHALL send and then receive exactly one message at a time."
// libzmq reports the wrong order with EFSM, and ZMQ_EVENTS follows the state.
TEST_P(Req, StrictAlternation) {
    make_req_to(1, ZMQ_REP);
    EXPECT_EQ(recv(req, ZMQ_DONTWAIT), "<error: " + std::string(zmq_strerror(EFSM)) + ">");
    EXPECT_EQ(events(req), ZMQ_POLLOUT);
    send(req, "one");
    EXPECT_EQ(send(req, "two", ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), EFSM);
    EXPECT_EQ(events(req) & ZMQ_POLLOUT, 0);
    EXPECT_EQ(recv(services[0]), "one");
    send(services[0], "reply");
    zmq_pollitem_t item{req, 0, ZMQ_POLLIN, 0};
    ASSERT_EQ(zmq_poll(&item, 1, recv_timeout_ms), 1);
    EXPECT_EQ(recv(req), "reply");
    EXPECT_EQ(events(req), ZMQ_POLLOUT);
}

// RFC 28, REQ: "SHALL accept an incoming message only from the last peer
// that it sent a request to." and "SHALL discard silently any messages
// received from other peers." The stray reply is given time to arrive first;
// if it were late the case would pass without proving anything, never fail.
TEST_P(Req, AcceptsOnlyTheLastPeer) {
    req = socket(ZMQ_REQ);
    set_str(req, ZMQ_ROUTING_ID, "A");
    for (int i = 0; i < 2; ++i) {
        services.push_back(socket(ZMQ_ROUTER));
        set_int(services[i], ZMQ_ROUTER_MANDATORY, 1);
        connect(req, bind(services[i]));
    }
    send(req, "ABC");  // round-robin: the first connected peer
    EXPECT_EQ(recv_all(services[0]), (frames{"A", "", "ABC"}));
    router_send(services[1], {"A", "", "WRONG"});
    sleep_ms(100);
    router_send(services[0], {"A", "", "GOOD"});
    EXPECT_EQ(recv_all(req), (frames{"GOOD"}));
}

// RFC 28, REQ: "SHALL NOT discard messages that it cannot send to a connected
// peer." A request made before the service exists waits in the queue of the
// connection and is delivered once the service binds.
TEST_P(Req, RequestWaitsForLateService) {
    const std::string ep = endpoint_for_later_bind();
    void *r = socket(ZMQ_REQ);
    connect(r, ep);
    ASSERT_EQ(send(r, "early", ZMQ_DONTWAIT), 5);
    void *rep = socket(ZMQ_REP);
    bind_at(rep, ep);
    EXPECT_EQ(recv(rep), "early");
    send(rep, "late");
    EXPECT_EQ(recv(r), "late");
}

// A reply whose envelope is malformed (no delimiter) is discarded silently,
// and the REQ keeps waiting for a good one (libzmq: test_invalid_rep).
TEST_P(Req, MalformedReplyDiscarded) {
    make_req_to(1, ZMQ_ROUTER);
    send(req, "q");
    frames got = recv_all(services[0]);
    ASSERT_EQ(got.size(), 3u);
    send_all(services[0], {got[0], "no-delimiter"});
    send_all(services[0], {got[0], "", "good"});
    EXPECT_EQ(recv_all(req), (frames{"good"}));
}

// ZMQ_REQ_CORRELATE (libzmq 4.3.5): a 4-byte request id goes before the
// delimiter, and only a reply carrying the current id is accepted.
TEST_P(Req, CorrelateAddsAndChecksRequestId) {
    make_req_to(1, ZMQ_ROUTER);
    set_int(req, ZMQ_REQ_CORRELATE, 1);
    send(req, "q");
    frames got = recv_all(services[0]);
    ASSERT_EQ(got.size(), 4u);
    ASSERT_EQ(got[1].size(), sizeof(uint32_t));
    EXPECT_EQ(got[2], "");
    std::string other_id = got[1];
    other_id[0] = static_cast<char>(other_id[0] ^ 0x5a);
    send_all(services[0], {got[0], other_id, "", "stale"});
    send_all(services[0], {got[0], got[1], "", "fresh"});
    EXPECT_EQ(recv_all(req), (frames{"fresh"}));
    // The next request carries the next id.
    send(req, "q2");
    frames next = recv_all(services[0]);
    ASSERT_EQ(next.size(), 4u);
    uint32_t a, b;
    std::memcpy(&a, got[1].data(), 4);
    std::memcpy(&b, next[1].data(), 4);
    EXPECT_EQ(b, a + 1);
}

// ZMQ_REQ_RELAXED: a new request may be sent while a reply is outstanding;
// the late answer to the first request is ignored, even when it is already
// queued at the REQ when the second request leaves (libzmq test_req_relaxed).
TEST_P(Req, RelaxedAllowsResendAndIgnoresOldReply) {
    make_req_to(2, ZMQ_REP);
    set_int(req, ZMQ_REQ_RELAXED, 1);
    send(req, "H");
    EXPECT_EQ(recv(services[0]), "H");
    send(services[0], "BAD");
    zmq_pollitem_t item{req, 0, ZMQ_POLLIN, 0};
    ASSERT_EQ(zmq_poll(&item, 1, recv_timeout_ms), 1);  // BAD is queued at the REQ
    EXPECT_EQ(events(req) & ZMQ_POLLOUT, ZMQ_POLLOUT);
    ASSERT_EQ(send(req, "I"), 1);
    EXPECT_EQ(recv(services[1]), "I");
    send(services[1], "GOOD");
    EXPECT_EQ(recv_all(req), (frames{"GOOD"}));
}

// ZMQ_REQ_RELAXED with a single service: the late answer to the first request
// arrives on the same connection as the second request will use; it is
// dropped when the second request starts, so only the new answer is seen.
TEST_P(Req, RelaxedDropsQueuedAnswerFromSamePeer) {
    make_req_to(1, ZMQ_REP);
    set_int(req, ZMQ_REQ_RELAXED, 1);
    send(req, "first");
    EXPECT_EQ(recv(services[0]), "first");
    send(services[0], "OLD");
    zmq_pollitem_t item{req, 0, ZMQ_POLLIN, 0};
    ASSERT_EQ(zmq_poll(&item, 1, recv_timeout_ms), 1);  // OLD is queued at the REQ
    send(req, "second");
    EXPECT_EQ(recv(services[0]), "second");
    send(services[0], "NEW");
    EXPECT_EQ(recv_all(req), (frames{"NEW"}));
}

// RELAXED + CORRELATE: two requests queue on one connection before the
// service exists; it answers both, and only the answer to the second counts.
TEST_P(Req, RelaxedCorrelatedDiscardsEarlierAnswer) {
    const std::string ep = endpoint_for_later_bind();
    void *r = socket(ZMQ_REQ);
    set_int(r, ZMQ_REQ_RELAXED, 1);
    set_int(r, ZMQ_REQ_CORRELATE, 1);
    connect(r, ep);
    send(r, "TO_BE_DISCARDED");
    send(r, "TO_BE_ANSWERED");
    void *router = socket(ZMQ_ROUTER);
    bind_at(router, ep);
    for (int i = 0; i < 2; ++i)
        send_all(router, recv_all(router));
    EXPECT_EQ(recv_all(r), (frames{"TO_BE_ANSWERED"}));
}

// Options take an int >= 0 as libzmq does; anything else is EINVAL.
TEST_P(Req, OptionValuesChecked) {
    void *r = socket(ZMQ_REQ);
    int v = -1;
    EXPECT_EQ(zmq_setsockopt(r, ZMQ_REQ_RELAXED, &v, sizeof v), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
    EXPECT_EQ(zmq_setsockopt(r, ZMQ_REQ_CORRELATE, &v, 1), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
    v = 2;
    EXPECT_EQ(zmq_setsockopt(r, ZMQ_REQ_CORRELATE, &v, sizeof v), 0);
    void *d = socket(ZMQ_DEALER);
    EXPECT_EQ(zmq_setsockopt(d, ZMQ_REQ_RELAXED, &v, sizeof v), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
}

SPEC_ALL_TRANSPORTS(Req);

}  // namespace
