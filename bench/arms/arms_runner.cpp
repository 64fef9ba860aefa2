// run_benchmark for bench_arms_<pattern>: the same pattern sources as
// bench_<pattern> link against this runner instead of common/runner.cpp. It loads
// the --lib libraries into namespaces of their own, builds every arm in this
// process (or process pair), and runs the rounds of slices (arm_sides.cpp).
#include <cstdio>
#include <thread>

#include "../common/control.hpp"
#include "../common/payload.hpp"
#include "../common/placement.hpp"
#include "../common/process.hpp"
#include "../common/runner.hpp"
#include "../common/side_threads.hpp"
#include "../common/zmq_end.hpp"
#include "arm_sides.hpp"
#include "arms_report.hpp"
#include "valgrind_marks.hpp"

namespace bench {

namespace {

arms::ArmsRun *g_run = nullptr;

std::string failure_line() { return g_run ? arms::render_arms_json(*g_run) : "{}"; }

void build_arms(arms::ArmsRun &run) {
    for (std::size_t i = 0; i < run.ao.arms.size(); ++i) {
        arms::ArmRuntime arm;
        arm.index = i;
        arm.spec = &run.ao.arms[i];
        arm.lib = &run.libs[arm.spec->lib_index];
        // tcp/ipc: each side its own context; inproc: the arm's one, shared.
        arm.contexts =
            std::make_unique<ContextPool>(run.o.io_threads, run.o.transport == Transport::inproc);
        run.arms.push_back(std::move(arm));
    }
}

void run_sides(arms::ArmsRun &run, Watchdog &wd) {
    const Options &o = run.o;
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
            arms::prepare_thread(run.libs);
            arms::run_arms_receiver(run, receiver_link, wd);
        }));
    if (o.role != Role::receiver)
        threads.push_back(side_thread("bench-sender", "sender", o.pin_sender, gate, [&] {
            arms::prepare_thread(run.libs);
            arms::run_arms_sender(run, sender_link, wd);
        }));
    gate.done.wait();
    run_info().threads = thread_census().read(
        o.role == Role::both ? "library" : std::string("library:") + to_string(o.role));
    gate.release.count_down();
    for (auto &t : threads)
        t.join();
    if (control)
        static_cast<SocketLink &>(*control).close();
}

// Every arm's sockets closed, then its contexts terminated, each through its own
// library. A library that hangs here trips the watchdog (exit 3).
void shut_down(arms::ArmsRun &run, Watchdog &wd) {
    wd.set_phase("shutdown");
    if (run.o.fault == Fault::hang)
        for (;;)
            std::this_thread::sleep_for(std::chrono::seconds(1));
    for (arms::ArmRuntime &arm : run.arms) {
        arms::TableScope scope(arm.lib->table);
        for (auto *side : {&arm.receiver, &arm.sender}) {
            if (!*side)
                continue;
            (*side)->end.reset();
            for (void *&s : (*side)->sockets)
                close_socket(s);
        }
        arm.contexts->terminate_all();
    }
    wd.stop();
    cleanup_paths();
}

}  // namespace

int run_benchmark(int argc, char **argv, const PatternSpec &spec) {
    arms::ArmsOptions ao;
    const ExtraFlags extra = arms::arms_flags(ao);
    const Options o = parse_options(argc, argv, spec.traits, &extra);
    {
        const std::string prog = argv[0];
        const auto slash = prog.rfind('/');
        set_program_name(slash == std::string::npos ? prog : prog.substr(slash + 1));
    }
    // The counters first, opened while this is the only thread, so that every later
    // thread inherits them.
    arms::Counters counters;
    counters.open(ao.counters);
    name_current_thread("bench-main");
    thread_census().register_self("main");
    const Pin &own = o.role == Role::sender ? o.pin_sender : o.pin_receiver;
    if (o.role != Role::both && own.given())
        pin_current_thread(own.cpus, to_string(o.role));
    RunInfo info;
    info.pattern = spec.traits.name;
    info.opts = o;
    info.topology = spec.topology;
    set_run_info(info);
    verify_state().method = Verifier(o.size).method();

    arms::ArmsRun run{o, ao, spec, counters, {}, {}, {}, {}, arms::running_on_valgrind(), {}};
    run.libs = arms::load_libraries(ao.libs, argv);  // may re-execute (namespaces.hpp)
    // Its own stream, so that re-dealing leaves the arms' order as the seed gave it.
    run.dealer.configure(ao.redeal, ao.seed ^ 0x9e3779b97f4a7c15ULL);
    build_arms(run);
    g_run = &run;
    set_failure_line(failure_line);

    Watchdog wd;
    wd.start(o.timeout_ms + 2000);
    run_sides(run, wd);
    shut_down(run, wd);
    std::printf("%s\n", arms::render_arms_json(run).c_str());
    std::fprintf(stderr, "%s\n", arms::render_arms_summary(run).c_str());
    return 0;
}

}  // namespace bench
