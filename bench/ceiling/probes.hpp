// What the host can do without any messaging library, measured the way the bench
// cells are: the same clock, process model, placement, message sizes and socket
// buffer policy, so that each cell can be shown as a share of it and no library can
// exceed it.
//
// A stream probe has a receiving side (listens, times the throughput from the first
// counted byte to the last, echoes latency probes) and a sending side (connects,
// streams, times round trips). The sending side opens one connection per row and
// starts it with a fixed-size header saying what the row is; a "done" header ends
// the receiver's loop. The header and the end-of-row acknowledgement are outside
// the timed windows.
//
// Throughput streams the payload as efficiently as the kernel allows: the sender
// coalesces messages into large writes (whole messages), the receiver reads chunks of
// the same size, and each row is streamed once per write size in --write-sizes and
// way of waiting in --io-waits; the best is the ceiling (which wins depends on the
// host: cache sizes, socket buffers, the cost of a cross-CPU wake-up). So
// msgs_per_sec = bytes_per_sec / size is an upper bound for any library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../common/endpoint.hpp"
#include "../common/raw_socket.hpp"
#include "../common/stats.hpp"
#include "probe_options.hpp"

namespace bench {

struct BandwidthResult {
    std::uint64_t bytes = 0;  // counted bytes (after the warm-up)
    double seconds = 0;
    std::size_t write_size = 0;
    IoWait io = IoWait::blocking;
};

struct ThroughputRow {
    std::string transport;
    std::size_t size = 0;
    BandwidthResult bw;
};

struct LatencyRow {
    std::string transport;
    std::size_t size = 0;
    LatencySummary rtt_half_us;
};

// Bytes per write for messages of `size`: whole messages, at least `target` bytes.
std::size_t write_size_for(std::size_t size, std::size_t target);
// The distinct write sizes a row of `size` tries.
std::vector<std::size_t> write_sizes_for(std::size_t size, const std::vector<std::size_t> &targets);

// Receiving side: accepts one connection per row on `listener` and serves it, until
// the sender's "done". Returns every throughput stream it timed (one per write size).
std::vector<ThroughputRow> serve_rows(RawListener &listener, const std::string &transport,
                                      const ProbeOptions &o);

// Sending side: every size's throughput and/or latency row against `ep`, then "done".
std::vector<LatencyRow> drive_rows(const Endpoint &ep, const ProbeOptions &o);

// memcpy of msg_size bytes between two buffers, repeated; cache-resident for small sizes.
BandwidthResult memcpy_bandwidth(std::size_t msg_size, std::uint64_t bytes);

}  // namespace bench
