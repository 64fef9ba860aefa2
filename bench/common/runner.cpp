#include "runner.hpp"

#include <optional>
#include <thread>

#include <zmq.h>

#include "control.hpp"
#include "endpoint.hpp"
#include "payload.hpp"
#include "placement.hpp"
#include "process.hpp"
#include "report.hpp"
#include "side_threads.hpp"
#include "sides.hpp"
#include "zmq_end.hpp"

namespace bench {

namespace {

// What the sides of this process produced.
struct Outcomes {
    std::optional<ReceiverOutcome> receiver;
    std::optional<SenderOutcome> sender;
};

// --no-peer: a lone receiver of the pattern's type must give up with status 3.
[[noreturn]] void run_without_peer(const PatternSpec &spec, const Options &o) {
    ContextPool pool(o.io_threads, true);
    void *s = make_socket(pool.for_side(), spec.receiver_socket_type, o);
    if (spec.receiver_socket_type == ZMQ_SUB)
        set_bytes_option(s, ZMQ_SUBSCRIBE, "", "ZMQ_SUBSCRIBE");
    bind_endpoint(s, o.bind.empty() ? fresh_endpoint(o.transport) : o.bind);
    ZmqEndSpec es;
    es.send_socket = es.recv_socket = s;
    es.recv_routing_id =
        spec.receiver_socket_type == ZMQ_ROUTER || spec.receiver_socket_type == ZMQ_STREAM;
    es.timeout_ms = o.timeout_ms;
    es.sync_len = sync_len_for(o.size);
    ZmqEnd end(es);
    for (;;) {
        const View m = end.recv();  // exits with status 3 after --timeout-ms
        if (m.size > 0)
            exit_error("--no-peer: a message arrived although no peer exists");
    }
}

// Runs this process's side(s) to the end of the last phase and takes the census.
Outcomes run_sides(const PatternSpec &spec, const Options &o, Watchdog &wd, ContextPool &pool) {
    Outcomes out;
    ThreadLinks pair;
    std::unique_ptr<Link> control;
    if (o.role == Role::both)
        pair = make_thread_links();
    else
        control = open_control_link(o, wd);
    Link &receiver_link = o.role == Role::both ? *pair.receiver : *control;
    Link &sender_link = o.role == Role::both ? *pair.sender : *control;
    SideGate gate(o.role == Role::both ? 2 : 1);
    std::vector<std::thread> threads;
    if (o.role != Role::sender)
        threads.push_back(side_thread("bench-receiver", "receiver", o.pin_receiver, gate, [&] {
            out.receiver = run_receiving_side(SideEnv{o, spec, receiver_link, wd, pool});
        }));
    if (o.role != Role::receiver)
        threads.push_back(side_thread("bench-sender", "sender", o.pin_sender, gate, [&] {
            out.sender = run_sending_side(SideEnv{o, spec, sender_link, wd, pool});
        }));
    gate.done.wait();
    run_info().threads = thread_census().read(
        o.role == Role::both ? "library" : std::string("library:") + to_string(o.role));
    gate.release.count_down();
    for (auto &t : threads)
        t.join();
    if (control)
        static_cast<SocketLink &>(*control).close();
    return out;
}

// Closes every socket, then terminates the contexts. A library that hangs here
// must not leave a result behind that looks complete (the watchdog: exit 3).
void shut_down(Outcomes &out, ContextPool &pool, const Options &o, Watchdog &wd) {
    wd.set_phase("shutdown");
    if (o.fault == Fault::hang)  // no timeout of ours applies here: only the watchdog can end this
        for (;;)
            std::this_thread::sleep_for(std::chrono::seconds(1));
    for (Side *side :
         {out.receiver ? &out.receiver->side : nullptr, out.sender ? &out.sender->side : nullptr}) {
        if (!side)
            continue;
        side->end.reset();
        for (void *&s : side->sockets)
            close_socket(s);
    }
    pool.terminate_all();
    wd.stop();
    cleanup_paths();
}

void print_result(const Outcomes &out, const Options &o) {
    std::optional<ThroughputResult> thr = out.receiver ? out.receiver->thr : std::nullopt;
    std::optional<LatencyResult> lat = out.sender ? out.sender->lat : std::nullopt;
    std::optional<SenderThroughput> sender_only;
    if (o.role == Role::sender && out.sender->sender_seconds)
        sender_only = SenderThroughput{o.count, o.warmup, *out.sender->sender_seconds};
    std::printf("%s\n", render_json(thr, lat, sender_only).c_str());
    std::fprintf(stderr, "%s\n", render_summary(thr, lat, sender_only).c_str());
}

}  // namespace

int run_benchmark(int argc, char **argv, const PatternSpec &spec) {
    const Options o = parse_options(argc, argv, spec.traits);
    {
        const std::string prog = argv[0];
        const auto slash = prog.rfind('/');
        set_program_name(slash == std::string::npos ? prog : prog.substr(slash + 1));
    }
    name_current_thread("bench-main");
    thread_census().register_self("main");
    // A role process is one side: pin it whole, so every thread it starts inherits.
    const Pin &own = o.role == Role::sender ? o.pin_sender : o.pin_receiver;
    if (o.role != Role::both && own.given())
        pin_current_thread(own.cpus, to_string(o.role));
    RunInfo info;
    info.pattern = spec.traits.name;
    info.opts = o;
    info.topology = spec.topology;
    set_run_info(info);
    verify_state().method = Verifier(o.size).method();
    set_failure_line([] { return render_json(std::nullopt, std::nullopt); });

    Watchdog wd;
    wd.start(o.timeout_ms + 2000);
    if (o.no_peer)
        run_without_peer(spec, o);
    ContextPool pool(o.io_threads, o.transport == Transport::inproc);
    Outcomes out = run_sides(spec, o, wd, pool);
    run_info().contexts = pool.count();
    if (out.receiver)
        run_info().bound = out.receiver->side.bound;
    shut_down(out, pool, o, wd);
    print_result(out, o);
    return 0;
}

}  // namespace bench
