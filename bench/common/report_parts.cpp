// Pieces of the JSON line that every runner writes the same way, whatever the
// library: placement, threads, the relevant environment, the compiler.
#include "report_parts.hpp"

#include <algorithm>

#include "json_writer.hpp"

extern char **environ;

namespace bench {

// Environment variables that may change a library's or the harness's behaviour.
std::vector<std::pair<std::string, std::string>> relevant_env() {
    std::vector<std::pair<std::string, std::string>> out;
    for (char **e = environ; e && *e; ++e) {
        std::string kv = *e;
        if (kv.rfind("ZMQ_ASIO_", 0) != 0 && kv.rfind("BENCH_", 0) != 0)
            continue;
        const auto eq = kv.find('=');
        out.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
    }
    std::sort(out.begin(), out.end());
    return out;
}

void write_placement(JsonWriter &w, const Options &o) {
    w.begin_object("placement");
    for (const auto &[key, pin] :
         {std::pair{"sender", &o.pin_sender}, std::pair{"receiver", &o.pin_receiver}}) {
        if (pin->given())
            w.value(key, pin->asked);
        else
            w.null(key);
    }
    w.value("allowed", o.allowed.str()).end_object();
}

void write_threads(JsonWriter &w, const std::vector<ThreadInfo> &threads) {
    w.begin_array("threads");
    for (const ThreadInfo &t : threads)
        w.begin_object()
            .value("tid", t.tid)
            .value("name", t.name)
            .value("role", t.role)
            .value("cpus", t.cpus)
            .end_object();
    w.end_array();
}

namespace {

void write_optional(JsonWriter &w, const char *key, const std::optional<int> &v) {
    if (v)
        w.value(key, *v);
    else
        w.null(key);
}

}  // namespace

void write_library_reports(JsonWriter &w, const LibrarySettings &lib) {
    w.begin_object("library_reports");
    write_optional(w, "sndhwm", lib.sndhwm);
    write_optional(w, "rcvhwm", lib.rcvhwm);
    write_optional(w, "sndbuf", lib.sndbuf);
    write_optional(w, "rcvbuf", lib.rcvbuf);
    write_optional(w, "io_threads", lib.io_threads);
    w.end_object();
}

const char *compiler_id() {
#if defined(__clang__)
    return "clang " __VERSION__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown";
#endif
}

}  // namespace bench
