#include "arm_sides.hpp"

#include <cstdio>
#include <random>
#include <sstream>

#include "../common/endpoint.hpp"
#include "../common/phases.hpp"
#include "../common/placement.hpp"
#include "../common/zmq_end.hpp"
#include "valgrind_marks.hpp"

namespace bench::arms {

namespace {

// The settings both processes must agree on: bench's, plus the arms and rounds.
std::string arms_settings(const ArmsRun &run) {
    std::string s = run_settings(run.o, run.spec.traits.name);
    s += " rounds=" + std::to_string(run.ao.rounds) +
         " warmup_rounds=" + std::to_string(run.ao.warmup_rounds) + " arms=";
    std::string arms;
    for (const ArmRuntime &arm : run.arms) {
        arms += (arm.index ? ";" : "") + arm.spec->label + ":" + arm.spec->lib;
        for (const auto &[k, v] : arm.spec->env)
            arms += "," + k + "=" + v;
    }
    for (char &c : arms)  // one token in the space-separated settings text
        if (c == ' ')
            c = '_';
    return s + arms;
}

// Where an arm's receiving side binds: the host of --bind (or the fresh one) on an
// ephemeral port for tcp, a fresh path or name for ipc and inproc.
std::string arm_bind(const Options &o) {
    const std::string base = o.bind.empty() ? fresh_endpoint(o.transport) : o.bind;
    return second_endpoint(base, o.transport);
}

// The arm's endpoints as the sending side reaches them: on --connect's host.
std::vector<std::string> arm_endpoints(const Options &o, const std::string &text) {
    std::vector<std::string> eps = split(text, ',');
    if (o.connect.empty())
        return eps;
    Endpoint connect;
    std::string error;
    parse_endpoint(o.connect, connect, error);
    for (auto &ep : eps)
        ep = rehome(ep, connect);
    return eps;
}

// A context of the arm, created with the arm's environment in its namespace.
void *arm_context(ArmRuntime &arm) {
    return with_environment(*arm.lib, arm.spec->env, [&] { return arm.contexts->for_side(); });
}

void read_reports(ArmRuntime &arm, const Side &side, void *ctx) {
    if (!arm.reports && !side.sockets.empty())
        arm.reports = read_library_settings(side.sockets.front(), ctx);
}

// Brackets one slice on the side that measures it: counters and callgrind marks.
class SliceMeter {
public:
    SliceMeter(ArmsRun &run, bool active) : run_(run), active_(active) {}
    void start() {
        if (!active_)
            return;
        before_ = run_.counters.read();
        callgrind_zero();
    }
    void stop(SliceRecord &s) {
        if (!active_)
            return;
        const auto after = run_.counters.read();
        callgrind_dump(label(s));
        if (std::string(run_.counters.source()) != "none")
            s.counters = run_.counters.delta(before_, after);
    }

private:
    // What analysis/testbed/bench/callgrind_slices.py reads back: the slice, and how
    // many messages (or round trips) its instructions cover, warm-up included.
    std::string label(const SliceRecord &s) const {
        const bool thr = s.kind == Kind::thr;
        const std::uint64_t count = thr ? run_.o.count : run_.o.lat_count;
        const std::uint64_t warm = thr ? run_.o.warmup : run_.o.lat_warmup;
        return "arms arm=" + std::to_string(s.arm) + " label=" + run_.arms[s.arm].spec->label +
               " kind=" + to_string(s.kind) + " round=" + std::to_string(s.round) +
               " warmup=" + (s.warmup ? "1" : "0") + " count=" + std::to_string(count) +
               " messages=" + std::to_string(count + warm) +
               " role=" + bench::to_string(run_.o.role);
    }
    ArmsRun &run_;
    bool active_;
    std::vector<std::uint64_t> before_;
};

SideEnv side_env(ArmsRun &run, ArmRuntime &arm, Link &link, Watchdog &wd) {
    SideEnv env{run.o, run.spec, link, wd, *arm.contexts};
    if (run.dealer.active())
        env.warmed = [&run, group = Dealer::arm_group(arm.index)] { run.dealer.release(group); };
    return env;
}

// The threads that appeared since `before` belong to the arm being set up.
void deal_new_threads(ArmsRun &run, const ArmRuntime &arm, const std::vector<int> &before) {
    if (!run.dealer.active())
        return;
    for (int tid : tids_since(before))
        run.dealer.add(Dealer::arm_group(arm.index), tid);
}

void receive_slice(ArmsRun &run, SliceRecord &s, Link &link, Watchdog &wd) {
    ArmRuntime &arm = run.arms[s.arm];
    TableScope scope(arm.lib->table);
    const SideEnv env = side_env(run, arm, link, wd);
    End &b = *arm.receiver->end;
    if (s.kind == Kind::lat) {
        echo_latency(b, env);
        s.count = run.o.lat_count;
        s.warmup_messages = run.o.lat_warmup;
        return;
    }
    Clock::time_point last_arrival{};
    std::optional<std::string> sent_text;
    const ThroughputResult thr = lossy(run.o, run.spec)
                                     ? receive_lossy(b, env, last_arrival, sent_text)
                                     : receive_throughput(b, env, last_arrival);
    if (thr.count == 0)
        exit_verify("throughput slice: no measured message was delivered");
    std::istringstream sent(sent_text ? *sent_text : link.wait(Signal::sent));
    double sender_seconds = 0;
    std::int64_t sender_start_ns = 0;
    sent >> sender_seconds >> sender_start_ns;
    s.count = thr.count;
    s.warmup_messages = thr.warmup;
    s.sent = thr.sent;
    s.receiver_seconds = thr.receiver_seconds;
    s.sender_seconds = sender_seconds;
    if (run.o.process_model != ProcessModel::two_host)
        s.span_seconds = seconds_between(
            Clock::time_point(std::chrono::nanoseconds(sender_start_ns)), last_arrival);
    link.post(Signal::thr_done, exact(thr.receiver_seconds));
}

void send_slice(ArmsRun &run, SliceRecord &s, Link &link, Watchdog &wd) {
    ArmRuntime &arm = run.arms[s.arm];
    TableScope scope(arm.lib->table);
    const SideEnv env = side_env(run, arm, link, wd);
    End &a = *arm.sender->end;
    if (s.kind == Kind::lat) {
        s.lat = measure_latency(a, env);
        s.count = run.o.lat_count;
        s.warmup_messages = run.o.lat_warmup;
        return;
    }
    const SendWindow window = send_throughput(a, env);
    s.count = run.o.count;
    s.warmup_messages = run.o.warmup;
    s.sender_seconds = window.seconds;
    s.receiver_seconds = std::stod(window.receiver_seconds);
}

// A fresh random order of the arms (Fisher-Yates on the run's seeded generator).
std::vector<std::size_t> shuffled(std::size_t n, std::mt19937_64 &rng) {
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i)
        order[i] = i;
    for (std::size_t i = n; i > 1; --i)
        std::swap(order[i - 1], order[rng() % i]);
    return order;
}

}  // namespace

