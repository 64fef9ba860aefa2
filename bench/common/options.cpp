#include "options.hpp"

#include "endpoint.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace bench {

namespace {

constexpr std::size_t kMaxSize = std::size_t{1} << 30;

const char *g_prog = "bench";
const ExtraFlags *g_extra = nullptr;

void print_usage(std::FILE *out, const PatternTraits &t) {
    std::fprintf(
        out,
        "usage: %s --transport %s --size BYTES [options]\n"
        "  %s benchmark: throughput (receiver-timed) and round-trip latency (RTT/2).\n"
        "  --transport T      %s\n"
        "  --size BYTES       message size, %zu..%zu\n"
        "  --count N          measured throughput messages (default by size)\n"
        "  --warmup N         uncounted throughput messages first, >= 1 (default count/20, <= "
        "10000)\n"
        "  --lat-count N      measured round trips (default by size)\n"
        "  --lat-warmup N     uncounted round trips first (default lat-count/10, 10..1000)\n"
        "  --mode M           thr|lat|both (default both)\n"
        "  --io-threads N     ZMQ_IO_THREADS, 1..64 (default $BENCH_IO_THREADS or 1)\n"
        "  --security S       null|curve: the ZMTP mechanism, tcp/ipc only (default "
        "$BENCH_SECURITY\n"
        "                     or null); curve uses fixed bench keys, bound sockets are servers\n"
        "  --hwm N            ZMQ_SNDHWM and ZMQ_RCVHWM, 0 = unlimited (default: not set, the\n"
        "                     library's own default; PUB then drops and the run counts losses)\n"
        "  --send-buffers N   0: send payloads with zmq_send (the library copies them); N >= 2:\n"
        "                     zero copy from a ring of N buffers (zmq_msg_init_data +\n"
        "                     zmq_msg_send, a buffer reused once the library frees it), at most\n"
        "                     4096 (default $BENCH_SEND_BUFFERS or 0)\n"
        "  --sndbuf N         ZMQ_SNDBUF bytes (default -1 = OS default)\n"
        "  --rcvbuf N         ZMQ_RCVBUF bytes (default -1 = OS default)\n"
        "  --timeout-ms N     peer/progress timeout, 1..3600000 (default 10000)\n"
        "  --role R           both|receiver|sender (default both: one process, two threads).\n"
        "                     receiver binds and receives (thr) / echoes (lat); sender connects "
        "and\n"
        "                     sends (thr) / measures round trips (lat); each prints its JSON line\n"
        "  --bind EP          receiver's endpoint (default: both: a fresh one; receiver/sender:\n"
        "                     tcp://127.0.0.1:5555 or ipc:///tmp/bench-5555.ipc)\n"
        "  --connect EP       where the sender connects (default: the bound endpoint)\n"
        "  --control EP       control connection of a two-process run (default: tcp port + 1\n"
        "                     beside --bind/--connect, or the ipc path + .ctl)\n"
        "  --pin-sender CPUS  CPU list (taskset syntax) for the sending side: its thread and the\n"
        "                     IO threads of its context (a role process pins itself)\n"
        "  --pin-receiver CPUS  the same for the receiving side\n"
        "  --process-model M  one-process|two-process|two-host, recorded as given (default from\n"
        "                     --role: both -> one-process, else two-process)\n"
        "  test only:\n"
        "  --inject-fault F   skip|corrupt|stall|hang|late-tail: the sender skips a sequence\n"
        "                     number, corrupts a message, stops half way, the harness hangs at\n"
        "                     shutdown (expect exit 4, 4, 3, 3), or (PUB at a finite HWM) the\n"
        "                     sender says it is done before its last <= 100 messages and sends\n"
        "                     them after the receiver's window ended (exit 0, stragglers)\n"
        "  --no-peer          run the receiver alone (expect exit 3 after --timeout-ms; --role "
        "both)\n"
        "%s"
        "exit status: 0 ok, 1 library/system error, 2 bad arguments, 3 timeout,\n"
        "             4 verification failed. One JSON line on stdout (also on exit 4).\n",
        g_prog, t.tcp_only ? "tcp" : "tcp|ipc|inproc", t.name,
        t.tcp_only ? "tcp only (the peer is a plain TCP socket)" : "tcp, ipc or inproc", t.min_size,
        kMaxSize, g_extra ? g_extra->usage : "");
}

[[noreturn]] void usage_error(const PatternTraits &t, const std::string &msg) {
    std::fprintf(stderr, "%s: %s\n", g_prog, msg.c_str());
    print_usage(stderr, t);
    std::exit(2);
}

std::uint64_t parse_uint(const PatternTraits &t, std::string_view flag, std::string_view text,
                         std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < lo || v > hi)
        usage_error(t, std::string(flag) + ": '" + std::string(text) + "' is not an integer in " +
                           std::to_string(lo) + ".." + std::to_string(hi));
    return v;
}

}  // namespace

