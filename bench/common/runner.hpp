// The part of every bench_<pattern> main() that is not about the pattern:
// options, placement, contexts, watchdog, the two sides and their phases,
// verification, output and exit status.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "end.hpp"
#include "options.hpp"

namespace bench {

struct PatternSpec {
    PatternTraits traits;
    // Socket type that receives in the throughput phase (used by --no-peer).
    int receiver_socket_type;
    // What the two sides are, for the report (e.g. "PAIR(connect) -> PAIR(bind)").
    const char *topology;
    // The receiving side (b): creates its sockets on `ctx` and binds them, the first
    // at `bind` (later ones at second_endpoint(bind)).
    std::function<Side(void *ctx, const Options &o, const std::string &bind)> make_receiver;
    // The sending side (a): creates its sockets on `ctx` and connects them to the
    // receiver's endpoints (Side::bound, as reachable from here), in order.
    std::function<Side(void *ctx, const Options &o, const std::vector<std::string> &endpoints)>
        make_sender;
};

int run_benchmark(int argc, char **argv, const PatternSpec &spec);

}  // namespace bench
