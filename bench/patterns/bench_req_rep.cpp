// REQ_REP (RFC 28 request-reply): a REQ (a, connects) sends requests to a bound REP
// (b), which answers each with the request itself (zero-copy echo). REQ allows one
// request in flight, so the throughput phase is lockstep too: throughput counts
// request/reply pairs per second, timed at the replier like every other pattern's
// receiver (from the last warm-up request's arrival to the last request's: exactly
// `count` round trips); the requester's own rate (first request to last reply) is
// the sender rate. Latency is the round trip of one request, as in every pattern.
#include "../common/runner.hpp"
#include "one_socket.hpp"

using namespace bench;

int main(int argc, char **argv) {
    ZmqEndSpec lockstep;
    lockstep.lockstep = true;
    PatternTraits traits{"REQ_REP"};
    traits.lockstep = true;
    return run_benchmark(
        argc, argv,
        PatternSpec{traits, ZMQ_REP, "REQ(connect) -> REP(bind), lockstep",
                    [=](void *ctx, const Options &o, const std::string &bind) {
                        return bound_side(ctx, o, bind, ZMQ_REP, lockstep);
                    },
                    [=](void *ctx, const Options &o, const std::vector<std::string> &eps) {
                        return connected_side(ctx, o, eps, ZMQ_REQ, lockstep);
                    }});
}
