// PAIR: one PAIR socket bound (b, receiver/echo), one connected (a, sender/client).
#include "../common/runner.hpp"
#include "one_socket.hpp"

using namespace bench;

int main(int argc, char **argv) {
    return run_benchmark(
        argc, argv,
        PatternSpec{{"PAIR"},
                    ZMQ_PAIR,
                    "PAIR(connect) -> PAIR(bind)",
                    [](void *ctx, const Options &o, const std::string &bind) {
                        return bound_side(ctx, o, bind, ZMQ_PAIR);
                    },
                    [](void *ctx, const Options &o, const std::vector<std::string> &eps) {
                        return connected_side(ctx, o, eps, ZMQ_PAIR);
                    }});
}
