// PUSH_PULL (RFC 30 pipeline): throughput flows PUSH (a, connects) -> PULL (b,
// binds); latency returns through a second PUSH (b, binds) -> PULL (a, connects).
// Unlike PUB, PUSH blocks at the high-water mark instead of dropping.
#include "../common/runner.hpp"
#include "two_pairs.hpp"

using namespace bench;

constexpr OneWayTypes kTypes{ZMQ_PUSH, ZMQ_PULL};

int main(int argc, char **argv) {
    return run_benchmark(
        argc, argv,
        PatternSpec{
            {"PUSH_PULL"},
            ZMQ_PULL,
            "PUSH(connect) -> PULL(bind); latency returns via a second PUSH(bind) -> PULL(connect)",
            [](void *ctx, const Options &o, const std::string &bind) {
                return two_pair_receiver(ctx, o, bind, kTypes);
            },
            [](void *ctx, const Options &o, const std::vector<std::string> &eps) {
                return two_pair_sender(ctx, o, eps, kTypes);
            }});
}
