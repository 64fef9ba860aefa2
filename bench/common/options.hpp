// Command line of every bench_<pattern> binary (docs/data-formats.md section 3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "payload.hpp"

namespace bench {

enum class Transport { tcp, ipc, inproc };
enum class Mode { thr, lat, both };

const char* to_string(Transport t);
const char* to_string(Mode m);

// What the pattern accepts; the parser enforces it so every binary rejects the
// same things the same way.
struct PatternTraits {
    const char* name;         // "PAIR", "STREAM", ...
    bool tcp_only = false;    // STREAM talks to a plain TCP peer
    std::size_t min_size = 0; // STREAM cannot send an empty frame (it means "close")
    bool drops_at_hwm = false; // PUB drops (by design) instead of blocking at the HWM
};

struct Options {
    Transport transport = Transport::tcp;
    std::size_t size = 0;
    std::uint64_t count = 0, warmup = 0;
    std::uint64_t lat_count = 0, lat_warmup = 0;
    int io_threads = 1;
    int hwm = 0;
    int timeout_ms = 10000;
    int linger = 0;
    int sndbuf = -1, rcvbuf = -1;
    Mode mode = Mode::both;
    Fault fault = Fault::none;
    bool no_peer = false;  // test-only: run the receiver without any peer
};

// Parses argv; on bad input prints one error line plus the usage to stderr and
// exits with status 2 (--help: usage on stdout, status 0).
Options parse_options(int argc, char** argv, const PatternTraits& traits);

// Defaults sized so that one run takes about 1-3 s on a 2-core loopback host.
std::uint64_t default_count(std::size_t size);
std::uint64_t default_lat_count(std::size_t size);

}  // namespace bench
