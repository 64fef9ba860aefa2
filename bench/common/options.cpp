#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace bench {

namespace {

constexpr std::size_t kMaxSize = std::size_t{1} << 30;

const char* g_prog = "bench";

void print_usage(std::FILE* out, const PatternTraits& t) {
    std::fprintf(out,
        "usage: %s --transport %s --size BYTES [options]\n"
        "  %s benchmark: throughput (receiver-timed) and round-trip latency (RTT/2).\n"
        "  --transport T      %s\n"
        "  --size BYTES       message size, %zu..%zu\n"
        "  --count N          measured throughput messages (default by size)\n"
        "  --warmup N         uncounted throughput messages first, >= 1 (default count/20, <= 10000)\n"
        "  --lat-count N      measured round trips (default by size)\n"
        "  --lat-warmup N     uncounted round trips first (default lat-count/10, 10..1000)\n"
        "  --mode M           thr|lat|both (default both)\n"
        "  --io-threads N     ZMQ_IO_THREADS, 1..64 (default $BENCH_IO_THREADS or 1)\n"
        "  --hwm N            ZMQ_SNDHWM and ZMQ_RCVHWM, 0 = unlimited (default 0)\n"
        "  --sndbuf N         ZMQ_SNDBUF bytes (default -1 = OS default)\n"
        "  --rcvbuf N         ZMQ_RCVBUF bytes (default -1 = OS default)\n"
        "  --timeout-ms N     peer/progress timeout, 1..3600000 (default 10000)\n"
        "  test only:\n"
        "  --inject-fault F   skip|corrupt|stall|hang: the sender skips a sequence number,\n"
        "                     corrupts a message, stops half way, or the harness hangs at\n"
        "                     shutdown (expect exit 4, 4, 3, 3)\n"
        "  --no-peer          run the receiver alone (expect exit 3 after --timeout-ms)\n"
        "exit status: 0 ok, 1 library/system error, 2 bad arguments, 3 timeout,\n"
        "             4 verification failed. One JSON line on stdout (also on exit 4).\n",
        g_prog, t.tcp_only ? "tcp" : "tcp|ipc|inproc", t.name,
        t.tcp_only ? "tcp only (the peer is a plain TCP socket)" : "tcp, ipc or inproc",
        t.min_size, kMaxSize);
}

[[noreturn]] void usage_error(const PatternTraits& t, const std::string& msg) {
    std::fprintf(stderr, "%s: %s\n", g_prog, msg.c_str());
    print_usage(stderr, t);
    std::exit(2);
}

std::uint64_t parse_uint(const PatternTraits& t, std::string_view flag, std::string_view text,
                         std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < lo || v > hi)
        usage_error(t, std::string(flag) + ": '" + std::string(text) + "' is not an integer in " +
                           std::to_string(lo) + ".." + std::to_string(hi));
    return v;
}

}  // namespace

const char* to_string(Transport t) {
    switch (t) {
        case Transport::tcp: return "tcp";
        case Transport::ipc: return "ipc";
        case Transport::inproc: return "inproc";
    }
    return "?";
}

const char* to_string(Mode m) {
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
    if (size <= 4096) return 10'000;
    if (size <= 65536) return 5'000;
    return 2'000;
}

