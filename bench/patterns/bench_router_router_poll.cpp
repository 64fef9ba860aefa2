// ROUTER_ROUTER_POLL: as ROUTER_ROUTER, but every receive waits in zmq_poll and
// then drains with ZMQ_DONTWAIT: the event-loop style of many applications, which
// exercises the library's ZMQ_FD/poll signalling path.
#include "../common/runner.hpp"
#include "router_pair.hpp"

using namespace bench;

int main(int argc, char **argv) {
    return run_benchmark(
        argc, argv,
        PatternSpec{{"ROUTER_ROUTER_POLL"},
                    ZMQ_ROUTER,
                    "ROUTER client(connect) -> ROUTER server(bind), zmq_poll + DONTWAIT drain",
                    [](void *ctx, const Options &o, const std::string &bind) {
                        return router_server(ctx, o, bind, true);
                    },
                    [](void *ctx, const Options &o, const std::vector<std::string> &eps) {
                        return router_client(ctx, o, eps, true);
                    }});
}
