// ZMQ_CONFLATE (zmq_setsockopt(3) of libzmq 4.3.5), each case over tcp, ipc
// and inproc: "If set, a socket shall keep only one message in its
// inbound/outbound queue, this message being the last message received/the
// last message to be sent. Ignores 'ZMQ_RCVHWM' and 'ZMQ_SNDHWM' options.
// Does not support multi-part messages".
#include "spec_util.hpp"

namespace {

using namespace spec;

using frames = std::vector<std::string>;

class Conflate : public transport_test {
protected:
    // A socket of `type` with ZMQ_CONFLATE that connects before its peer
    // exists, so everything it sends waits in its one-slot outbound queue.
    void *early_sender(int type, const std::string &ep) {
        void *s = socket(type);
        set_int(s, ZMQ_CONFLATE, 1);
        set_int(s, ZMQ_SNDHWM, 1);  // ignored under CONFLATE
        connect(s, ep);
        return s;
    }
};

// "...keep only one message in its outbound queue, this message being the
// last message to be sent. Ignores ... ZMQ_SNDHWM": ten sends never block,
// and the peer that appears later gets the tenth only.
TEST_P(Conflate, OutboundKeepsTheLastMessageToBeSent) {
    for (int type : {ZMQ_PUSH, ZMQ_DEALER}) {
        const std::string ep = endpoint_for_later_bind();
        void *s = early_sender(type, ep);
        for (int i = 0; i < 10; ++i)
            ASSERT_EQ(send(s, "m" + std::to_string(i), ZMQ_DONTWAIT), 2) << i;
        void *peer = socket(type == ZMQ_PUSH ? ZMQ_PULL : ZMQ_DEALER);
        bind_at(peer, ep);
        EXPECT_EQ(recv(peer), "m9") << "type " << type;
        EXPECT_TRUE(nothing_arrives(peer));
        close(s);
        close(peer);
    }
}

// "...keep only one message in its inbound queue, this message being the
// last message received" (libzmq's test_conflate: 20 sent, the 20th read).
TEST_P(Conflate, InboundKeepsTheLastMessageReceived) {
    void *pull = socket(ZMQ_PULL);
    set_int(pull, ZMQ_CONFLATE, 1);
    const std::string ep = bind(pull);
    void *push = socket(ZMQ_PUSH);
    connect(push, ep);
    for (int i = 0; i < 20; ++i)
        send(push, std::to_string(i));
    // Let the burst land before reading: a reader that keeps pace with a slow
    // sender (a loaded host, TSan) sees every message however it conflates.
    zmq_pollitem_t item{pull, 0, ZMQ_POLLIN, 0};
    ASSERT_EQ(zmq_poll(&item, 1, 5000), 1) << "nothing arrived";
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    // Read until the last one shows up: a conflating PULL skips almost all.
    int reads = 0;
    std::string got;
    while (got != "19" && reads < 20) {
        got = recv(pull);
        ++reads;
        ASSERT_NE(got.rfind("<error", 0), 0u) << got;
    }
    EXPECT_EQ(got, "19");
    EXPECT_LE(reads, 5) << "messages were queued, not conflated";
    EXPECT_TRUE(nothing_arrives(pull));
}

// "Does not support multi-part messages": only the last frame is kept, as a
// message of its own (a reader never waits for an overwritten tail).
TEST_P(Conflate, MultipartKeepsOneFrame) {
    const std::string ep = endpoint_for_later_bind();
    void *push = early_sender(ZMQ_PUSH, ep);
    send_all(push, {"a1", "a2"});
    send_all(push, {"b1", "b2"});
    void *pull = socket(ZMQ_PULL);
    bind_at(pull, ep);
    EXPECT_EQ(recv_all(pull), (frames{"b2"}));
}

// A conflating SUB keeps the newest message, but every subscription it makes
// still reaches the publisher (libzmq conflates that direction too and can
// lose all but the last subscription made in a burst).
TEST_P(Conflate, SubKeepsEverySubscription) {
    void *pub = socket(ZMQ_XPUB);
    set_int(pub, ZMQ_XPUB_VERBOSE, 1);
    const std::string ep = bind(pub);
    void *sub = socket(ZMQ_SUB);
    set_int(sub, ZMQ_CONFLATE, 1);
    for (const char *t : {"a", "b", "c", "d"})
        set_str(sub, ZMQ_SUBSCRIBE, t);
    connect(sub, ep);
    for (const char *t : {"a", "b", "c", "d"})
        ASSERT_EQ(recv(pub), std::string("\x01") + t);
    for (int i = 0; i < 10; ++i)
        send(pub, "c" + std::to_string(i));
    std::string got;
    for (int reads = 0; got != "c9" && reads < 10; ++reads)
        got = recv(sub);
    EXPECT_EQ(got, "c9");
}

// The option is taken by every socket type (as libzmq) but acts on DEALER,
// PUSH, PULL, PUB and SUB only: a PAIR still queues everything.
TEST_P(Conflate, OtherTypesAcceptButIgnoreIt) {
    void *a = socket(ZMQ_PAIR);
    void *b = socket(ZMQ_PAIR);
    set_int(a, ZMQ_CONFLATE, 1);
    set_int(b, ZMQ_CONFLATE, 1);
    connect(a, bind(b));
    for (int i = 0; i < 5; ++i)
        send(a, std::to_string(i));
    for (int i = 0; i < 5; ++i)
        EXPECT_EQ(recv(b), std::to_string(i));
    int v = 0;
    size_t len = sizeof v;
    EXPECT_EQ(zmq_getsockopt(a, ZMQ_CONFLATE, &v, &len), 0);
    EXPECT_EQ(v, 1);
    v = 2;  // strict boolean, as libzmq
    EXPECT_EQ(zmq_setsockopt(a, ZMQ_CONFLATE, &v, sizeof v), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
}

SPEC_ALL_TRANSPORTS(Conflate);

}  // namespace
