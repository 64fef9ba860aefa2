// fault_driver: one side of a faults cell (or of a soak pair). One source for every
// library; the runner (analysis/testbed/faults) starts two of these with a fault proxy
// between them, injects the faults, then accounts for every message from the two
// processes' record logs. stdout: "BOUND <endpoint>" (a bound side), "READY", and at
// the end one line "DONE <json>". Exit 0, 2 bad usage, 3 a zmq call failed.
#include "clock.hpp"
#include "event_log.hpp"
#include "options.hpp"
#include "proc_stats.hpp"
#include "record_log.hpp"
#include "roles.hpp"

#include <zmq.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#ifndef FAULTS_LIB_NAME
#error "FAULTS_LIB_NAME names the library this driver was built against"
#endif

namespace {

std::uint64_t run_role(faults::Context &c) {
    using faults::Pattern;
    using faults::Role;
    const bool send = c.options.role == Role::send;
    if (c.options.pattern == Pattern::req_rep)
        return send ? faults::run_req_client(c) : faults::run_rep_server(c);
    return send ? faults::run_stream_sender(c) : faults::run_stream_receiver(c);
}

}  // namespace

int main(int argc, char **argv) {
    const faults::Options o = faults::parse_options(argc, argv);
    if (o.seed_rand)
        std::srand(o.rand_seed);  // before any library call can draw (options.hpp)
    faults::RecordLog records(o.log_path);
    faults::EventLog events(o.events_path);
    int major = 0, minor = 0, patch = 0;
    zmq_version(&major, &minor, &patch);
    events.line("start", "\"library\":\"" FAULTS_LIB_NAME "\",\"pid\":" +
                             std::to_string(::getpid()) + ",\"epoch\":" + std::to_string(o.epoch) +
                             (o.seed_rand ? ",\"rand_seed\":" + std::to_string(o.rand_seed) : ""));
    std::uint64_t count = 0;
    int peak_fds = 0;
    {
        faults::ProcSampler sampler(events, o.sample_ms);
        void *ctx = zmq_ctx_new();
        faults::Context c{ctx, o, records, events};
        count = run_role(c);
        events.phase("terminating");
        zmq_ctx_term(ctx);
        events.phase("terminated");
        peak_fds = sampler.peak_fds();
    }
    const faults::ProcNow now = faults::read_proc();
    std::printf("DONE {\"library\":\"%s\",\"zmq_version\":\"%d.%d.%d\",\"role\":\"%s\","
                "\"pattern\":\"%s\",\"epoch\":%u,\"count\":%llu,\"peak_rss_kb\":%ld,"
                "\"peak_fds\":%d}\n",
                FAULTS_LIB_NAME, major, minor, patch,
                o.role == faults::Role::send ? "send" : "recv", faults::pattern_name(o.pattern),
                o.epoch, static_cast<unsigned long long>(count), now.hwm_kb, peak_fds);
    std::fflush(stdout);
    return 0;
}
