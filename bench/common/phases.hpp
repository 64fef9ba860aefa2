// The phases of a run as the two sides play them (sides.cpp), shared by
// bench_<pattern> (one throughput and one latency phase per run) and
// bench_arms_<pattern> (one phase per slice, on the arm of the slice). Each phase
// reads its counts from env.o, checks every message, and adds what it expected and
// received to verify_state().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "clock.hpp"
#include "end.hpp"
#include "report.hpp"
#include "sides.hpp"

namespace bench {

// What both sides must agree on before anything runs (the hello's first part).
std::string run_settings(const Options &o, const char *pattern);
// "" when the two settings texts agree, else "count: receiver 1000, sender 2000; ..."
std::string settings_mismatch(const std::string &receiver, const std::string &sender);
// Seconds as text without losing precision (they cross the Link as text).
std::string exact(double v);
std::vector<std::string> split(const std::string &text, char sep);
// The endpoints the sending side connects to: the primary as --connect says (or as
// bound), the others as bound, on --connect's host.
std::vector<std::string> sender_endpoints(const Options &o, const std::vector<std::string> &bound);

// PUB at a finite HWM: the receiver counts losses instead of failing.
bool lossy(const Options &o, const PatternSpec &spec);

// Receiving side, throughput: o.warmup + o.count messages, timed from the last
// warm-up arrival to the last arrival (posts `go` before the last warm-up message).
ThroughputResult receive_throughput(End &b, const SideEnv &env, Clock::time_point &last_arrival);
// The same for a pattern that drops (lossy): `sent_text` gets the sender's `sent`
// payload if the phase took it.
ThroughputResult receive_lossy(End &b, const SideEnv &env, Clock::time_point &last_arrival,
                               std::optional<std::string> &sent_text);

// The sending side, throughput: sends, tells the receiver its window and when it
// sent the last warm-up message (`sent`; the span starts there, so it contains the
// receiver's window), and waits for the receiver's `thr_done`.
struct SendWindow {
    double seconds = 0;
    std::string receiver_seconds;  // thr_done's text
};
SendWindow send_throughput(End &a, const SideEnv &env);

// Latency: the receiving side echoes o.lat_warmup + o.lat_count messages (after a
// lossy pattern it first skips the throughput stream's late tail, counted in
// verify_state().stragglers); the sending side times each round trip.
void echo_latency(End &b, const SideEnv &env);
LatencyResult measure_latency(End &a, const SideEnv &env);

}  // namespace bench
