// XPUB options of libzmq 4.3.5 (zmq_setsockopt(3)), each case over tcp, ipc
// and inproc: ZMQ_XPUB_MANUAL, ZMQ_XPUB_VERBOSER, ZMQ_XPUB_WELCOME_MSG, and
// ZMQ_INVERT_MATCHING on PUB/XPUB/SUB.
#include "spec_util.hpp"

namespace {

using namespace spec;

const std::string sub_msg(const std::string &t) { return "\x01" + t; }
const std::string cancel_msg(const std::string &t) { return std::string(1, '\0') + t; }

class XPubOptions : public transport_test {};

// ZMQ_XPUB_MANUAL: "with manual mode subscription requests are not added to
// the subscription list. To add subscription the user need to call
// setsockopt with ZMQ_SUBSCRIBE on XPUB socket." The subscription applies to
// the subscriber whose request was read last.
TEST_P(XPubOptions, ManualSubscriptionChosenByApplication) {
    void *xpub = socket(ZMQ_XPUB);
    set_int(xpub, ZMQ_XPUB_MANUAL, 1);
    void *xsub = socket(ZMQ_XSUB);
    connect(xsub, bind(xpub));
    send(xsub, sub_msg("A"));
    EXPECT_EQ(recv(xpub), sub_msg("A"));
    set_str(xpub, ZMQ_SUBSCRIBE, "B");  // B instead of A
    send(xpub, "A-not-asked-for");
    send(xpub, "B-given");
    EXPECT_EQ(recv(xsub), "B-given");
    EXPECT_TRUE(nothing_arrives(xsub));
}

// Manual mode passes every request on, duplicates included; a subscriber that
// goes away has what it asked for cancelled, and ZMQ_UNSUBSCRIBE after
// reading that cancel (no subscriber any more) is accepted and does nothing.
TEST_P(XPubOptions, ManualModeReportsEveryRequestAndCancelsOnClose) {
    void *xpub = socket(ZMQ_XPUB);
    set_int(xpub, ZMQ_XPUB_MANUAL, 1);
    const std::string ep = bind(xpub);
    void *s1 = socket(ZMQ_XSUB);
    connect(s1, ep);
    send(s1, sub_msg("A"));
    send(s1, sub_msg("B"));
    EXPECT_EQ(recv(xpub), sub_msg("A"));
    set_str(xpub, ZMQ_SUBSCRIBE, "XA");
    EXPECT_EQ(recv(xpub), sub_msg("B"));
    set_str(xpub, ZMQ_SUBSCRIBE, "XB");
    send(s1, cancel_msg("A"));
    EXPECT_EQ(recv(xpub), cancel_msg("A"));
    set_str(xpub, ZMQ_UNSUBSCRIBE, "XA");
    send(xpub, "XA");
    send(xpub, "XB");
    EXPECT_EQ(recv(s1), "XB");
    EXPECT_TRUE(nothing_arrives(s1));
    close(s1);
    EXPECT_EQ(recv(xpub), cancel_msg("B"));  // A was cancelled already
    set_str(xpub, ZMQ_UNSUBSCRIBE, "XB");
    // Outside manual mode ZMQ_SUBSCRIBE is not an XPUB option.
    void *plain = socket(ZMQ_XPUB);
    EXPECT_EQ(zmq_setsockopt(plain, ZMQ_SUBSCRIBE, "x", 1), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
}

// ZMQ_XPUB_VERBOSER: "If enabled, the socket passes all subscribe and
// unsubscribe messages to the caller. If disabled, only the first
// subscription to each filter and the last unsubscription from each filter
// will be passed." (ZMQ_XPUB_VERBOSE passes every subscribe only.)
TEST_P(XPubOptions, VerboserPassesEveryUnsubscribe) {
    for (int opt : {ZMQ_XPUB_VERBOSE, ZMQ_XPUB_VERBOSER}) {
        void *xpub = socket(ZMQ_XPUB);
        set_int(xpub, opt, 1);
        const std::string ep = bind(xpub);
        void *s1 = socket(ZMQ_SUB);
        void *s2 = socket(ZMQ_SUB);
        connect(s1, ep);
        connect(s2, ep);
        set_str(s1, ZMQ_SUBSCRIBE, "t");
        EXPECT_EQ(recv(xpub), sub_msg("t"));
        set_str(s2, ZMQ_SUBSCRIBE, "t");
        EXPECT_EQ(recv(xpub), sub_msg("t"));
        set_str(s1, ZMQ_UNSUBSCRIBE, "t");
        if (opt == ZMQ_XPUB_VERBOSER)
            EXPECT_EQ(recv(xpub), cancel_msg("t"));
        else
            EXPECT_TRUE(nothing_arrives(xpub)) << "s2 still wants 't'";
        set_str(s2, ZMQ_UNSUBSCRIBE, "t");
        EXPECT_EQ(recv(xpub), cancel_msg("t"));
        close(s1);
        close(s2);
        close(xpub);
    }
}

// ZMQ_XPUB_WELCOME_MSG: "Sets a welcome message the will be received by
// subscriber when connecting. Subscriber must subscribe to the Welcome
// message before connecting." and "Use NULL and length of zero to disable".
TEST_P(XPubOptions, WelcomeMessageToEachNewSubscriber) {
    void *xpub = socket(ZMQ_XPUB);
    set_int(xpub, ZMQ_XPUB_VERBOSE, 1);  // every subscriber's request shows
    set_str(xpub, ZMQ_XPUB_WELCOME_MSG, "W");
    const std::string ep = bind(xpub);
    void *sub = socket(ZMQ_SUB);
    set_str(sub, ZMQ_SUBSCRIBE, "W");
    connect(sub, ep);
    EXPECT_EQ(recv(xpub), sub_msg("W"));
    EXPECT_EQ(recv(sub), "W");
    // Disabled: a subscriber attached afterwards gets the next real message
    // first (a welcome is written at attach, ahead of everything else).
    EXPECT_EQ(zmq_setsockopt(xpub, ZMQ_XPUB_WELCOME_MSG, nullptr, 0), 0);
    void *late = socket(ZMQ_SUB);
    set_str(late, ZMQ_SUBSCRIBE, "W");
    connect(late, ep);
    EXPECT_EQ(recv(xpub), sub_msg("W"));
    send(xpub, "W-after");
    EXPECT_EQ(recv(late), "W-after");
}

// ZMQ_INVERT_MATCHING: "On 'PUB' and 'XPUB' sockets, this causes messages to
// be sent to all connected sockets 'except' those subscribed to a prefix that
// matches the message. On 'SUB' sockets, this causes only incoming messages
// that do 'not' match any of the socket's subscriptions to be received".
TEST_P(XPubOptions, InvertMatchingOnPubAndSub) {
    void *pub = socket(ZMQ_PUB);
    const std::string ep = bind(pub);
    void *s1 = socket(ZMQ_SUB);
    void *s2 = socket(ZMQ_SUB);
    connect(s1, ep);
    connect(s2, ep);
    set_str(s1, ZMQ_SUBSCRIBE, "p1");
    set_str(s2, ZMQ_SUBSCRIBE, "p2");
    // Both subscriptions are in at the publisher once each probe arrives;
    // the option is read at each send / recv, so it can be turned on now.
    ASSERT_TRUE(wait_subscribed(pub, s1, "p1-probe"));
    ASSERT_TRUE(wait_subscribed(pub, s2, "p2-probe"));
    sleep_ms(100);
    drain(s1);
    drain(s2);
    for (void *s : {pub, s1, s2})
        set_int(s, ZMQ_INVERT_MATCHING, 1);
    send(pub, "p1-msg");
    send(pub, "p2-msg");
    EXPECT_EQ(recv(s1), "p2-msg");
    EXPECT_EQ(recv(s2), "p1-msg");
    EXPECT_TRUE(nothing_arrives(s1));
    EXPECT_TRUE(nothing_arrives(s2));
    int v = 0;
    size_t len = sizeof v;
    EXPECT_EQ(zmq_getsockopt(pub, ZMQ_INVERT_MATCHING, &v, &len), 0);
    EXPECT_EQ(v, 1);
}

// XPUB with ZMQ_INVERT_MATCHING skips exactly the subscribers that match.
TEST_P(XPubOptions, InvertMatchingOnXpub) {
    void *xpub = socket(ZMQ_XPUB);
    set_int(xpub, ZMQ_INVERT_MATCHING, 1);
    const std::string ep = bind(xpub);
    void *a = socket(ZMQ_XSUB);  // XSUB does not filter: it shows what was sent
    void *b = socket(ZMQ_XSUB);
    connect(a, ep);
    connect(b, ep);
    send(a, sub_msg("a"));
    EXPECT_EQ(recv(xpub), sub_msg("a"));
    send(b, sub_msg("b"));
    EXPECT_EQ(recv(xpub), sub_msg("b"));
    send(xpub, "a-topic");
    send(xpub, "c-topic");
    EXPECT_EQ(recv(a), "c-topic");
    EXPECT_EQ(recv(b), "a-topic");
    EXPECT_EQ(recv(b), "c-topic");
}

// libzmq's PUB is an XPUB that hides subscriptions: it takes the XPUB options
// too (XPUB_NODROP is the documented way to make a PUB block).
TEST_P(XPubOptions, PubAcceptsXpubOptions) {
    void *pub = socket(ZMQ_PUB);
    for (int opt : {ZMQ_XPUB_NODROP, ZMQ_XPUB_VERBOSE, ZMQ_XPUB_VERBOSER, ZMQ_XPUB_MANUAL})
        set_int(pub, opt, 0);
    set_str(pub, ZMQ_XPUB_WELCOME_MSG, "hi");
    int bad = -1;
    EXPECT_EQ(zmq_setsockopt(pub, ZMQ_XPUB_NODROP, &bad, sizeof bad), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
}

SPEC_ALL_TRANSPORTS(XPubOptions);

}  // namespace