Options parse_options(int argc, char** argv, const PatternTraits& t) {
    if (argc > 0 && argv[0]) {
        const char* slash = std::strrchr(argv[0], '/');
        g_prog = slash ? slash + 1 : argv[0];
    }
    Options o;
    bool have_transport = false, have_size = false, have_count = false, have_warmup = false;
    bool have_lat_count = false, have_lat_warmup = false, have_io = false;
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
        if (flag.substr(0, 2) != "--") usage_error(t, "unexpected argument '" + std::string(flag) + "'");
        if (i + 1 >= argc) usage_error(t, std::string(flag) + " needs a value");
        std::string_view val = argv[++i];
        if (flag == "--transport") {
            if (val == "tcp") o.transport = Transport::tcp;
            else if (val == "ipc") o.transport = Transport::ipc;
            else if (val == "inproc") o.transport = Transport::inproc;
            else usage_error(t, "--transport: '" + std::string(val) + "' is not one of tcp, ipc, inproc");
            have_transport = true;
        } else if (flag == "--size") {
            o.size = parse_uint(t, flag, val, t.min_size, kMaxSize);
            have_size = true;
        } else if (flag == "--count") {
            o.count = parse_uint(t, flag, val, 1, 1ULL << 40);
            have_count = true;
        } else if (flag == "--warmup") {
            o.warmup = parse_uint(t, flag, val, 1, 1ULL << 40);
            have_warmup = true;
        } else if (flag == "--lat-count") {
            o.lat_count = parse_uint(t, flag, val, 1, 1ULL << 32);
            have_lat_count = true;
        } else if (flag == "--lat-warmup") {
            o.lat_warmup = parse_uint(t, flag, val, 0, 1ULL << 32);
            have_lat_warmup = true;
        } else if (flag == "--mode") {
            if (val == "thr") o.mode = Mode::thr;
            else if (val == "lat") o.mode = Mode::lat;
            else if (val == "both") o.mode = Mode::both;
            else usage_error(t, "--mode: '" + std::string(val) + "' is not one of thr, lat, both");
        } else if (flag == "--io-threads") {
            o.io_threads = static_cast<int>(parse_uint(t, flag, val, 1, 64));
            have_io = true;
        } else if (flag == "--hwm") {
            o.hwm = static_cast<int>(parse_uint(t, flag, val, 0, 1 << 30));
        } else if (flag == "--sndbuf") {
            o.sndbuf = static_cast<int>(parse_uint(t, flag, val, 0, 1 << 30));
        } else if (flag == "--rcvbuf") {
            o.rcvbuf = static_cast<int>(parse_uint(t, flag, val, 0, 1 << 30));
        } else if (flag == "--timeout-ms") {
            o.timeout_ms = static_cast<int>(parse_uint(t, flag, val, 1, 3'600'000));
        } else if (flag == "--inject-fault") {
            if (val == "skip") o.fault = Fault::skip;
            else if (val == "corrupt") o.fault = Fault::corrupt;
            else if (val == "stall") o.fault = Fault::stall;
            else if (val == "hang") o.fault = Fault::hang;
            else usage_error(t, "--inject-fault: '" + std::string(val) + "' is not one of skip, corrupt, stall, hang");
        } else {
            usage_error(t, "unknown option '" + std::string(flag) + "'");
        }
    }
    if (!have_transport) usage_error(t, "--transport is required");
    if (!have_size) usage_error(t, "--size is required");
    if (t.tcp_only && o.transport != Transport::tcp)
        usage_error(t, std::string("--transport: ") + t.name + " supports tcp only, not '" +
                           to_string(o.transport) + "'");
    if (!have_io) {
        if (const char* env = std::getenv("BENCH_IO_THREADS"); env && *env)
            o.io_threads = static_cast<int>(parse_uint(t, "BENCH_IO_THREADS (environment)", env, 1, 64));
    }
    if (!have_count) o.count = default_count(o.size);
    if (!have_warmup) o.warmup = std::max<std::uint64_t>(1, std::min<std::uint64_t>(o.count / 20, 10'000));
    if (!have_lat_count) o.lat_count = default_lat_count(o.size);
    if (!have_lat_warmup) o.lat_warmup = std::max<std::uint64_t>(10, std::min<std::uint64_t>(o.lat_count / 10, 1000));
    if (o.fault != Fault::none && o.fault != Fault::hang && o.mode == Mode::lat)
        usage_error(t, "--inject-fault acts in the throughput phase; use --mode thr or both");
    if (o.fault != Fault::none && o.count < 4)
        usage_error(t, "--inject-fault needs --count >= 4");
    return o;
}

}  // namespace bench
