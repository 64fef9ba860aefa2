// The driver's command line. Every setting that differs from a library default is
// passed by the runner, which takes it from experiments/faults*/experiment.toml
// (where each deviation carries its reason); the driver has no defaults of its own
// for them.
#pragma once

#include <cstdint>
#include <string>

namespace faults {

enum class Pattern { pair, push_pull, dealer_router, pub_sub, req_rep };
enum class Role { send, recv };  // REQ_REP: send = the lazy-pirate client, recv = the server

struct Options {
    Role role = Role::send;
    Pattern pattern = Pattern::pair;
    std::string endpoint;
    bool bind = false;
    bool curve = false;
    // ZMQ_HEARTBEAT_IVL / _TIMEOUT / _TTL in ms; 0: not set (the library's default: off).
    int heartbeat_ivl = 0, heartbeat_timeout = 0, heartbeat_ttl = 0;
    int linger = -2;  // ZMQ_LINGER in ms; -2: not set
    // How long one send or receive call waits before the loop looks at the clock again.
    int poll_ms = 100;
    std::size_t size_min = 64, size_max = 64;
    double rate = 1000;  // messages (REQ: requests) per second
    std::int64_t start_at_ns = 0, send_until_ns = 0, until_ns = 0;
    std::uint32_t epoch = 1;
    std::string log_path, events_path;
    int request_timeout_ms = 1000, retries = 3;  // REQ lazy pirate
    int sample_ms = 500;
    // --seed-rand: srand() before any zmq call. libzmq 4.3.5 draws its reconnect
    // waits (RECONNECT_IVL + rand() % RECONNECT_IVL) and REQ/ROUTER ids from rand()
    // and never seeds it, so without this every libzmq process draws the same
    // waits (183, 125, 141, ... ms) and repetitions of a cell are copies of one
    // draw. zlink does not use rand(): the seed changes nothing there.
    bool seed_rand = false;
    unsigned rand_seed = 0;
};

Options parse_options(int argc, char **argv);
const char *pattern_name(Pattern p);

}  // namespace faults
