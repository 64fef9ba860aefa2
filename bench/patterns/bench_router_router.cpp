// ROUTER_ROUTER: ROUTER "client" (a, connects) sends [server][body] to ROUTER
// "server" (b, binds); blocking receives.
#include "../common/runner.hpp"
#include "router_pair.hpp"

using namespace bench;

int main(int argc, char **argv) {
    return run_benchmark(
        argc, argv,
        PatternSpec{{"ROUTER_ROUTER"},
                    ZMQ_ROUTER,
                    "ROUTER client(connect) -> ROUTER server(bind), blocking recv",
                    [](void *ctx, const Options &o, const std::string &bind) {
                        return router_server(ctx, o, bind, false);
                    },
                    [](void *ctx, const Options &o, const std::vector<std::string> &eps) {
                        return router_client(ctx, o, eps, false);
                    }});
}
