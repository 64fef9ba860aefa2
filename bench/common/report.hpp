// The result: exactly one JSON line on stdout (docs/data-formats.md section 3) and
// one readable line on stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "histogram.hpp"
#include "options.hpp"
#include "placement.hpp"
#include "stats.hpp"

namespace bench {

struct ThroughputResult {
    std::uint64_t count = 0, warmup = 0;
    double receiver_seconds = 0, sender_seconds = 0;
    // From the sender's send of the last warm-up message to the receiver's last
    // arrival, on the one clock both sides share (same host only; unknown in two-host
    // runs). It contains the receiver's window; much longer means the receiver's
    // clock started late, behind a backlog, and its rate is inflated.
    std::optional<double> span_seconds;
    // Set when the pattern drops at the HWM (PUB at a finite HWM): how many measured
    // messages the sender sent; `count` is then how many arrived (delivered).
    std::optional<std::uint64_t> sent;
};

// What a sender process alone knows about the throughput phase (the receiver's
// line carries the throughput itself).
struct SenderThroughput {
    std::uint64_t count = 0, warmup = 0;
    double sender_seconds = 0;
};

struct LatencyResult {
    std::uint64_t warmup = 0;
    LatencySummary rtt_half_us;    // exact, over every sample
    LatencyHistogram rtt_half_ns;  // the same samples, mergeable (histogram.hpp)
};

struct VerifyState {
    bool ok = true;
    std::uint64_t received = 0, expected = 0;  // measured throughput messages
    std::uint64_t lat_received = 0, lat_expected = 0;
    // Lossy throughput: messages of an earlier slice's tail that reached a later slice's
    // warm-up (skipped there, not counted as received).
    std::uint64_t stragglers = 0;
    std::string method;
    std::string error;
};

// What the library reports it runs with, read back with zmq_getsockopt/zmq_ctx_get
// from the first socket and context the run made (every socket gets the same
// options), so a result states the HWM, buffers and IO threads each library ran with
// whether the bench set them or left the library's defaults.
struct LibrarySettings {
    std::optional<int> sndhwm, rcvhwm, sndbuf, rcvbuf, io_threads;
};
// Records the socket's settings if none were recorded yet (thread-safe).
void record_socket_settings(void *socket);
void record_context_settings(void *context);
// What was recorded (a copy, thread-safe).
LibrarySettings library_settings();
// The same read from one given socket and context, recording nothing (the arms
// bench reads each arm's own).
LibrarySettings read_library_settings(void *socket, void *context);

struct RunInfo {
    const char *pattern = "";
    std::string topology;
    Options opts;
    int contexts = 0;                 // ZeroMQ contexts in this process
    std::vector<std::string> bound;   // endpoints the receiving side bound
    std::vector<ThreadInfo> threads;  // read from /proc after the run
};

// Set once options are known, so that a verification failure in any thread can
// still report what ran; run_info() completes it as the run goes.
void set_run_info(const RunInfo &info);
RunInfo &run_info();
// The live verification state (updated by the runner as messages arrive).
VerifyState &verify_state();

std::string render_json(const std::optional<ThroughputResult> &thr,
                        const std::optional<LatencyResult> &lat,
                        const std::optional<SenderThroughput> &sender_only = std::nullopt);
std::string render_summary(const std::optional<ThroughputResult> &thr,
                           const std::optional<LatencyResult> &lat,
                           const std::optional<SenderThroughput> &sender_only = std::nullopt);

// The JSON line a verification failure prints (verify.ok = false, with the error):
// each runner registers its own renderer before its sides start.
using FailureLine = std::string (*)();
void set_failure_line(FailureLine render);
// Prints the registered failure line and exits with status 4.
[[noreturn]] void exit_verify(const std::string &error);

}  // namespace bench
