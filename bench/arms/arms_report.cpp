#include "arms_report.hpp"

#include <cstdio>
#include <map>

#include "../common/clock.hpp"
#include "../common/json_writer.hpp"
#include "../common/process.hpp"
#include "../common/report_parts.hpp"
#include "valgrind_marks.hpp"

namespace bench::arms {

namespace {

void write_libs(JsonWriter &w, const ArmsRun &run) {
    w.begin_array("libs");
    for (const LoadedLibrary &lib : run.libs)
        w.begin_object()
            .value("label", lib.label)
            .value("path", lib.path)
            .value("loaded_from", lib.loaded_from)
            .value("version", lib.version)
            .value("namespace", static_cast<std::int64_t>(lib.namespace_id))
            .end_object();
    w.end_array();
}

void write_arms(JsonWriter &w, const ArmsRun &run) {
    w.begin_array("arms");
    for (const ArmRuntime &arm : run.arms) {
        w.begin_object().value("label", arm.spec->label).value("lib", arm.spec->lib);
        w.begin_object("env");
        for (const auto &[k, v] : arm.spec->env)
            w.value(k, v);
        w.end_object();
        w.begin_object("library")
            .value("name", arm.lib->label)
            .value("version", arm.lib->version)
            .value("path", arm.lib->path)
            .value("loaded_from", arm.lib->loaded_from)
            .end_object();
        write_library_reports(w, arm.reports.value_or(LibrarySettings{}));
        w.begin_array("bound");
        for (const auto &ep : arm.bound)
            w.value("", ep);
        w.end_array().end_object();
    }
    w.end_array();
}

void write_counters_header(JsonWriter &w, const ArmsRun &run) {
    w.begin_object("counters")
        .value("mode", to_string(run.ao.counters))
        .value("source", run.counters.source());
    w.begin_array("events");
    for (const auto &e : run.counters.events())
        w.value("", e);
    w.end_array();
    w.begin_object("unavailable");
    for (const auto &[name, why] : run.counters.unavailable())
        w.value(name, why);
    w.end_object();
    w.value("scope", "whole process, per slice (one process: the sending side's slice window)");
    w.value("perturbs_timing", run.counters.perturbs_timing());
    w.begin_object("callgrind")
        .value("compiled", kCallgrindCompiled)
        .value("running", run.valgrind)
        .end_object();
    w.end_object();
}

void write_optional(JsonWriter &w, const char *key, const std::optional<double> &v) {
    if (v)
        w.value(key, *v);
    else
        w.null(key);
}

void write_slice(JsonWriter &w, const ArmsRun &run, const SliceRecord &s) {
    w.begin_object()
        .value("arm", static_cast<std::uint64_t>(s.arm))
        .value("kind", to_string(s.kind))
        .value("count", s.count)
        .value("warmup_messages", s.warmup_messages);
    if (s.kind == Kind::thr) {
        write_optional(w, "receiver_seconds", s.receiver_seconds);
        write_optional(w, "sender_seconds", s.sender_seconds);
        write_optional(w, "span_seconds", s.span_seconds);
        if (s.sent)
            w.value("delivery", "lossy").value("sent", *s.sent);
        else
            w.value("delivery", "lossless");
    } else if (s.lat) {
        const LatencySummary &l = s.lat->rtt_half_us;
        w.value("min", l.min)
            .value("p50", l.p50)
            .value("p90", l.p90)
            .value("p99", l.p99)
            .value("p999", l.p999)
            .value("max", l.max)
            .value("mean", l.mean)
            .value("unit", "us")
            .value("measure", "rtt/2");
        write_histogram(w, "histogram", s.lat->rtt_half_ns, "ns", "rtt/2");
    }
    if (s.counters) {
        w.begin_object("counters");
        for (std::size_t i = 0; i < s.counters->size(); ++i)
            w.value(run.counters.events()[i], (*s.counters)[i]);
        w.end_object();
    } else {
        w.null("counters");
    }
    w.end_object();
}

// Consecutive slices of one (kind, round) form a round; its order is theirs.
void write_rounds(JsonWriter &w, const ArmsRun &run, const std::vector<SliceRecord> &slices) {
    w.begin_array("rounds");
    for (std::size_t i = 0; i < slices.size();) {
        std::size_t j = i;
        while (j < slices.size() && slices[j].kind == slices[i].kind &&
               slices[j].round == slices[i].round)
            ++j;
        w.begin_object()
            .value("kind", to_string(slices[i].kind))
            .value("round", slices[i].round)
            .value("warmup", slices[i].warmup);
        w.begin_array("order");
        for (std::size_t k = i; k < j; ++k)
            w.value("", static_cast<std::uint64_t>(slices[k].arm));
        w.end_array();
        w.begin_array("slices");
        for (std::size_t k = i; k < j; ++k)
            write_slice(w, run, slices[k]);
        w.end_array().end_object();
        i = j;
    }
    w.end_array();
}

void write_settings(JsonWriter &w, const ArmsRun &run) {
    const Options &o = run.o;
    w.begin_object("settings")
        .value("hwm_requested", o.hwm)
        .value("io_threads", o.io_threads)
        .value("security", to_string(o.security))
        .value("linger", o.linger)
        .value("sndbuf", o.sndbuf)
        .value("rcvbuf", o.rcvbuf)
        .value("send_buffers", o.send_buffers)
        .value("timeout_ms", o.timeout_ms)
        .value("mode", to_string(o.mode))
        .value("clock", kClockName)
        .value("process_model", to_string(o.process_model))
        .value("contexts_per_arm",
               o.transport == Transport::inproc ? 1 : (o.role == Role::both ? 2 : 1))
        .value("warmup_barrier", true)
        .value("topology", run.spec.topology)
        .value("cxx_flags", BENCH_CXX_FLAGS)
        .value("compiler", compiler_id())
        .value("bind", o.bind)
        .value("connect", o.connect)
        .value("control", o.control);
    w.begin_object("arms")
        .value("rounds", run.ao.rounds)
        .value("warmup_rounds", run.ao.warmup_rounds)
        .value("slice_count", run.ao.slice_count)
        .value("slice_warmup", run.ao.slice_warmup)
        .value("slice_lat_count", run.ao.slice_lat_count)
        .value("slice_lat_warmup", run.ao.slice_lat_warmup)
        .value("seed", run.ao.seed)
        .value("order", "per round, a fresh random order of the arms (seeded); kinds in turn: "
                        "every throughput round, then every latency round")
        .value("namespaces_reserved", namespaces_reserved())
        .value("redeal", run.ao.redeal);
    if (run.ao.redeal)  // what this process's dealer did (arms/dealer.hpp)
        w.begin_object("dealer")
            .value("threads", static_cast<std::uint64_t>(run.dealer.threads()))
            .value("deals", run.dealer.deals())
            .value("pins", run.dealer.pins())
            .value("releases", run.dealer.releases())
            .end_object();
    w.end_object();
    w.end_object();
}

void write_verify(JsonWriter &w, std::size_t slices) {
    const VerifyState &v = verify_state();
    w.begin_object("verify")
        .value("ok", v.ok)
        .value("received", v.received)
        .value("expected", v.expected)
        .value("lat_received", v.lat_received)
        .value("lat_expected", v.lat_expected)
        .value("method", v.method)
        .value("slices", static_cast<std::uint64_t>(slices))
        .value("stragglers", v.stragglers);
    if (!v.error.empty())
        w.value("error", v.error);
    w.end_object();
}

}  // namespace

std::vector<SliceRecord> line_slices(const ArmsRun &run) {
    if (run.o.role == Role::receiver)
        return run.receiver_slices;
    std::vector<SliceRecord> out = run.sender_slices;
    if (run.o.role == Role::both)
        for (std::size_t i = 0; i < out.size() && i < run.receiver_slices.size(); ++i) {
            const SliceRecord &r = run.receiver_slices[i];
            out[i].count = r.count;  // delivered, for a lossy pattern
            out[i].receiver_seconds = r.receiver_seconds;
            out[i].span_seconds = r.span_seconds;
            out[i].sent = r.sent;
        }
    return out;
}

std::string render_arms_json(const ArmsRun &run) {
    const Options &o = run.o;
    const std::vector<SliceRecord> slices = line_slices(run);
    JsonWriter w;
    w.begin_object();
    w.value("schema", "testbed.bench-arms/1");
    w.value("role", to_string(o.role));
    w.value("pattern", run.spec.traits.name).value("transport", to_string(o.transport));
    w.value("msg_size", static_cast<std::uint64_t>(o.size));
    write_libs(w, run);
    write_arms(w, run);
    write_counters_header(w, run);
    write_rounds(w, run, slices);
    write_verify(w, slices.size());
    write_settings(w, run);
    write_placement(w, o);
    write_threads(w, run_info().threads);
    w.begin_object("env");
    for (const auto &[k, v] : relevant_env())
        w.value(k, v);
    w.end_object();
    w.end_object();
    return w.str();
}

std::string render_arms_summary(const ArmsRun &run) {
    struct Pool {
        std::uint64_t count = 0, lat_slices = 0;
        double seconds = 0;
        LatencyHistogram lat;
    };
    std::map<std::size_t, Pool> pools;
    for (const SliceRecord &s : line_slices(run)) {
        if (s.warmup)
            continue;
        Pool &p = pools[s.arm];
        // On one host the span times a slice (bench/README.md, "Slice lengths").
        const std::optional<double> &seconds = s.span_seconds ? s.span_seconds : s.receiver_seconds;
        if (s.kind == Kind::thr && seconds) {
            p.count += s.count;
            p.seconds += *seconds;
        }
        if (s.kind == Kind::lat && s.lat) {
            p.lat.merge(s.lat->rtt_half_ns);
            ++p.lat_slices;
        }
    }
    std::string out = program_name() + " " + run.spec.traits.name + " " +
                      to_string(run.o.transport) + " " + std::to_string(run.o.size) + " B (" +
                      to_string(run.o.role) + "), " + std::to_string(run.ao.rounds) + " rounds:";
    char buf[256];
    for (const ArmRuntime &arm : run.arms) {
        const Pool &p = pools[arm.index];
        out += "\n  " + arm.spec->label + " [" + arm.lib->label + "]:";
        if (p.seconds > 0) {
            std::snprintf(buf, sizeof buf, " thr %.3f M msg/s (pooled, span on one host)",
                          static_cast<double>(p.count) / p.seconds / 1e6);
            out += buf;
        }
        if (p.lat.total() > 0) {
            std::snprintf(buf, sizeof buf, " lat RTT/2 p50 %.2f us p99 %.2f us (histogram)",
                          p.lat.percentile(0.5) / 1000.0, p.lat.percentile(0.99) / 1000.0);
            out += buf;
        }
    }
    out += verify_state().ok ? "\n  verify ok" : "\n  VERIFY FAILED";
    return out;
}

}  // namespace bench::arms
