// ZMQ_PROBE_ROUTER (zmq_setsockopt(3) of libzmq 4.3.5) on DEALER, REQ and
// ROUTER, each case over tcp, ipc and inproc.
#include "spec_util.hpp"

namespace {

using namespace spec;

using frames = std::vector<std::string>;

class ProbeRouter : public transport_test {
protected:
    void SetUp() override {
        transport_test::SetUp();
        router = socket(ZMQ_ROUTER);
        endpoint = bind(router);
    }
    void *router = nullptr;
    std::string endpoint;
};

// "When set to 1, the socket will automatically send an empty message when a
// new connection is made or accepted. You may set this on REQ, DEALER, or
// ROUTER sockets connected to a ROUTER socket." The ROUTER learns of the peer
// (and its routing id) before the peer sends anything itself.
TEST_P(ProbeRouter, ConnectingPeerAnnouncesItself) {
    for (int type : {ZMQ_DEALER, ZMQ_REQ, ZMQ_ROUTER}) {
        void *peer = socket(type);
        const std::string id = "probe-" + std::to_string(type);
        set_str(peer, ZMQ_ROUTING_ID, id);
        set_int(peer, ZMQ_PROBE_ROUTER, 1);
        connect(peer, endpoint);
        // No zmq_* call on the peer after connect: the probe goes out anyway
        // (libzmq's test_probe_router relies on it).
        EXPECT_EQ(recv_all(router), (frames{id, ""})) << "type " << type;
        EXPECT_TRUE(nothing_arrives(router)) << "more than one probe, type " << type;
        // And the route works at once.
        if (type != ZMQ_REQ) {
            send_all(router, {id, "hello"});
            frames got = recv_all(peer);
            EXPECT_EQ(got.back(), "hello");
        }
        close(peer);
    }
}

// The bound side probes too: a ROUTER with PROBE_ROUTER greets every peer
// that connects to it ("made or accepted").
TEST_P(ProbeRouter, AcceptingRouterProbesEachPeer) {
    void *prober = socket(ZMQ_ROUTER);
    set_str(prober, ZMQ_ROUTING_ID, "prober");
    set_int(prober, ZMQ_PROBE_ROUTER, 1);
    const std::string ep = bind(prober);
    void *peer = socket(ZMQ_ROUTER);
    connect(peer, ep);
    // Over tcp/ipc the connection's session sends the probe; over inproc the
    // bound socket attaches the new pipe (and probes) inside its own next
    // zmq_* call, as in libzmq.
    if (transport() == "inproc")
        ASSERT_TRUE(wait_pumping(peer, prober));
    EXPECT_EQ(recv_all(peer), (frames{"prober", ""}));
    EXPECT_TRUE(wait_pumping(peer, prober) == false) << "more than one probe";
}

// Without the option nothing is sent; the option takes an int >= 0.
TEST_P(ProbeRouter, OffByDefaultAndValueChecked) {
    void *d = socket(ZMQ_DEALER);
    connect(d, endpoint);
    EXPECT_TRUE(nothing_arrives(router));
    int v = -1;
    EXPECT_EQ(zmq_setsockopt(d, ZMQ_PROBE_ROUTER, &v, sizeof v), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
    void *pub = socket(ZMQ_PUB);
    v = 1;
    EXPECT_EQ(zmq_setsockopt(pub, ZMQ_PROBE_ROUTER, &v, sizeof v), -1);
    EXPECT_EQ(zmq_errno(), EINVAL);
}

SPEC_ALL_TRANSPORTS(ProbeRouter);

}  // namespace
