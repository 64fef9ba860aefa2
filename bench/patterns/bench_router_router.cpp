// ROUTER_ROUTER: ROUTER "client" (a, connects) sends [server][body] to ROUTER
// "server" (b, binds); blocking receives.
#include "../common/runner.hpp"
#include "router_pair.hpp"

using namespace bench;

static Channel make_channel(void* ctx, const Options& o) {
    return make_router_router(ctx, o, false, "ROUTER client(connect) -> ROUTER server(bind), blocking recv");
}

int main(int argc, char** argv) {
    return run_benchmark(argc, argv, PatternSpec{{"ROUTER_ROUTER"}, ZMQ_ROUTER, make_channel});
}
