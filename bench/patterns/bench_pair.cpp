// PAIR: one PAIR socket bound (b, receiver/echo), one connected (a, sender/client).
#include "../common/runner.hpp"
#include "../common/zmq_end.hpp"

using namespace bench;

static Channel make_channel(void* ctx, const Options& o) {
    void* sb = make_socket(ctx, ZMQ_PAIR, o);
    const std::string endpoint = bind_fresh(sb, o.transport);
    void* sa = make_socket(ctx, ZMQ_PAIR, o);
    connect_to(sa, endpoint);
    ZmqEndSpec a, b;
    a.send_socket = a.recv_socket = sa;
    b.send_socket = b.recv_socket = sb;
    return make_zmq_channel(a, b, {sa, sb}, "PAIR(connect) -> PAIR(bind)", o);
}

int main(int argc, char** argv) {
    return run_benchmark(argc, argv, PatternSpec{{"PAIR"}, ZMQ_PAIR, make_channel});
}
