// The two sides of a run and their phases, the same code whether the sides are two
// threads of one process or two processes.
//
//   receiving side (b)                      sending side (a)
//   context, sockets, bind
//   post hello(settings, endpoints)  ---->  check settings; context, sockets, connect
//                                    <----  post hello_ok
//   handshake a->b, b->a (through the Link; leftovers skipped before the first data)
//   throughput: receive warmup-1          send warmup-1
//               post go              ---->  wait go
//               last warm-up in: clock    send the last warm-up, clock, count more
//               count more in: clock      post sent(seconds)
//               wait sent, post thr_done ->  wait thr_done
//   latency:    echo every message         time every round trip
//               wait finished        <----  post finished
//
// The warm-up barrier sits before the last warm-up message, so the Link is never
// inside a timed window, and both windows start with empty queues.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "link.hpp"
#include "options.hpp"
#include "process.hpp"
#include "report.hpp"
#include "runner.hpp"

namespace bench {

// Where a side gets its ZeroMQ context: its own, created on the side's (pinned)
// thread so that the library's IO threads, started lazily by the first socket,
// inherit that thread's CPUs; or, for inproc, the one context both sides must share
// (created by the receiving side, which sets up first).
class ContextPool {
public:
    ContextPool(int io_threads, bool shared) : io_threads_(io_threads), shared_(shared) {}
    void *for_side();
    // Closes nothing: the caller closes the sockets first, then terminates these.
    void terminate_all();
    int count() const { return static_cast<int>(contexts_.size()); }

private:
    int io_threads_;
    bool shared_;
    std::mutex m_;
    std::vector<void *> contexts_;
};

struct SideEnv {
    const Options &o;
    const PatternSpec &spec;
    Link &link;
    Watchdog &wd;
    ContextPool &contexts;
    // Called on each side once its warm-up is through, before its clock starts (the
    // arms bench hands re-dealt threads back to the scheduler there: arms/dealer.hpp).
    std::function<void()> warmed = {};
};

struct ReceiverOutcome {
    std::optional<ThroughputResult> thr;  // receiver-timed; sender_seconds from the sender
    Side side;
};

struct SenderOutcome {
    std::optional<double> sender_seconds;
    std::optional<LatencyResult> lat;
    Side side;
};

ReceiverOutcome run_receiving_side(const SideEnv &env);
SenderOutcome run_sending_side(const SideEnv &env);

}  // namespace bench