const char *to_string(Transport t) {
    switch (t) {
    case Transport::tcp: return "tcp";
    case Transport::ipc: return "ipc";
    case Transport::inproc: return "inproc";
    }
    return "?";
}

const char *to_string(Role r) {
    switch (r) {
    case Role::both: return "both";
    case Role::receiver: return "receiver";
    case Role::sender: return "sender";
    }
    return "?";
}

const char *to_string(ProcessModel p) {
    switch (p) {
    case ProcessModel::one_process: return "one-process";
    case ProcessModel::two_process: return "two-process";
    case ProcessModel::two_host: return "two-host";
    }
    return "?";
}

const char *to_string(Security s) { return s == Security::curve ? "curve" : "null"; }

const char *to_string(Mode m) {
    switch (m) {
    case Mode::thr: return "thr";
    case Mode::lat: return "lat";
    case Mode::both: return "both";
    }
    return "?";
}

std::uint64_t default_count(std::size_t size) {
    // About 500 MB of payload for big messages, capped at 200k messages for small ones.
    const std::uint64_t by_bytes = 500'000'000ULL / (size == 0 ? 1 : size);
    return by_bytes < 2000 ? 2000 : (by_bytes > 200'000 ? 200'000 : by_bytes);
}

std::uint64_t default_lat_count(std::size_t size) {
    if (size <= 4096)
        return 10'000;
    if (size <= 65536)
        return 5'000;
    return 2'000;
}

