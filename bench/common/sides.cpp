#include "sides.hpp"

#include <zmq.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <thread>

#include "clock.hpp"
#include "endpoint.hpp"
#include "payload.hpp"
#include "phases.hpp"
#include "placement.hpp"
#include "zmq_end.hpp"

namespace bench {

namespace {

constexpr int kReceiverSlot = 0, kSenderSlot = 1;

void warmed(const SideEnv &env) {
    if (env.warmed)
        env.warmed();
}

// Where the injected faults strike: the middle of the measured messages, on a
// sampled sequence number so that `corrupt` hits a fully checked body. A late tail
// is at most 100 messages, well under the default HWM, so that PUB does not drop the
// first latency probe behind it.
std::uint64_t fault_seq(const Options &o) {
    if (o.fault == Fault::late_tail)
        return o.warmup + o.count - std::min<std::uint64_t>(o.count / 2, 100);
    std::uint64_t s = o.warmup + o.count / 2;
    s -= s % kSamplePeriod;
    return s < o.warmup ? o.warmup + o.count / 2 : s;
}

}  // namespace

// What both sides must agree on before anything runs (the hello).
std::string run_settings(const Options &o, const char *pattern) {
    std::ostringstream s;
    s << "pattern=" << pattern << " transport=" << to_string(o.transport) << " size=" << o.size
      << " count=" << o.count << " warmup=" << o.warmup << " lat_count=" << o.lat_count
      << " lat_warmup=" << o.lat_warmup << " mode=" << to_string(o.mode) << " hwm=" << o.hwm
      << " send_buffers=" << o.send_buffers;
    return s.str();
}

// Seconds as text without losing precision (they cross the Link as text).
std::string exact(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

namespace {

std::map<std::string, std::string> settings_map(const std::string &text) {
    std::map<std::string, std::string> m;
    std::istringstream in(text);
    for (std::string kv; in >> kv;) {
        const auto eq = kv.find('=');
        m[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
    return m;
}

}  // namespace

// "" when they agree, else "count: receiver 1000, sender 2000; ..."
std::string settings_mismatch(const std::string &receiver, const std::string &sender) {
    const auto r = settings_map(receiver), s = settings_map(sender);
    std::string out;
    for (const auto &[key, value] : r) {
        const auto it = s.find(key);
        const std::string mine = it == s.end() ? "(none)" : it->second;
        if (mine != value)
            out += (out.empty() ? "" : "; ") + key + ": receiver " + value + ", sender " + mine;
    }
    return out;
}

std::vector<std::string> split(const std::string &text, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep))
        parts.push_back(part);
    return parts;
}

namespace {

// Creates the side's context and sockets on this (pinned) thread.
template <typename Make>
Side build_side(const SideEnv &env, Make make) {
    return make(env.contexts.for_side());
}

}  // namespace

ThroughputResult receive_throughput(End &b, const SideEnv &env, Clock::time_point &last_arrival) {
    const Options &o = env.o;
    env.wd.set_phase("throughput");
    Verifier verifier(o.size);
    VerifyState &vs = verify_state();
    vs.expected += o.count;
    const std::uint64_t total = o.warmup + o.count;
    ProgressSlot &progress = env.wd.slot(kReceiverSlot);
    Clock::time_point start{}, end{};
    for (std::uint64_t i = 0; i < total; ++i) {
        if (i + 1 == o.warmup) {
            warmed(env);
            env.link.post(Signal::go);  // all but the last warm-up are in
        }
        const View m = b.recv();
        if (!verifier.check(m.data, m.size, i))
            exit_verify("throughput: " + verifier.error());
        // The clock starts at the last warm-up message, so the window holds exactly
        // `count` messages, and stops at the last one (before a lockstep reply).
        if (i + 1 == o.warmup)
            start = Clock::now();
        if (i + 1 == total)
            end = Clock::now();
        if (env.spec.traits.lockstep)
            b.send_back();
        if (i >= o.warmup)
            ++vs.received;
        progress.kick();
    }
    last_arrival = end;
    ThroughputResult r;  // members by name: the struct's other fields keep their defaults
    r.count = o.count;
    r.warmup = o.warmup;
    r.receiver_seconds = seconds_between(start, end);
    return r;
}

// A pattern that drops at the HWM (PUB) with a finite HWM: PUB never blocks, so the
// subscriber gets what its queues held. Losses are counted by sequence number, and
// the window runs from the arrival of the first message at or after the last warm-up
// one to the last arrival, so the delivered rate is timed like a lossless one.
// The run ends when the last message arrives, or when the sender has said it is done
// and nothing arrived for kQuietMs (the rest was dropped); the quiet wait is never in
// the window. `sent_text` gets the sender's `sent` payload if it was taken here.
namespace {
constexpr int kQuietMs = 100;
}  // namespace

bool lossy(const Options &o, const PatternSpec &spec) {
    return spec.traits.drops_at_hwm && o.hwm != 0;
}

ThroughputResult receive_lossy(End &b, const SideEnv &env, Clock::time_point &last_arrival,
                               std::optional<std::string> &sent_text) {
    const Options &o = env.o;
    env.wd.set_phase("throughput (lossy: PUB drops at the HWM)");
    Verifier verifier(o.size);
    VerifyState &vs = verify_state();
    vs.expected += o.count;
    const std::uint64_t last_warm = o.warmup - 1, last = o.warmup + o.count - 1;
    ProgressSlot &progress = env.wd.slot(kReceiverSlot);
    auto idle_since = Clock::now();
    auto check_idle = [&](const char *what) {
        if (Clock::now() - idle_since > std::chrono::milliseconds(o.timeout_ms))
            exit_timeout(std::string("nothing received for --timeout-ms ") + what);
    };
    std::uint64_t next = 0, seq = 0;
    // Warm-up: all but the last warm-up message, or what of them PUB did not drop.
    bool any = false;
    while (o.warmup > 1) {
        const auto m = b.recv_within(kQuietMs);
        if (!m) {
            if (any)
                break;  // the rest of the warm-up was dropped
            check_idle("(warm-up)");
            continue;
        }
        if (!verifier.check_from(m->data, m->size, next, seq))
            exit_verify("throughput (warm-up): " + verifier.error());
        if (seq >= last_warm && !any) {
            // The sender sends nothing past the warm-up before go, so this is the tail of
            // an earlier slice on the same connection (the arms bench reuses its sockets),
            // which that slice's receiver gave up on after kQuietMs of silence on a loaded
            // host. The stream is FIFO: none can follow this slice's first message.
            ++vs.stragglers;
            idle_since = Clock::now();
            continue;
        }
        if (seq >= last_warm)
            exit_verify("throughput (warm-up): a message past the warm-up arrived before go");
        any = true;
        next = seq + 1;
        idle_since = Clock::now();
        progress.kick();
        if (seq + 1 == last_warm)
            break;
    }
    if (o.warmup >= 1) {  // with one warm-up message the loop above has nothing to wait for
        warmed(env);
        env.link.post(Signal::go);
    }
    // The clock starts at the first message at or after the last warm-up one (the
    // queues were drained before go, so that one is normally the last warm-up).
    Clock::time_point start{}, end{};
    bool started = false;
    std::uint64_t delivered = 0;
    idle_since = Clock::now();
    for (;;) {
        const auto m = b.recv_within(kQuietMs);
        if (!m) {
            if (!sent_text)
                sent_text = env.link.poll(Signal::sent, 0);
            if (sent_text && started)
                break;  // the sender is done and the queues are empty
            check_idle("(throughput)");
            continue;
        }
        if (!verifier.check_from(m->data, m->size, next, seq))
            exit_verify("throughput: " + verifier.error());
        next = seq + 1;
        const auto now = Clock::now();
        idle_since = now;
        progress.kick();
        if (seq < last_warm)
            continue;  // a warm-up straggler
        if (!started) {
            started = true;
            start = now;
        } else if (seq > last_warm) {
            ++delivered;
        }
        end = now;
        if (seq == last)
            break;
    }
    vs.received += delivered;
    last_arrival = end;
    ThroughputResult r;
    r.count = delivered;
    r.warmup = o.warmup;
    r.receiver_seconds = seconds_between(start, end);
    r.sent = o.count;
    return r;
}

namespace {
// Tells the receiving side the window (`sent`) and waits for its `thr_done`.
std::string report_sent(const SideEnv &env, double seconds, Clock::time_point span_start) {
    const auto start_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(span_start.time_since_epoch()).count();
    env.link.post(Signal::sent, exact(seconds) + " " + std::to_string(start_ns));
    env.wd.set_phase("throughput (receiver still receiving)");
    return env.link.wait(Signal::thr_done);
}
}  // namespace

SendWindow send_throughput(End &a, const SideEnv &env) {
    const Options &o = env.o;
    env.wd.set_phase("throughput");
    SendWindow out;
    PayloadMaker maker(o.size);
    Verifier replies(o.size);
    const std::uint64_t total = o.warmup + o.count;
    const std::uint64_t bad = fault_seq(o);
    ProgressSlot &progress = env.wd.slot(kSenderSlot);
    Clock::time_point start{}, span_start{};
    a.begin_burst();
    for (std::uint64_t i = 0; i < total; ++i) {
        if (i + 1 == o.warmup) {
            a.end_burst();  // a batching peer must hand over what the receiver waits for
            env.link.wait(Signal::go);
            warmed(env);
            a.begin_burst();
            span_start = Clock::now();  // before the message that starts the receiver's clock
        }
        if (i == o.warmup)
            start = Clock::now();
        std::uint64_t seq = i;
        if (o.fault != Fault::none && i >= bad) {
            if (o.fault == Fault::skip)
                seq = i + 1;              // one sequence number never sent
            if (o.fault == Fault::stall)  // the peer goes quiet
                for (;;)
                    std::this_thread::sleep_for(std::chrono::seconds(1));
            if (o.fault == Fault::late_tail && i == bad) {
                // Says it is done before its last <= 100 messages (fault_seq) and sends
                // them once the receiver has ended its window: the tail a loaded host
                // delivers after the receiver's quiet wait.
                a.end_burst();
                out.seconds = seconds_between(start, Clock::now());
                out.receiver_seconds = report_sent(env, out.seconds, span_start);
                env.wd.set_phase("throughput (late tail)");
                a.begin_burst();
            }
        }
        a.stage_payload(maker, seq, o.fault == Fault::corrupt && i == bad);
        a.send_staged();
        if (env.spec.traits.lockstep) {
            const View r = a.recv();
            if (!replies.check(r.data, r.size, seq))
                exit_verify("throughput (reply): " + replies.error());
        }
        progress.kick();
    }
    a.end_burst();
    if (o.fault != Fault::late_tail) {
        out.seconds = seconds_between(start, Clock::now());
        out.receiver_seconds = report_sent(env, out.seconds, span_start);
    }
    return out;
}

void echo_latency(End &b, const SideEnv &env) {
    env.wd.set_phase("latency");
    Verifier verifier(env.o.size);
    const bool tail_possible = lossy(env.o, env.spec);
    const std::uint64_t total = env.o.lat_warmup + env.o.lat_count;
    for (std::uint64_t i = 0; i < total; ++i) {
        if (i == env.o.lat_warmup)
            warmed(env);  // concurrent with the first timed round trip: one syscall per thread
        View m = b.recv();
        // The lossy receiver ends its window after kQuietMs of silence; on a loaded
        // host the throughput stream's tail can come later on the same connection.
        // FIFO: all of it comes before the first probe (seq 0; the tail's are >= 1).
        std::uint64_t seq = 0;
        while (i == 0 && tail_possible && !verifier.check(m.data, m.size, 0) &&
               verifier.check_from(m.data, m.size, 1, seq)) {
            ++verify_state().stragglers;
            m = b.recv();
        }
        if (!verifier.check(m.data, m.size, i))
            exit_verify("latency (echo side): " + verifier.error());
        b.send_back();
        env.wd.slot(kReceiverSlot).kick();
    }
}

LatencyResult measure_latency(End &a, const SideEnv &env) {
    const Options &o = env.o;
    env.wd.set_phase("latency");
    PayloadMaker maker(o.size);
    Verifier verifier(o.size);
    VerifyState &vs = verify_state();
    vs.lat_expected += o.lat_count;
    const std::uint64_t total = o.lat_warmup + o.lat_count;
    std::vector<double> samples;
    samples.reserve(o.lat_count);
    LatencyHistogram histogram;  // the same round trips, in the mergeable form the JSON carries
    for (std::uint64_t i = 0; i < total; ++i) {
        if (i == o.lat_warmup)
            warmed(env);
        a.stage_payload(maker, i, false);
        const auto t0 = Clock::now();
        a.send_staged();
        const View back = a.recv();
        const auto t1 = Clock::now();
        if (!verifier.check(back.data, back.size, i))
            exit_verify("latency (client side): " + verifier.error());
        if (i >= o.lat_warmup) {
            samples.push_back(microseconds_between(t0, t1) / 2.0);
            const auto rtt_ns =
                std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
            histogram.record(static_cast<std::uint64_t>((rtt_ns + 1) / 2));
            ++vs.lat_received;
        }
        env.wd.slot(kSenderSlot).kick();
    }
    return LatencyResult{o.lat_warmup, summarize(samples), histogram};
}

// The endpoints the sending side connects to: the primary as --connect says (or as
// bound), the others as bound, on --connect's host.
std::vector<std::string> sender_endpoints(const Options &o, const std::vector<std::string> &bound) {
    std::vector<std::string> out = bound;
    if (!o.connect.empty() && !out.empty()) {
        Endpoint connect;
        std::string error;
        parse_endpoint(o.connect, connect, error);
        out[0] = o.connect;
        for (std::size_t i = 1; i < out.size(); ++i)
            out[i] = rehome(out[i], connect);
    }
    return out;
}

void *ContextPool::for_side() {
    std::lock_guard lock(m_);
    if (shared_ && !contexts_.empty())
        return contexts_.front();
    void *ctx = zmq_ctx_new();
    if (!ctx)
        exit_zmq_error("zmq_ctx_new");
    if (zmq_ctx_set(ctx, ZMQ_IO_THREADS, io_threads_) != 0)
        exit_zmq_error("zmq_ctx_set ZMQ_IO_THREADS");
    record_context_settings(ctx);
    contexts_.push_back(ctx);
    return ctx;
}

void ContextPool::terminate_all() {
    std::lock_guard lock(m_);
    for (void *ctx : contexts_)
        if (zmq_ctx_term(ctx) != 0)
            exit_zmq_error("zmq_ctx_term");
    contexts_.clear();
}

ReceiverOutcome run_receiving_side(const SideEnv &env) {
    const Options &o = env.o;
    env.wd.set_phase("connect");
    ReceiverOutcome out;
    const std::string bind = o.bind.empty() ? fresh_endpoint(o.transport) : o.bind;
    // Library threads that appear until the sender is told to start are this side's.
    const std::vector<int> before = list_tids();
    out.side = build_side(env, [&](void *ctx) { return env.spec.make_receiver(ctx, o, bind); });
    thread_census().attribute_new(before, "library:receiver");
    std::string hello = run_settings(o, env.spec.traits.name);
    for (const auto &ep : out.side.bound)
        hello += "|" + ep;
    env.link.post(Signal::hello, hello);
    env.link.wait(Signal::hello_ok);
    env.wd.set_phase("handshake");
    out.side.end->establish(env.link, false, o.timeout_ms);
    if (o.mode != Mode::lat) {
        Clock::time_point last_arrival{};
        std::optional<std::string> sent_text;
        out.thr = lossy(o, env.spec) ? receive_lossy(*out.side.end, env, last_arrival, sent_text)
                                     : receive_throughput(*out.side.end, env, last_arrival);
        if (out.thr->count == 0)
            exit_verify("throughput: no measured message was delivered");
        std::istringstream sent(sent_text ? *sent_text : env.link.wait(Signal::sent));
        std::int64_t sender_start_ns = 0;
        sent >> out.thr->sender_seconds >> sender_start_ns;
        // Two hosts have two steady clocks: no span then.
        if (o.process_model != ProcessModel::two_host)
            out.thr->span_seconds = seconds_between(
                Clock::time_point(std::chrono::nanoseconds(sender_start_ns)), last_arrival);
        env.link.post(Signal::thr_done, exact(out.thr->receiver_seconds));
    }
    if (o.mode != Mode::thr)
        echo_latency(*out.side.end, env);
    env.wd.set_phase("end of run");
    env.link.wait(Signal::finished);
    return out;
}

SenderOutcome run_sending_side(const SideEnv &env) {
    const Options &o = env.o;
    env.wd.set_phase("connect");
    const std::vector<std::string> hello = split(env.link.wait(Signal::hello), '|');
    if (const std::string diff =
            settings_mismatch(hello.at(0), run_settings(o, env.spec.traits.name));
        !diff.empty()) {
        const std::string why =
            "the receiver and the sender were started with different settings: " + diff;
        env.link.refuse(why);
        exit_usage(why);
    }
    SenderOutcome out;
    const std::vector<std::string> endpoints =
        sender_endpoints(o, std::vector<std::string>(hello.begin() + 1, hello.end()));
    // Library threads that appear from here to the end of the handshake are this
    // side's: the receiving side has set up, and a connect may start helper threads
    // later (an Asio resolver thread is started by the IO thread, for instance).
    const std::vector<int> before = list_tids();
    out.side = build_side(env, [&](void *ctx) { return env.spec.make_sender(ctx, o, endpoints); });
    env.link.post(Signal::hello_ok);
    env.wd.set_phase("handshake");
    out.side.end->establish(env.link, true, o.timeout_ms);
    thread_census().attribute_new(before, "library:sender");
    if (o.mode != Mode::lat) {
        out.sender_seconds = send_throughput(*out.side.end, env).seconds;
    }
    if (o.mode != Mode::thr)
        out.lat = measure_latency(*out.side.end, env);
    env.link.post(Signal::finished);
    return out;
}

}  // namespace bench
