// DEALER_DEALER: a DEALER connects to a bound DEALER; single-frame messages, no
// envelope in either direction.
#include "../common/runner.hpp"
#include "../common/zmq_end.hpp"

using namespace bench;

static Channel make_channel(void* ctx, const Options& o) {
    void* sb = make_socket(ctx, ZMQ_DEALER, o);
    const std::string endpoint = bind_fresh(sb, o.transport);
    void* sa = make_socket(ctx, ZMQ_DEALER, o);
    connect_to(sa, endpoint);
    ZmqEndSpec a, b;
    a.send_socket = a.recv_socket = sa;
    b.send_socket = b.recv_socket = sb;
    return make_zmq_channel(a, b, {sa, sb}, "DEALER(connect) -> DEALER(bind)", o);
}

int main(int argc, char** argv) {
    return run_benchmark(argc, argv, PatternSpec{{"DEALER_DEALER"}, ZMQ_DEALER, make_channel});
}