namespace {

// Which flags were given, so that defaults fill only the rest.
struct Given {
    bool transport = false, size = false, count = false, warmup = false;
    bool lat_count = false, lat_warmup = false, io = false, process_model = false;
    bool security = false, send_buffers = false;
};

template <typename E>
E choose(const PatternTraits &t, std::string_view flag, std::string_view val,
         std::initializer_list<std::pair<const char *, E>> choices) {
    std::string names;
    for (const auto &[name, e] : choices) {
        if (val == name)
            return e;
        names += names.empty() ? name : std::string(", ") + name;
    }
    usage_error(t, std::string(flag) + ": '" + std::string(val) + "' is not one of " + names);
}

Pin parse_pin(const PatternTraits &t, std::string_view flag, std::string_view val) {
    Pin p;
    std::string error;
    if (!CpuList::parse(val, p.cpus, error))
        usage_error(t, std::string(flag) + ": " + error);
    p.asked = std::string(val);
    return p;
}

// The flags of issue 9: who this process is, where it connects, where it runs.
bool parse_placement_flag(Options &o, Given &g, const PatternTraits &t, std::string_view flag,
                          std::string_view val) {
    if (flag == "--role") {
        o.role = choose<Role>(
            t, flag, val,
            {{"both", Role::both}, {"receiver", Role::receiver}, {"sender", Role::sender}});
    } else if (flag == "--process-model") {
        o.process_model = choose<ProcessModel>(t, flag, val,
                                               {{"one-process", ProcessModel::one_process},
                                                {"two-process", ProcessModel::two_process},
                                                {"two-host", ProcessModel::two_host}});
        g.process_model = true;
    } else if (flag == "--bind") {
        o.bind = std::string(val);
    } else if (flag == "--connect") {
        o.connect = std::string(val);
        o.connect_given = true;
    } else if (flag == "--control") {
        o.control = std::string(val);
    } else if (flag == "--pin-sender") {
        o.pin_sender = parse_pin(t, flag, val);
    } else if (flag == "--pin-receiver") {
        o.pin_receiver = parse_pin(t, flag, val);
    } else {
        return false;
    }
    return true;
}

// Flags that take a value; returns false for a flag it does not know.
bool parse_flag(Options &o, Given &g, const PatternTraits &t, std::string_view flag,
                std::string_view val) {
    if (flag == "--transport") {
        o.transport = choose<Transport>(
            t, flag, val,
            {{"tcp", Transport::tcp}, {"ipc", Transport::ipc}, {"inproc", Transport::inproc}});
        g.transport = true;
    } else if (flag == "--size") {
        o.size = parse_uint(t, flag, val, t.min_size, kMaxSize);
        g.size = true;
    } else if (flag == "--count") {
        o.count = parse_uint(t, flag, val, 1, 1ULL << 40);
        g.count = true;
    } else if (flag == "--warmup") {
        o.warmup = parse_uint(t, flag, val, 1, 1ULL << 40);
        g.warmup = true;
    } else if (flag == "--lat-count") {
        o.lat_count = parse_uint(t, flag, val, 1, 1ULL << 32);
        g.lat_count = true;
    } else if (flag == "--lat-warmup") {
        o.lat_warmup = parse_uint(t, flag, val, 0, 1ULL << 32);
        g.lat_warmup = true;
    } else if (flag == "--mode") {
        o.mode = choose<Mode>(t, flag, val,
                              {{"thr", Mode::thr}, {"lat", Mode::lat}, {"both", Mode::both}});
    } else if (flag == "--security") {
        o.security =
            choose<Security>(t, flag, val, {{"null", Security::null}, {"curve", Security::curve}});
        g.security = true;
    } else if (flag == "--io-threads") {
        o.io_threads = static_cast<int>(parse_uint(t, flag, val, 1, 64));
        g.io = true;
    } else if (flag == "--hwm") {
        o.hwm = static_cast<int>(parse_uint(t, flag, val, 0, 1 << 30));
    } else if (flag == "--send-buffers") {
        o.send_buffers = static_cast<int>(parse_uint(t, flag, val, 0, 4096));
        g.send_buffers = true;
    } else if (flag == "--sndbuf") {
        o.sndbuf = static_cast<int>(parse_uint(t, flag, val, 0, 1 << 30));
    } else if (flag == "--rcvbuf") {
        o.rcvbuf = static_cast<int>(parse_uint(t, flag, val, 0, 1 << 30));
    } else if (flag == "--timeout-ms") {
        o.timeout_ms = static_cast<int>(parse_uint(t, flag, val, 1, 3'600'000));
    } else if (flag == "--inject-fault") {
        o.fault = choose<Fault>(t, flag, val,
                                {{"skip", Fault::skip},
                                 {"corrupt", Fault::corrupt},
                                 {"stall", Fault::stall},
                                 {"hang", Fault::hang},
                                 {"late-tail", Fault::late_tail}});
    } else {
        return parse_placement_flag(o, g, t, flag, val);
    }
    return true;
}

// An endpoint flag must parse and use the run's transport.
void check_endpoint(const PatternTraits &t, const char *flag, const std::string &text,
                    Transport transport) {
    if (text.empty())
        return;
    Endpoint ep;
    std::string error;
    if (!parse_endpoint(text, ep, error))
        usage_error(t, std::string(flag) + ": " + error);
    if (ep.scheme != to_string(transport))
        usage_error(t, std::string(flag) + ": '" + text + "' is not a " + to_string(transport) +
                           " endpoint (--transport " + to_string(transport) + ")");
}

// A CPU outside the process's affinity cannot be honoured: refuse it (exit 2).
void check_pin(const PatternTraits &t, const char *flag, const Pin &pin, const CpuList &allowed) {
    if (!pin.given())
        return;
    const CpuList missing = pin.cpus.missing_from(allowed);
    if (!missing.empty())
        usage_error(t, std::string(flag) + ": CPU(s) " + missing.str() +
                           " not available to this process (allowed: " + allowed.str() + ")");
}

void finish_roles(Options &o, const Given &g, const PatternTraits &t) {
    const bool split = o.role != Role::both;
    if (split && o.transport == Transport::inproc)
        usage_error(t, "--role " + std::string(to_string(o.role)) +
                           ": inproc works only inside one process (--role both)");
    if (split && o.no_peer)
        usage_error(t, "--no-peer runs a lone receiver inside one process (--role both)");
    if (!g.process_model)
        o.process_model = split ? ProcessModel::two_process : ProcessModel::one_process;
    if (split == (o.process_model == ProcessModel::one_process))
        usage_error(t, std::string("--process-model ") + to_string(o.process_model) +
                           " does not fit --role " + to_string(o.role) +
                           " (one-process needs --role both; two-process/two-host a role)");
    if (o.role == Role::receiver && o.connect_given)
        usage_error(t, "--connect is for --role sender or both");
    if (o.role == Role::sender && !o.bind.empty())
        usage_error(t, "--bind is for --role receiver or both");
    check_endpoint(t, "--bind", o.bind, o.transport);
    check_endpoint(t, "--connect", o.connect, o.transport);
    if (!split)
        return;
    // Both processes must agree without talking first: fixed defaults per transport.
    const std::string fixed =
        o.transport == Transport::tcp ? "tcp://127.0.0.1:5555" : "ipc:///tmp/bench-5555.ipc";
    std::string &mine = o.role == Role::receiver ? o.bind : o.connect;
    if (mine.empty())
        mine = fixed;
    if (o.control.empty()) {
        Endpoint data, control;
        std::string error;
        parse_endpoint(mine, data, error);
        if (!derive_control(data, control, error))
            usage_error(t, (o.role == Role::receiver ? "--bind: " : "--connect: ") + error);
        o.control = control.text();
    } else {
        Endpoint control;
        std::string error;
        if (!parse_endpoint(o.control, control, error) || control.scheme == "inproc")
            usage_error(t, "--control: " +
                               (error.empty() ? "'" + o.control + "' must be tcp or ipc" : error));
    }
}

// --security, else $BENCH_SECURITY (so a sweep can make it an env axis). CURVE is a
// stream mechanism: inproc has none in libzmq and STREAM's peer is raw TCP.
void finish_security(Options &o, const Given &g, const PatternTraits &t) {
    if (!g.security) {
        if (const char *env = std::getenv("BENCH_SECURITY"); env && *env)
            o.security = choose<Security>(t, "BENCH_SECURITY (environment)", env,
                                          {{"null", Security::null}, {"curve", Security::curve}});
    }
    if (o.security == Security::null)
        return;
    if (o.transport == Transport::inproc)
        usage_error(t, "--security curve needs tcp or ipc, not inproc");
    if (t.tcp_only)
        usage_error(t, std::string("--security curve: ") + t.name + " talks to a raw TCP peer");
}

void finish_counts(Options &o, const Given &g, const PatternTraits &t) {
    if (!g.io) {
        if (const char *env = std::getenv("BENCH_IO_THREADS"); env && *env)
            o.io_threads =
                static_cast<int>(parse_uint(t, "BENCH_IO_THREADS (environment)", env, 1, 64));
    }
    finish_security(o, g, t);
    if (!g.send_buffers) {
        if (const char *env = std::getenv("BENCH_SEND_BUFFERS"); env && *env)
            o.send_buffers =
                static_cast<int>(parse_uint(t, "BENCH_SEND_BUFFERS (environment)", env, 0, 4096));
    }
    // The receiving side holds the last message it received until its next receive,
    // and in one process (inproc) that is the sender's buffer: one buffer would wait
    // for itself.
    if (o.send_buffers == 1)
        usage_error(t, "--send-buffers 1: a ring needs at least 2 buffers (a receiver in the "
                       "same process holds the last message it received)");
    if (o.send_buffers > 0 && t.tcp_only)
        usage_error(t, std::string("--send-buffers: ") + t.name +
                           "'s sending side is a plain TCP peer, not a ZeroMQ socket");
    if (!g.count)
        o.count = default_count(o.size);
    if (!g.warmup)
        o.warmup = std::max<std::uint64_t>(1, std::min<std::uint64_t>(o.count / 20, 10'000));
    if (!g.lat_count)
        o.lat_count = default_lat_count(o.size);
    if (!g.lat_warmup)
        o.lat_warmup = std::max<std::uint64_t>(10, std::min<std::uint64_t>(o.lat_count / 10, 1000));
    if (o.fault != Fault::none && o.fault != Fault::hang && o.mode == Mode::lat)
        usage_error(t, "--inject-fault acts in the throughput phase; use --mode thr or both");
    if (o.fault != Fault::none && o.count < 4)
        usage_error(t, "--inject-fault needs --count >= 4");
    if (o.fault == Fault::late_tail && !(t.drops_at_hwm && o.hwm != 0))
        usage_error(t, "--inject-fault late-tail needs a pattern that drops at a finite HWM "
                       "(PUBSUB without --hwm 0): a lossless receiver waits for every message");
    // Losses are counted by the sequence number in bytes 0-7 of every message.
    if (t.drops_at_hwm && o.hwm != 0 && o.size < 8 && o.mode != Mode::lat)
        usage_error(t, std::string(t.name) +
                           " drops at a finite HWM and counts the losses by sequence "
                           "number: --size >= 8, or --hwm 0 (unlimited)");
}

}  // namespace

Options parse_options(int argc, char **argv, const PatternTraits &t, const ExtraFlags *extra) {
    g_extra = extra;
    if (argc > 0 && argv[0]) {
        const char *slash = std::strrchr(argv[0], '/');
        g_prog = slash ? slash + 1 : argv[0];
    }
    Options o;
    Given g;
    for (int i = 1; i < argc; ++i) {
        std::string_view flag = argv[i];
        if (flag == "--help" || flag == "-h") {
            print_usage(stdout, t);
            std::exit(0);
        }
        if (flag == "--no-peer") {
            o.no_peer = true;
            continue;
        }
        if (flag.substr(0, 2) != "--")
            usage_error(t, "unexpected argument '" + std::string(flag) + "'");
        if (i + 1 >= argc)
            usage_error(t, std::string(flag) + " needs a value");
        if (extra) {
            std::string error;
            const auto outcome = extra->take(flag, argv[i + 1], error);
            if (outcome == ExtraFlags::Refused)
                usage_error(t, error);
            if (outcome == ExtraFlags::Taken) {
                ++i;
                continue;
            }
        }
        if (!parse_flag(o, g, t, flag, argv[++i]))
            usage_error(t, "unknown option '" + std::string(flag) + "'");
    }
    if (!g.transport)
        usage_error(t, "--transport is required");
    if (!g.size)
        usage_error(t, "--size is required");
    if (t.tcp_only && o.transport != Transport::tcp)
        usage_error(t, std::string("--transport: ") + t.name + " supports tcp only, not '" +
                           to_string(o.transport) + "'");
    finish_roles(o, g, t);
    o.allowed = allowed_cpus();
    check_pin(t, "--pin-sender", o.pin_sender, o.allowed);
    check_pin(t, "--pin-receiver", o.pin_receiver, o.allowed);
    finish_counts(o, g, t);
    if (extra && extra->finish)
        if (const std::string error = extra->finish(o); !error.empty())
            usage_error(t, error);
    return o;
}

}  // namespace bench
