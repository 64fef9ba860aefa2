#include "runner.hpp"

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include <zmq.h>

#include "clock.hpp"
#include "payload.hpp"
#include "process.hpp"
#include "report.hpp"
#include "zmq_end.hpp"

namespace bench {

namespace {

// Where the injected faults strike: the middle of the measured messages, on a
// sampled sequence number so that `corrupt` hits a fully checked body.
std::uint64_t fault_seq(const Options& o) {
    std::uint64_t s = o.warmup + o.count / 2;
    s -= s % kSamplePeriod;
    return s < o.warmup ? o.warmup + o.count / 2 : s;
}

// The warm-up ends with a barrier: the sender waits until the receiver has every
// warm-up message before it sends the first measured one. Both timed windows then
// start with empty queues, so the receiver cannot look faster than the transfer by
// draining a backlog the sender built up before the receiver's clock started.
void sender_loop(End& a, const Options& o, ProgressSlot& progress, const std::atomic<bool>& go,
                 double& sender_seconds) {
    PayloadMaker maker(o.size);
    const std::uint64_t total = o.warmup + o.count;
    const std::uint64_t bad = fault_seq(o);
    Clock::time_point start{};
    a.begin_burst();
    for (std::uint64_t i = 0; i < total; ++i) {
        if (i == o.warmup) {
            a.end_burst();  // a batching peer must hand over the whole warm-up
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            a.begin_burst();
            start = Clock::now();
        }
        std::uint64_t seq = i;
        if (o.fault != Fault::none && i >= bad) {
            if (o.fault == Fault::skip) seq = i + 1;  // one sequence number never sent
            if (o.fault == Fault::stall)              // the peer goes quiet
                for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        }
        const std::uint8_t* msg =
            (o.fault == Fault::corrupt && i == bad) ? maker.make_corrupt(seq) : maker.make(seq);
        a.send(msg, o.size);
        progress.kick();
    }
    a.end_burst();
    sender_seconds = seconds_between(start, Clock::now());
}

ThroughputResult run_throughput(Channel& ch, const Options& o, const PatternTraits& traits, Watchdog& wd) {
    wd.set_phase("throughput");
    const std::string drop_hint = traits.drops_at_hwm && o.hwm > 0
        ? " (this pattern drops messages at the high-water mark by design; a lossless run needs --hwm 0)"
        : "";
    // A lost last message (or last warm-up message) leaves the receiver waiting:
    // that ends as a timeout, which must carry the same explanation.
    set_timeout_hint(drop_hint);
    double sender_seconds = 0;
    std::atomic<bool> go{false};
    std::thread sender([&] { sender_loop(*ch.a, o, wd.slot(1), go, sender_seconds); });

    Verifier verifier(o.size);
    VerifyState& vs = verify_state();
    vs.expected = o.count;
    const std::uint64_t total = o.warmup + o.count;
    ProgressSlot& progress = wd.slot(0);
    Clock::time_point start{};
    for (std::uint64_t i = 0; i < total; ++i) {
        const View m = ch.b->recv();
        if (!verifier.check(m.data, m.size, i)) exit_verify("throughput: " + verifier.error() + drop_hint);
        // The clock starts when the last warm-up message is in (and releases the
        // sender), so the timed span covers exactly `count` messages.
        if (i + 1 == o.warmup) {
            start = Clock::now();
            go.store(true, std::memory_order_release);
        }
        if (i >= o.warmup) ++vs.received;
        progress.kick();
    }
    const auto end = Clock::now();
    sender.join();
    set_timeout_hint("");
    return ThroughputResult{o.count, o.warmup, seconds_between(start, end), sender_seconds};
}

LatencyResult run_latency(Channel& ch, const Options& o, Watchdog& wd) {
    wd.set_phase("latency");
    const std::uint64_t total = o.lat_warmup + o.lat_count;
    std::thread echo([&] {
        Verifier verifier(o.size);
        for (std::uint64_t i = 0; i < total; ++i) {
            const View m = ch.b->recv();
            if (!verifier.check(m.data, m.size, i)) exit_verify("latency (echo side): " + verifier.error());
            ch.b->send_back();
            wd.slot(1).kick();
        }
    });
    PayloadMaker maker(o.size);
    Verifier verifier(o.size);
    VerifyState& vs = verify_state();
    vs.lat_expected = o.lat_count;
    std::vector<double> samples;
    samples.reserve(o.lat_count);
    for (std::uint64_t i = 0; i < total; ++i) {
        const std::uint8_t* msg = maker.make(i);
        const auto t0 = Clock::now();
        ch.a->send(msg, o.size);
        const View back = ch.a->recv();
        const auto t1 = Clock::now();
        if (!verifier.check(back.data, back.size, i)) exit_verify("latency (client side): " + verifier.error());
        if (i >= o.lat_warmup) {
            samples.push_back(microseconds_between(t0, t1) / 2.0);
            ++vs.lat_received;
        }
        wd.slot(0).kick();
    }
    echo.join();
    return LatencyResult{o.lat_warmup, summarize(samples)};
}

// --no-peer: a lone receiver of the pattern's type must give up with status 3.
[[noreturn]] void run_without_peer(void* ctx, const PatternSpec& spec, const Options& o) {
    void* s = make_socket(ctx, spec.receiver_socket_type, o);
    if (spec.receiver_socket_type == ZMQ_SUB) set_bytes_option(s, ZMQ_SUBSCRIBE, "", "ZMQ_SUBSCRIBE");
    bind_fresh(s, o.transport);
    ZmqEndSpec es;
    es.send_socket = es.recv_socket = s;
    es.recv_routing_id = spec.receiver_socket_type == ZMQ_ROUTER || spec.receiver_socket_type == ZMQ_STREAM;
    es.timeout_ms = o.timeout_ms;
    es.sync_len = o.size == 0 ? 1 : 0;
    ZmqEnd end(es);
    for (;;) {
        const View m = end.recv();  // exits with status 3 after --timeout-ms
        if (m.size > 0) exit_error("--no-peer: a message arrived although no peer exists");
    }
}

}  // namespace

int run_benchmark(int argc, char** argv, const PatternSpec& spec) {
    const Options o = parse_options(argc, argv, spec.traits);
    {
        const std::string prog = argv[0];
        const auto slash = prog.rfind('/');
        set_program_name(slash == std::string::npos ? prog : prog.substr(slash + 1));
    }
    RunInfo info;
    info.pattern = spec.traits.name;
    info.opts = o;
    verify_state().method = Verifier(o.size).method();

    Watchdog wd;
    wd.start(o.timeout_ms + 2000);
    void* ctx = zmq_ctx_new();
    if (!ctx) exit_zmq_error("zmq_ctx_new");
    if (zmq_ctx_set(ctx, ZMQ_IO_THREADS, o.io_threads) != 0) exit_zmq_error("zmq_ctx_set ZMQ_IO_THREADS");
    if (o.no_peer) {
        set_run_info(info);
        run_without_peer(ctx, spec, o);
    }

    wd.set_phase("connect");
    Channel ch = spec.make_channel(ctx, o);
    info.topology = ch.topology;
    set_run_info(info);
    ch.establish();

    std::optional<ThroughputResult> thr;
    std::optional<LatencyResult> lat;
    if (o.mode != Mode::lat) thr = run_throughput(ch, o, spec.traits, wd);
    if (o.mode != Mode::thr) lat = run_latency(ch, o, wd);

    // Shut down before printing: a library that hangs in close/term must not leave
    // a result behind that looks complete (the watchdog turns the hang into exit 3).
    wd.set_phase("shutdown");
    if (o.fault == Fault::hang)  // no timeout of ours applies here: only the watchdog can end this
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    ch.a.reset();
    ch.b.reset();
    ch.close();
    if (zmq_ctx_term(ctx) != 0) exit_zmq_error("zmq_ctx_term");
    wd.stop();
    cleanup_paths();

    std::printf("%s\n", render_json(thr, lat).c_str());
    std::fprintf(stderr, "%s\n", render_summary(thr, lat).c_str());
    return 0;
}

}  // namespace bench