const char *to_string(Kind k) { return k == Kind::thr ? "thr" : "lat"; }

std::string slice_message(const SliceRecord &s) {
    return std::string(to_string(s.kind)) + " " + std::to_string(s.round) + " " +
           (s.warmup ? "1" : "0") + " " + std::to_string(s.arm);
}

bool parse_slice_message(const std::string &text, SliceRecord &out) {
    std::istringstream in(text);
    std::string kind;
    int warmup = 0;
    if (!(in >> kind >> out.round >> warmup >> out.arm) || (kind != "thr" && kind != "lat"))
        return false;
    out.kind = kind == "thr" ? Kind::thr : Kind::lat;
    out.warmup = warmup != 0;
    return true;
}

void run_arms_receiver(ArmsRun &run, Link &link, Watchdog &wd) {
    const Options &o = run.o;
    wd.set_phase("connect");
    std::string hello = arms_settings(run);
    run.dealer.add(Dealer::kSides, current_tid());
    for (ArmRuntime &arm : run.arms) {
        TableScope scope(arm.lib->table);
        const std::vector<int> before = list_tids();
        void *ctx = arm_context(arm);
        arm.receiver = run.spec.make_receiver(ctx, o, arm_bind(o));
        thread_census().attribute_new(before, "library:receiver");
        deal_new_threads(run, arm, before);
        read_reports(arm, *arm.receiver, ctx);
        arm.bound = arm.receiver->bound;
        std::string eps;
        for (const auto &ep : arm.bound)
            eps += (eps.empty() ? "" : ",") + ep;
        hello += "|" + eps;
    }
    link.post(Signal::hello, hello);
    link.wait(Signal::hello_ok);
    wd.set_phase("handshake");
    for (ArmRuntime &arm : run.arms) {
        TableScope scope(arm.lib->table);
        arm.receiver->end->establish(link, false, o.timeout_ms);
    }
    // In one process the sending side measures each slice as a whole, and deals.
    SliceMeter meter(run, o.role == Role::receiver);
    std::optional<std::pair<Kind, std::uint64_t>> round;
    for (;;) {
        wd.set_phase("waiting for the next slice");
        const std::string text = link.wait(Signal::slice);
        if (text == "end")
            break;
        SliceRecord s;
        if (!parse_slice_message(text, s) || s.arm >= run.arms.size())
            exit_error("unexpected slice message from the sender: '" + text + "'");
        if (o.role == Role::receiver && round != std::pair{s.kind, s.round})
            run.dealer.deal();  // a new round: this process's threads start afresh
        round = std::pair{s.kind, s.round};
        meter.start();
        receive_slice(run, s, link, wd);
        meter.stop(s);
        run.receiver_slices.push_back(std::move(s));
    }
    wd.set_phase("end of run");
    link.wait(Signal::finished);
}

