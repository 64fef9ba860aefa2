// DEALER_ROUTER: a DEALER (a) sends to a bound ROUTER (b), which receives
// [routing id][body] and answers latency probes through the same routing id.
#include "../common/runner.hpp"
#include "one_socket.hpp"

using namespace bench;

static Side make_receiver(void *ctx, const Options &o, const std::string &bind) {
    ZmqEndSpec b;
    b.recv_routing_id = b.send_routing_id = true;
    // Unroutable replies must fail loudly, not vanish.
    return bound_side(ctx, o, bind, ZMQ_ROUTER, b, [](void *s) {
        set_int_option(s, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY");
    });
}

static Side make_sender(void *ctx, const Options &o, const std::vector<std::string> &endpoints) {
    return connected_side(ctx, o, endpoints, ZMQ_DEALER);
}

int main(int argc, char **argv) {
    return run_benchmark(argc, argv,
                         PatternSpec{{"DEALER_ROUTER"},
                                     ZMQ_ROUTER,
                                     "DEALER(connect) -> ROUTER(bind)",
                                     make_receiver,
                                     make_sender});
}
