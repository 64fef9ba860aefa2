// The host's physical limits, measured with the same clock and the same
// one-process/two-threads shape as the benchmarks, so that every library result
// can be shown as a fraction of what the machine can do at all.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../common/stats.hpp"

namespace bench {

enum class StreamKind { tcp, unix_socket };

struct BandwidthResult {
    std::uint64_t bytes = 0;
    double seconds = 0;
    std::size_t write_size = 0;
};

// Stream throughput of plain sockets (TCP with TCP_NODELAY, or Unix domain): the
// sender writes in large writes (>= 256 KiB, a whole number of messages), the
// receiver reads large chunks; the first tenth of the bytes is an uncounted warm-up.
BandwidthResult stream_bandwidth(StreamKind kind, std::size_t msg_size, std::uint64_t bytes, int timeout_ms);

// Ping-pong of msg_size bytes; returns RTT/2 in microseconds.
LatencySummary stream_round_trip(StreamKind kind, std::size_t msg_size, std::uint64_t samples, int timeout_ms);

// memcpy of msg_size bytes between two buffers, repeated; cache-resident for small sizes.
BandwidthResult memcpy_bandwidth(std::size_t msg_size, std::uint64_t bytes);

}  // namespace bench
