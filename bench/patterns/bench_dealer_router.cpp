// DEALER_ROUTER: a DEALER (a) sends to a bound ROUTER (b), which receives
// [routing id][body] and answers latency probes through the same routing id.
#include "../common/runner.hpp"
#include "../common/zmq_end.hpp"

using namespace bench;

static Channel make_channel(void* ctx, const Options& o) {
    void* sb = make_socket(ctx, ZMQ_ROUTER, o);
    // Unroutable replies must fail loudly, not vanish.
    set_int_option(sb, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY");
    const std::string endpoint = bind_fresh(sb, o.transport);
    void* sa = make_socket(ctx, ZMQ_DEALER, o);
    connect_to(sa, endpoint);
    ZmqEndSpec a, b;
    a.send_socket = a.recv_socket = sa;
    b.send_socket = b.recv_socket = sb;
    b.recv_routing_id = b.send_routing_id = true;
    return make_zmq_channel(a, b, {sa, sb}, "DEALER(connect) -> ROUTER(bind)", o);
}

int main(int argc, char** argv) {
    return run_benchmark(argc, argv, PatternSpec{{"DEALER_ROUTER"}, ZMQ_ROUTER, make_channel});
}
