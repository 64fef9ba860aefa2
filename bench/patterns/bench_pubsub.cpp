// PUBSUB: throughput flows PUB (a) -> SUB (b) with an empty subscription. Latency
// needs a real way back, so a second PUB/SUB pair carries each message from b back
// to a: a round trip through two PUB/SUB hops, never "inverse throughput".
#include "../common/runner.hpp"
#include "../common/zmq_end.hpp"

using namespace bench;

static Channel make_channel(void* ctx, const Options& o) {
    void* pub_a = make_socket(ctx, ZMQ_PUB, o);
    const std::string ep_a = bind_fresh(pub_a, o.transport);
    void* pub_b = make_socket(ctx, ZMQ_PUB, o);
    const std::string ep_b = bind_fresh(pub_b, o.transport);
    void* sub_b = make_socket(ctx, ZMQ_SUB, o);
    set_bytes_option(sub_b, ZMQ_SUBSCRIBE, "", "ZMQ_SUBSCRIBE");
    connect_to(sub_b, ep_a);
    void* sub_a = make_socket(ctx, ZMQ_SUB, o);
    set_bytes_option(sub_a, ZMQ_SUBSCRIBE, "", "ZMQ_SUBSCRIBE");
    connect_to(sub_a, ep_b);
    ZmqEndSpec a, b;
    a.send_socket = pub_a;
    a.recv_socket = sub_a;
    b.send_socket = pub_b;
    b.recv_socket = sub_b;
    return make_zmq_channel(a, b, {pub_a, sub_a, pub_b, sub_b},
                            "PUB(bind) -> SUB(connect); latency returns via a second PUB(bind) -> SUB(connect)", o);
}

int main(int argc, char** argv) {
    return run_benchmark(argc, argv, PatternSpec{{"PUBSUB", false, 0, true}, ZMQ_SUB, make_channel});
}
