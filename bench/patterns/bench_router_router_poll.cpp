// ROUTER_ROUTER_POLL: as ROUTER_ROUTER, but every receive waits in zmq_poll and
// then drains with ZMQ_DONTWAIT: the event-loop style of many applications, which
// exercises the library's ZMQ_FD/poll signalling path.
#include "../common/runner.hpp"
#include "router_pair.hpp"

using namespace bench;

static Channel make_channel(void* ctx, const Options& o) {
    return make_router_router(ctx, o, true, "ROUTER client(connect) -> ROUTER server(bind), zmq_poll + DONTWAIT drain");
}

int main(int argc, char** argv) {
    return run_benchmark(argc, argv, PatternSpec{{"ROUTER_ROUTER_POLL"}, ZMQ_ROUTER, make_channel});
}
