#include "report.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <zmq.h>

#include "clock.hpp"
#include "json_writer.hpp"
#include "process.hpp"
#include "report_parts.hpp"

#ifndef BENCH_LIB_NAME
#error "BENCH_LIB_NAME must be defined by the build (bench/CMakeLists.txt)"
#endif

namespace bench {

namespace {

std::string library_version() {
    int major = 0, minor = 0, patch = 0;
    zmq_version(&major, &minor, &patch);
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// The shared object that actually provides zmq_version: proves which library ran.
std::string loaded_from() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&zmq_version), &info) && info.dli_fname) {
        char real[4096];
        if (realpath(info.dli_fname, real))
            return real;
        return info.dli_fname;
    }
    return "";
}

void write_throughput(JsonWriter &w, const ThroughputResult &t, std::size_t size) {
    const double rate =
        t.receiver_seconds > 0 ? static_cast<double>(t.count) / t.receiver_seconds : 0.0;
    const double bytes = rate * static_cast<double>(size);
    const double sent = static_cast<double>(t.sent.value_or(t.count));
    w.begin_object("throughput")
        .value("count", t.count)
        .value("warmup", t.warmup)
        .value("receiver_seconds", t.receiver_seconds)
        .value("sender_seconds", t.sender_seconds)
        .value("msgs_per_sec", rate)
        .value("bytes_per_sec", bytes)
        .value("mb_per_sec", bytes / 1e6)
        .value("sender_msgs_per_sec", t.sender_seconds > 0 ? sent / t.sender_seconds : 0.0)
        .value("mb_unit", "1e6 bytes");
    if (t.sent) {  // msgs_per_sec is then the delivered rate
        w.value("delivery", "lossy")
            .value("sent", *t.sent)
            .value("lost", *t.sent - t.count)
            .value("loss", sent > 0 ? (sent - static_cast<double>(t.count)) / sent : 0.0);
    } else {
        w.value("delivery", "lossless");
    }
    if (t.span_seconds) {
        w.value("span_seconds", *t.span_seconds)
            .value("span_msgs_per_sec", static_cast<double>(t.count) / *t.span_seconds);
    } else {
        w.null("span_seconds").null("span_msgs_per_sec");
    }
    w.end_object();
}

void write_sender_throughput(JsonWriter &w, const SenderThroughput &t) {
    w.begin_object("sender_throughput")
        .value("count", t.count)
        .value("warmup", t.warmup)
        .value("sender_seconds", t.sender_seconds)
        .value("sender_msgs_per_sec",
               t.sender_seconds > 0 ? static_cast<double>(t.count) / t.sender_seconds : 0.0)
        .end_object();
}

void write_endpoints(JsonWriter &w, const Options &o) {
    w.value("bind", o.bind).value("connect", o.connect).value("control", o.control);
    w.begin_array("bound");
    for (const auto &ep : run_info().bound)
        w.value("", ep);
    w.end_array();
}

}  // namespace

