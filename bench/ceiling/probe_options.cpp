#include "probe_options.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "../common/endpoint.hpp"
#include "../common/process.hpp"

namespace bench {

namespace {

[[noreturn]] void usage(const std::string &error) {
    std::fprintf(
        stderr,
        "ceiling_probe: %s\n"
        "usage: ceiling_probe [options]\n"
        "  --sizes N,N,...      message sizes in bytes, 1..1073741824 (default "
        "64,1024,65536,262144)\n"
        "  --transports T,...   tcp, ipc, inproc (default all; a role process: one of tcp, ipc)\n"
        "  --bytes N            bytes per throughput row, >= 1 MiB (default 268435456)\n"
        "  --lat-count N        round trips per latency row (default 2000)\n"
        "  --write-sizes N,...  write sizes to try, the best counts (default "
        "65536,262144,1048576)\n"
        "  --io-waits W,...     ways of waiting to try: blocking, poll, coalesce, handoff (default "
        "all)\n"
        "  --source-messages N  the sender writes from a ring of N message-sized buffers,\n"
        "                       1..4096 (default 1: one buffer)\n"
        "  --mode M             thr|lat|both (default both)\n"
        "  --sndbuf N --rcvbuf N  SO_SNDBUF/SO_RCVBUF like the cells' --sndbuf/--rcvbuf (default "
        "OS)\n"
        "  --timeout-ms N       per-operation timeout (default 10000)\n"
        "  --role R             both|receiver|sender (default both: one process, two threads)\n"
        "  --bind EP --connect EP  the stream endpoint of a role process (tcp:// or ipc://)\n"
        "  --pin-sender CPUS --pin-receiver CPUS   as the bench's (taskset list syntax)\n"
        "  --process-model M    one-process|two-process|two-host (default from --role)\n",
        error.c_str());
    std::exit(kExitUsage);
}

std::uint64_t number(std::string_view flag, std::string_view s, std::uint64_t lo,
                     std::uint64_t hi) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi)
        usage(std::string(flag) + ": '" + std::string(s) + "' is not an integer in " +
              std::to_string(lo) + ".." + std::to_string(hi));
    return v;
}

std::vector<std::string> list(std::string_view flag, std::string_view v) {
    std::vector<std::string> out;
    while (!v.empty()) {
        const auto comma = v.find(',');
        out.emplace_back(v.substr(0, comma));
        v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
    }
    if (out.empty())
        usage(std::string(flag) + ": give at least one value");
    return out;
}

Pin pin(std::string_view flag, std::string_view v) {
    Pin p;
    std::string error;
    if (!CpuList::parse(v, p.cpus, error))
        usage(std::string(flag) + ": " + error);
    p.asked = std::string(v);
    return p;
}

template <typename E>
E pick(std::string_view flag, std::string_view v,
       std::initializer_list<std::pair<const char *, E>> choices) {
    for (const auto &[name, e] : choices)
        if (v == name)
            return e;
    usage(std::string(flag) + ": '" + std::string(v) + "' is not a valid choice");
}

