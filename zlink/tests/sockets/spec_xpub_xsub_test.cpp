// XPUB and XSUB against RFC 29/PUBSUB, each case over tcp, ipc and inproc.
#include "spec_util.hpp"

namespace {

using namespace spec;

const std::string sub_msg(const std::string &t) { return "\x01" + t; }
const std::string cancel_msg(const std::string &t) { return std::string(1, '\0') + t; }

class XPubXSub : public transport_test {};

// RFC 29, XPUB: "SHALL receive subscribe and unsubscribe requests from
// subscribers depending on the transport protocol used." and "SHALL deliver
// these commands to its calling application."
TEST_P(XPubXSub, XpubReceivesSubscriptions) {
    void *xpub = socket(ZMQ_XPUB);
    void *sub = socket(ZMQ_SUB);
    connect(sub, bind(xpub));
    set_str(sub, ZMQ_SUBSCRIBE, "news");
    EXPECT_EQ(recv(xpub), sub_msg("news"));
    set_str(sub, ZMQ_UNSUBSCRIBE, "news");
    EXPECT_EQ(recv(xpub), cancel_msg("news"));
}

// RFC 29, XPUB: "MAY, depending on configuration, normalize commands delivered
// to its calling application so that multiple identical subscriptions result
// in a single command only." (libzmq: normalised by default; every one with
// ZMQ_XPUB_VERBOSE.)
TEST_P(XPubXSub, DuplicateSubscriptionsNormalisedUnlessVerbose) {
    for (int verbose : {0, 1}) {
        void *xpub = socket(ZMQ_XPUB);
        set_int(xpub, ZMQ_XPUB_VERBOSE, verbose);
        const std::string ep = bind(xpub);
        void *s1 = socket(ZMQ_SUB);
        void *s2 = socket(ZMQ_SUB);
        connect(s1, ep);
        connect(s2, ep);
        set_str(s1, ZMQ_SUBSCRIBE, "t");
        EXPECT_EQ(recv(xpub), sub_msg("t"));
        set_str(s2, ZMQ_SUBSCRIBE, "t");
        if (verbose)
            EXPECT_EQ(recv(xpub), sub_msg("t"));
        else
            EXPECT_TRUE(nothing_arrives(xpub)) << "duplicate subscription delivered";
        close(s1);
        close(s2);
        close(xpub);
    }
}

// RFC 29, XPUB: "SHALL, if the subscriber peer disconnects prematurely,
// generate a suitable unsubscribe request for the calling application."
TEST_P(XPubXSub, DisconnectGeneratesUnsubscribe) {
    void *xpub = socket(ZMQ_XPUB);
    void *sub = socket(ZMQ_SUB);
    connect(sub, bind(xpub));
    set_str(sub, ZMQ_SUBSCRIBE, "gone");
    ASSERT_EQ(recv(xpub), sub_msg("gone"));
    close(sub);
    EXPECT_EQ(recv(xpub), cancel_msg("gone"));
}

// RFC 29, XSUB: "SHALL accept subscription commands from its calling
// application." and "SHALL send all messages to all connected publishers."
// XPUB, "For processing incoming messages": "SHALL deliver these messages to
// its calling application."
TEST_P(XPubXSub, XsubSubscriptionsAndUpstreamMessages) {
    void *xpub = socket(ZMQ_XPUB);
    void *xsub = socket(ZMQ_XSUB);
    connect(xsub, bind(xpub));
    send(xsub, sub_msg("A"));
    EXPECT_EQ(recv(xpub), sub_msg("A"));
    send(xpub, "A-data");
    send(xpub, "B-data");
    EXPECT_EQ(recv(xsub), "A-data");
    EXPECT_TRUE(nothing_arrives(xsub));
    send(xsub, "upstream");
    EXPECT_EQ(recv(xpub), "upstream");
}

// RFC 29, XSUB: "SHALL not modify incoming messages in any way." XSUB does
// not filter (libzmq 4.3.5: filtering happens at the publisher).
TEST_P(XPubXSub, XsubToPubPrefixFiltered) {
    void *pub = socket(ZMQ_PUB);
    void *xsub = socket(ZMQ_XSUB);
    connect(xsub, bind(pub));
    send(xsub, sub_msg("k"));
    ASSERT_TRUE(wait_subscribed(pub, xsub, "k-probe"));
    sleep_ms(100);
    drain(xsub);
    send_all(pub, {"k1", "tail"});
    send(pub, "other");
    EXPECT_EQ(recv_all(xsub), (std::vector<std::string>{"k1", "tail"}));
    EXPECT_TRUE(nothing_arrives(xsub));
}

// RFC 29, PUB: "SHALL NOT deliver these commands to its calling application."
TEST_P(XPubXSub, PubHidesSubscriptions) {
    void *pub = socket(ZMQ_PUB);
    void *sub = socket(ZMQ_SUB);
    connect(sub, bind(pub));
    set_str(sub, ZMQ_SUBSCRIBE, "");
    ASSERT_TRUE(wait_subscribed(pub, sub, "probe"));
    char buf[4];
    EXPECT_EQ(zmq_recv(pub, buf, sizeof buf, ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), ENOTSUP);
}

// zmq_setsockopt(3), ZMQ_XPUB_NODROP: "If set to 1, and the pipe is full,
// zmq_send() will return an error with errno EAGAIN (non-blocking) [...]
// instead of silently dropping the message."
TEST_P(XPubXSub, NodropRefusesInsteadOfDropping) {
    void *xpub = socket(ZMQ_XPUB);
    set_int(xpub, ZMQ_XPUB_NODROP, 1);
    set_int(xpub, ZMQ_SNDHWM, 5);
    void *sub = socket(ZMQ_SUB);
    set_int(sub, ZMQ_RCVHWM, 5);
    connect(sub, bind(xpub));
    set_str(sub, ZMQ_SUBSCRIBE, "");
    ASSERT_EQ(recv(xpub), sub_msg(""));
    int accepted = 0;
    const std::string pad(1000, 'n');
    for (; accepted < 100000; ++accepted) {
        if (send(xpub, std::to_string(accepted) + "|" + pad, ZMQ_DONTWAIT) < 0) {
            ASSERT_EQ(zmq_errno(), EAGAIN);
            break;
        }
    }
    ASSERT_LT(accepted, 100000) << "never refused";
    for (int i = 0; i < accepted; ++i) {
        const std::string m = recv(sub);
        ASSERT_EQ(m.substr(0, m.find('|')), std::to_string(i)) << "lost";
    }
}

SPEC_ALL_TRANSPORTS(XPubXSub);

}  // namespace