std::string render_json(const std::optional<ThroughputResult> &thr,
                        const std::optional<LatencyResult> &lat,
                        const std::optional<SenderThroughput> &sender_only) {
    const Options &o = run_info().opts;
    JsonWriter w;
    w.begin_object();
    w.value("schema", "testbed.bench/1");
    w.value("role", to_string(o.role));
    w.begin_object("library")
        .value("name", BENCH_LIB_NAME)
        .value("version", library_version())
        .value("build_id", BENCH_LIB_BUILD_ID)
        .value("link_name", BENCH_LIB_LINK_NAME)
        .value("loaded_from", loaded_from())
        .end_object();
    w.value("pattern", run_info().pattern).value("transport", to_string(o.transport));
    w.value("msg_size", static_cast<std::uint64_t>(o.size));
    if (thr)
        write_throughput(w, *thr, o.size);
    else
        w.null("throughput");
    if (sender_only)
        write_sender_throughput(w, *sender_only);
    if (lat) {
        w.begin_object("latency");
        write_latency_fields(w, lat->rtt_half_us);
        w.value("warmup", lat->warmup).value("unit", "us").value("measure", "rtt/2");
        write_histogram(w, "histogram", lat->rtt_half_ns, "ns", "rtt/2");
        w.end_object();
    } else {
        w.null("latency");
    }
    w.begin_object("verify")
        .value("ok", verify_state().ok)
        .value("received", verify_state().received)
        .value("expected", verify_state().expected)
        .value("lat_received", verify_state().lat_received)
        .value("lat_expected", verify_state().lat_expected)
        .value("stragglers", verify_state().stragglers)
        .value("method", verify_state().method);
    if (!verify_state().error.empty())
        w.value("error", verify_state().error);
    w.end_object();
    const LibrarySettings lib = library_settings();
    w.begin_object("settings")
        .value("hwm", lib.sndhwm.value_or(o.hwm))  // as the library reports it, else as asked
        .value("hwm_requested", o.hwm)             // -1: not set (the library's default)
        .value("io_threads", o.io_threads);
    write_library_reports(w, lib);  // read back from the library (null: no socket yet)
    w.value("security", to_string(o.security))
        .value("linger", o.linger)
        .value("sndbuf", o.sndbuf)
        .value("rcvbuf", o.rcvbuf)
        .value("send_buffers", o.send_buffers)
        .value("timeout_ms", o.timeout_ms)
        .value("mode", to_string(o.mode))
        .value("clock", kClockName)
        .value("process_model", to_string(o.process_model))
        .value("contexts", run_info().contexts)
        .value("warmup_barrier", true)
        .value("topology", run_info().topology)
        .value("cxx_flags", BENCH_CXX_FLAGS)
        .value("compiler", compiler_id());
    write_endpoints(w, o);
    w.end_object();
    write_placement(w, o);
    write_threads(w, run_info().threads);
    w.begin_object("env");
    for (const auto &[k, v] : relevant_env())
        w.value(k, v);
    w.end_object();
    w.end_object();
    return w.str();
}

std::string render_summary(const std::optional<ThroughputResult> &thr,
                           const std::optional<LatencyResult> &lat,
                           const std::optional<SenderThroughput> &sender_only) {
    const Options &o = run_info().opts;
    char buf[512];
    std::string s = program_name() + " [" + BENCH_LIB_NAME + " " + library_version() + "] " +
                    run_info().pattern + " " + to_string(o.transport) + " " +
                    std::to_string(o.size) + " B";
    if (o.role != Role::both)
        s += std::string(" (") + to_string(o.role) + ")";
    s += ":";
    if (sender_only) {
        std::snprintf(buf, sizeof buf, " sender %.3f M msg/s;",
                      static_cast<double>(sender_only->count) / sender_only->sender_seconds / 1e6);
        s += buf;
    }
    if (thr) {
        const double rate = static_cast<double>(thr->count) / thr->receiver_seconds;
        std::snprintf(
            buf, sizeof buf, " thr %.3f M msg/s, %.1f MB/s (MB = 1e6 B), sender %.3f M msg/s;",
            rate / 1e6, rate * static_cast<double>(o.size) / 1e6,
            static_cast<double>(thr->sent.value_or(thr->count)) / thr->sender_seconds / 1e6);
        s += buf;
        if (thr->sent) {
            std::snprintf(buf, sizeof buf, " delivered %llu of %llu sent;",
                          static_cast<unsigned long long>(thr->count),
                          static_cast<unsigned long long>(*thr->sent));
            s += buf;
        }
    }
    if (lat) {
        const auto &l = lat->rtt_half_us;
        std::snprintf(buf, sizeof buf, " lat RTT/2 p50 %.2f us, p99 %.2f us, max %.2f us;", l.p50,
                      l.p99, l.max);
        s += buf;
    }
    s += verify_state().ok ? " verify ok" : " VERIFY FAILED";
    return s;
}

}  // namespace bench