void run_arms_sender(ArmsRun &run, Link &link, Watchdog &wd) {
    const Options &o = run.o;
    wd.set_phase("connect");
    const std::vector<std::string> hello = split(link.wait(Signal::hello), '|');
    std::string diff = settings_mismatch(hello.at(0), arms_settings(run));
    if (diff.empty() && hello.size() != run.arms.size() + 1)
        diff = "the receiver reports endpoints of " + std::to_string(hello.size() - 1) + " arms";
    if (!diff.empty()) {
        const std::string why =
            "the receiver and the sender were started with different settings: " + diff;
        link.refuse(why);
        exit_usage(why);
    }
    const std::vector<int> before = list_tids();
    run.dealer.add(Dealer::kSides, current_tid());
    for (ArmRuntime &arm : run.arms) {
        TableScope scope(arm.lib->table);
        const std::vector<int> arm_before = list_tids();
        void *ctx = arm_context(arm);
        arm.sender = run.spec.make_sender(ctx, o, arm_endpoints(o, hello.at(arm.index + 1)));
        read_reports(arm, *arm.sender, ctx);
        deal_new_threads(run, arm, arm_before);
    }
    link.post(Signal::hello_ok);
    wd.set_phase("handshake");
    for (ArmRuntime &arm : run.arms) {
        TableScope scope(arm.lib->table);
        arm.sender->end->establish(link, true, o.timeout_ms);
    }
    thread_census().attribute_new(before, "library:sender");
    SliceMeter meter(run, true);
    std::mt19937_64 rng(run.ao.seed);
    std::vector<Kind> kinds;
    if (o.mode != Mode::lat)
        kinds.push_back(Kind::thr);
    if (o.mode != Mode::thr)
        kinds.push_back(Kind::lat);
    for (Kind kind : kinds) {
        for (std::uint64_t r = 0; r < run.ao.warmup_rounds + run.ao.rounds; ++r) {
            run.dealer.deal();  // in one process: the receiving side's threads too
            for (std::size_t k : shuffled(run.arms.size(), rng)) {
                SliceRecord s;
                s.kind = kind;
                s.round = r;
                s.warmup = r < run.ao.warmup_rounds;
                s.arm = k;
                meter.start();
                link.post(Signal::slice, slice_message(s));
                send_slice(run, s, link, wd);
                meter.stop(s);
                run.sender_slices.push_back(std::move(s));
            }
        }
    }
    link.post(Signal::slice, "end");
    link.post(Signal::finished);
}

}  // namespace bench::arms
