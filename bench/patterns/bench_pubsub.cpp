// PUBSUB: throughput flows PUB (a, connects) -> SUB (b, binds, subscribed to
// everything); latency returns through a second PUB (b, binds) -> SUB (a, connects).
#include "../common/runner.hpp"
#include "two_pairs.hpp"

using namespace bench;

constexpr OneWayTypes kTypes{ZMQ_PUB, ZMQ_SUB};

int main(int argc, char **argv) {
    return run_benchmark(
        argc, argv,
        PatternSpec{
            {"PUBSUB", false, 0, true},
            ZMQ_SUB,
            "PUB(connect) -> SUB(bind); latency returns via a second PUB(bind) -> SUB(connect)",
            [](void *ctx, const Options &o, const std::string &bind) {
                return two_pair_receiver(ctx, o, bind, kTypes);
            },
            [](void *ctx, const Options &o, const std::vector<std::string> &eps) {
                return two_pair_sender(ctx, o, eps, kTypes);
            }});
}
