// The part of every bench_<pattern> main() that is not about the pattern:
// options, context, watchdog, the throughput and latency phases, verification,
// output and exit status.
#pragma once

#include <functional>

#include "end.hpp"
#include "options.hpp"

namespace bench {

struct PatternSpec {
    PatternTraits traits;
    // Socket type that receives in the throughput phase (used by --no-peer).
    int receiver_socket_type;
    // Builds the two connected ends on `ctx`.
    std::function<Channel(void* ctx, const Options& o)> make_channel;
};

int run_benchmark(int argc, char** argv, const PatternSpec& spec);

}  // namespace bench
