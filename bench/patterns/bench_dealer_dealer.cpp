// DEALER_DEALER: a DEALER connects to a bound DEALER; single-frame messages, no
// envelope in either direction.
#include "../common/runner.hpp"
#include "one_socket.hpp"

using namespace bench;

int main(int argc, char **argv) {
    return run_benchmark(
        argc, argv,
        PatternSpec{{"DEALER_DEALER"},
                    ZMQ_DEALER,
                    "DEALER(connect) -> DEALER(bind)",
                    [](void *ctx, const Options &o, const std::string &bind) {
                        return bound_side(ctx, o, bind, ZMQ_DEALER);
                    },
                    [](void *ctx, const Options &o, const std::vector<std::string> &eps) {
                        return connected_side(ctx, o, eps, ZMQ_DEALER);
                    }});
}
