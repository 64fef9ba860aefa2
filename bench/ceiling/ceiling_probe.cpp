// ceiling_probe: raw TCP loopback, Unix-domain stream and memcpy limits per
// message size, as one JSON line (schema testbed.ceiling/1). Rows are keyed by
// (transport, msg_size) like the benchmark results: tcp = TCP loopback,
// ipc = Unix-domain stream socket, inproc = memcpy (a copy per message is the
// least an in-process transfer of a sent buffer costs).
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "../common/clock.hpp"
#include "../common/json_writer.hpp"
#include "../common/process.hpp"
#include "probes.hpp"

using namespace bench;

namespace {

struct Args {
    std::vector<std::size_t> sizes{64, 1024, 65536, 262144};
    std::uint64_t bytes = 256ULL << 20;
    std::uint64_t lat_samples = 2000;
    int timeout_ms = 10000;
};

[[noreturn]] void usage(const std::string& error) {
    std::fprintf(stderr,
                 "ceiling_probe: %s\n"
                 "usage: ceiling_probe [--sizes N,N,...] [--bytes N] [--lat-count N] [--timeout-ms N]\n"
                 "  --sizes       message sizes in bytes, 1..1073741824 (default 64,1024,65536,262144)\n"
                 "  --bytes       bytes per bandwidth probe (default 268435456)\n"
                 "  --lat-count   round trips per latency probe (default 2000)\n"
                 "  --timeout-ms  per-operation timeout (default 10000)\n",
                 error.c_str());
    std::exit(kExitUsage);
}

std::uint64_t number(std::string_view flag, std::string_view s, std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi)
        usage(std::string(flag) + ": '" + std::string(s) + "' is not an integer in " + std::to_string(lo) + ".." +
              std::to_string(hi));
    return v;
}

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string_view f = argv[i];
        if (f == "--help" || f == "-h") usage("help");
        if (i + 1 >= argc) usage(std::string(f) + " needs a value");
        std::string_view v = argv[++i];
        if (f == "--sizes") {
            a.sizes.clear();
            while (!v.empty()) {
                const auto comma = v.find(',');
                a.sizes.push_back(number(f, v.substr(0, comma), 1, 1ULL << 30));
                v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
            }
            if (a.sizes.empty()) usage("--sizes: give at least one size");
        } else if (f == "--bytes") {
            a.bytes = number(f, v, 1 << 20, 1ULL << 40);
        } else if (f == "--lat-count") {
            a.lat_samples = number(f, v, 1, 10'000'000);
        } else if (f == "--timeout-ms") {
            a.timeout_ms = static_cast<int>(number(f, v, 1, 3'600'000));
        } else {
            usage("unknown option '" + std::string(f) + "'");
        }
    }
    return a;
}

void write_bandwidth(JsonWriter& w, const BandwidthResult& r, std::size_t size) {
    const double bps = r.seconds > 0 ? static_cast<double>(r.bytes) / r.seconds : 0.0;
    w.begin_object("throughput")
        .value("bytes", r.bytes)
        .value("seconds", r.seconds)
        .value("write_size", static_cast<std::uint64_t>(r.write_size))
        .value("bytes_per_sec", bps)
        .value("mb_per_sec", bps / 1e6)
        .value("msgs_per_sec", bps / static_cast<double>(size))
        .value("mb_unit", "1e6 bytes")
        .end_object();
}

void write_row(JsonWriter& w, const char* transport, const char* probe, std::size_t size, const BandwidthResult& bw,
               const LatencySummary* lat) {
    w.begin_object().value("transport", transport).value("probe", probe).value("msg_size", static_cast<std::uint64_t>(size));
    write_bandwidth(w, bw, size);
    if (lat) {
        w.begin_object("latency");
        write_latency_fields(w, *lat);
        w.value("unit", "us").value("measure", "rtt/2").end_object();
    } else {
        w.null("latency");
    }
    w.end_object();
}

}  // namespace

int main(int argc, char** argv) {
    set_program_name("ceiling_probe");
    const Args a = parse(argc, argv);
    JsonWriter w;
    w.begin_object().value("schema", "testbed.ceiling/1").value("clock", kClockName);
    w.value("process_model", "one process, two threads");
    w.begin_array("rows");
    for (std::size_t size : a.sizes) {
        // Big messages get fewer round trips so the probe stays short.
        const std::uint64_t lat_n = size > 65536 ? std::max<std::uint64_t>(1, a.lat_samples / 2) : a.lat_samples;
        for (StreamKind kind : {StreamKind::tcp, StreamKind::unix_socket}) {
            const bool tcp = kind == StreamKind::tcp;
            const BandwidthResult bw = stream_bandwidth(kind, size, a.bytes, a.timeout_ms);
            const LatencySummary lat = stream_round_trip(kind, size, lat_n, a.timeout_ms);
            write_row(w, tcp ? "tcp" : "ipc", tcp ? "tcp-loopback-nodelay" : "unix-stream", size, bw, &lat);
            std::fprintf(stderr, "ceiling_probe: %s %zu B done\n", tcp ? "tcp" : "ipc", size);
        }
        write_row(w, "inproc", "memcpy", size, memcpy_bandwidth(size, a.bytes), nullptr);
    }
    w.end_array().end_object();
    cleanup_paths();
    std::printf("%s\n", w.str().c_str());
    return 0;
}