void parse_flag(ProbeOptions &a, std::string_view f, std::string_view v, bool &model_given) {
    if (f == "--sizes") {
        a.sizes.clear();
        for (const auto &s : list(f, v))
            a.sizes.push_back(number(f, s, 1, 1ULL << 30));
    } else if (f == "--transports") {
        a.transports = list(f, v);
        for (const auto &t : a.transports)
            if (t != "tcp" && t != "ipc" && t != "inproc")
                usage("--transports: '" + t + "' is not tcp, ipc or inproc");
    } else if (f == "--bytes")
        a.bytes = number(f, v, 1 << 20, 1ULL << 40);
    else if (f == "--io-waits") {
        a.io_waits.clear();
        for (const auto &w : list(f, v)) {
            IoWait io{};
            if (!io_wait_from_string(w, io))
                usage("--io-waits: '" + w + "' is not blocking, poll, coalesce or handoff");
            a.io_waits.push_back(io);
        }
    } else if (f == "--lat-count")
        a.lat_samples = number(f, v, 1, 10'000'000);
    else if (f == "--write-sizes") {
        a.write_sizes.clear();
        for (const auto &s : list(f, v))
            a.write_sizes.push_back(number(f, s, 1, 1ULL << 30));
    } else if (f == "--source-messages")
        a.source_messages = number(f, v, 1, 4096);
    else if (f == "--timeout-ms")
        a.timeout_ms = static_cast<int>(number(f, v, 1, 3'600'000));
    else if (f == "--sndbuf")
        a.sndbuf = static_cast<int>(number(f, v, 0, 1 << 30));
    else if (f == "--rcvbuf")
        a.rcvbuf = static_cast<int>(number(f, v, 0, 1 << 30));
    else if (f == "--mode")
        a.mode = pick<Mode>(f, v, {{"thr", Mode::thr}, {"lat", Mode::lat}, {"both", Mode::both}});
    else if (f == "--role")
        a.role = pick<Role>(
            f, v, {{"both", Role::both}, {"receiver", Role::receiver}, {"sender", Role::sender}});
    else if (f == "--process-model") {
        a.process_model = pick<ProcessModel>(f, v,
                                             {{"one-process", ProcessModel::one_process},
                                              {"two-process", ProcessModel::two_process},
                                              {"two-host", ProcessModel::two_host}});
        model_given = true;
    } else if (f == "--bind")
        a.bind = std::string(v);
    else if (f == "--connect")
        a.connect = std::string(v);
    else if (f == "--pin-sender")
        a.pin_sender = pin(f, v);
    else if (f == "--pin-receiver")
        a.pin_receiver = pin(f, v);
    else
        usage("unknown option '" + std::string(f) + "'");
}

// A role process streams over one endpoint: its transport is the probe's only one.
void finish_role(ProbeOptions &a) {
    const bool split = a.role != Role::both;
    const std::string &mine = a.role == Role::receiver ? a.bind : a.connect;
    if (!split) {
        if (!a.bind.empty() || !a.connect.empty())
            usage("--bind/--connect are for --role receiver/sender");
        return;
    }
    if (mine.empty())
        usage(std::string(a.role == Role::receiver ? "--bind" : "--connect") +
              " is required with --role " + to_string(a.role));
    Endpoint ep;
    std::string error;
    if (!parse_endpoint(mine, ep, error) || ep.scheme == "inproc" ||
        (ep.scheme == "tcp" && ep.port == "*"))
        usage((a.role == Role::receiver ? "--bind: " : "--connect: ") +
              (error.empty() ? "'" + mine + "' must be tcp://HOST:PORT (fixed port) or ipc://PATH"
                             : error));
    a.transports = {ep.scheme};
}

}  // namespace

ProbeOptions parse_probe_options(int argc, char **argv) {
    ProbeOptions a;
    bool model_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view f = argv[i];
        if (f == "--help" || f == "-h")
            usage("help");
        if (i + 1 >= argc)
            usage(std::string(f) + " needs a value");
        parse_flag(a, f, argv[++i], model_given);
    }
    finish_role(a);
    const bool split = a.role != Role::both;
    if (!model_given)
        a.process_model = split ? ProcessModel::two_process : ProcessModel::one_process;
    if (split == (a.process_model == ProcessModel::one_process))
        usage(std::string("--process-model ") + to_string(a.process_model) +
              " does not fit --role " + to_string(a.role));
    a.allowed = allowed_cpus();
    for (const auto &[flag, p] :
         {std::pair{"--pin-sender", &a.pin_sender}, std::pair{"--pin-receiver", &a.pin_receiver}}) {
        const CpuList missing = p->cpus.missing_from(a.allowed);
        if (p->given() && !missing.empty())
            usage(std::string(flag) + ": CPU(s) " + missing.str() +
                  " not available to this process (allowed: " + a.allowed.str() + ")");
    }
    return a;
}

}  // namespace bench
