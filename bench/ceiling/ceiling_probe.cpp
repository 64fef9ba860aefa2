// ceiling_probe: what TCP, Unix-domain stream sockets and memcpy can do per message
// size on this host, measured with the bench cells' process model, placement,
// sizes and socket buffers, as one JSON line (schema testbed.ceiling/2). Rows are
// keyed by (transport, msg_size) like the bench results: tcp = TCP, ipc =
// Unix-domain stream socket, inproc = memcpy (the one copy an in-process transfer of
// a sent buffer costs at least).
//
// --role both (default): a receiver and a sender thread of one process, each pinned
// as asked; --role receiver|sender: one side of a two-process run over one endpoint
// (the receiver's line has the throughput rows, the sender's the latency rows).
#include <cstdio>
#include <future>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../common/clock.hpp"
#include "../common/json_writer.hpp"
#include "../common/placement.hpp"
#include "../common/process.hpp"
#include "../common/raw_socket.hpp"
#include "probes.hpp"

using namespace bench;

namespace {

struct Rows {
    std::vector<ThroughputRow> thr;
    std::vector<LatencyRow> lat;
    std::vector<ThroughputRow> memcpy_rows;
};

bool is_stream(const std::string &t) { return t == "tcp" || t == "ipc"; }

std::string fresh_stream_endpoint(const std::string &transport) {
    return transport == "tcp" ? "tcp://127.0.0.1:*" : "ipc://" + unique_tmp_path("ceiling");
}

Endpoint endpoint_of(const std::string &text) {
    Endpoint ep;
    std::string error;
    if (!parse_endpoint(text, ep, error))
        exit_error(error);
    return ep;
}

// The receiving side of every stream transport, in order; each listener's address
// goes to the sending side through `ready`.
void receiving_side(const ProbeOptions &o, std::vector<std::promise<std::string>> &ready,
                    Rows &rows) {
    std::size_t next = 0;
    for (const auto &t : o.transports) {
        if (!is_stream(t))
            continue;
        const std::string where = o.role == Role::both ? fresh_stream_endpoint(t) : o.bind;
        RawListener listener =
            RawListener::at(endpoint_of(where), SocketBuffers{o.sndbuf, o.rcvbuf});
        if (o.role == Role::both)
            ready.at(next++).set_value(listener.endpoint());
        for (auto &row : serve_rows(listener, t, o))
            rows.thr.push_back(std::move(row));
    }
}

void sending_side(const ProbeOptions &o, std::vector<std::promise<std::string>> &ready,
                  Rows &rows) {
    std::size_t next = 0;
    for (const auto &t : o.transports) {
        if (!is_stream(t))
            continue;
        const std::string where =
            o.role == Role::both ? ready.at(next++).get_future().get() : o.connect;
        for (auto &row : drive_rows(endpoint_of(where), o))
            rows.lat.push_back(std::move(row));
    }
    for (const auto &t : o.transports)
        if (t == "inproc" && o.mode != Mode::lat)
            for (std::size_t size : o.sizes)
                rows.memcpy_rows.push_back(
                    ThroughputRow{"inproc", size, memcpy_bandwidth(size, o.bytes)});
}

// Side threads wait after their work until the main thread has read /proc.
std::vector<ThreadInfo> run_sides(const ProbeOptions &o, Rows &rows) {
    std::vector<std::promise<std::string>> ready(o.transports.size());
    std::latch done(o.role == Role::both ? 2 : 1), release(1);
    auto side = [&](const char *name, const char *role, const Pin &pin, auto body) {
        return std::thread([&, name, role, body] {
            name_current_thread(name);
            thread_census().register_self(role);
            if (pin.given())
                pin_current_thread(pin.cpus, role);
            body();
            done.count_down();
            release.wait();
        });
    };
    std::vector<std::thread> threads;
    if (o.role != Role::sender)
        threads.push_back(side("probe-receiver", "receiver", o.pin_receiver,
                               [&] { receiving_side(o, ready, rows); }));
    if (o.role != Role::receiver)
        threads.push_back(
            side("probe-sender", "sender", o.pin_sender, [&] { sending_side(o, ready, rows); }));
    done.wait();
    std::vector<ThreadInfo> census = thread_census().read("unknown");
    release.count_down();
    for (auto &t : threads)
        t.join();
    return census;
}

double rate(const BandwidthResult &r) {
    return r.seconds > 0 ? static_cast<double>(r.bytes) / r.seconds : 0.0;
}

// The best of the streams of one row is its ceiling; every one tried is listed.
void write_throughput(JsonWriter &w, const std::vector<const ThroughputRow *> &tried,
                      std::size_t size) {
    const BandwidthResult *best = &tried.front()->bw;
    for (const auto *t : tried)
        if (rate(t->bw) > rate(*best))
            best = &t->bw;
    const double bps = rate(*best);
    w.begin_object("throughput")
        .value("bytes", best->bytes)
        .value("seconds", best->seconds)
        .value("write_size", static_cast<std::uint64_t>(best->write_size))
        .value("io", to_string(best->io))
        .value("bytes_per_sec", bps)
        .value("mb_per_sec", bps / 1e6)
        .value("msgs_per_sec", bps / static_cast<double>(size))
        .value("mb_unit", "1e6 bytes");
    w.begin_array("tried");
    for (const auto *t : tried)
        w.begin_object()
            .value("write_size", static_cast<std::uint64_t>(t->bw.write_size))
            .value("io", to_string(t->bw.io))
            .value("bytes_per_sec", rate(t->bw))
            .end_object();
    w.end_array().end_object();
}

const char *probe_name(const std::string &t) {
    return t == "tcp" ? "tcp-nodelay" : t == "ipc" ? "unix-stream" : "memcpy";
}

// One row per (transport, size) that this process measured anything for.
void write_rows(JsonWriter &w, const ProbeOptions &o, const Rows &rows) {
    w.begin_array("rows");
    for (const auto &t : o.transports)
        for (std::size_t size : o.sizes) {
            std::vector<const ThroughputRow *> thr;
            const LatencyRow *lat = nullptr;
            for (const auto &r : t == "inproc" ? rows.memcpy_rows : rows.thr)
                if (r.transport == t && r.size == size)
                    thr.push_back(&r);
            for (const auto &r : rows.lat)
                if (r.transport == t && r.size == size)
                    lat = &r;
            if (thr.empty() && !lat)
                continue;
            w.begin_object()
                .value("transport", t)
                .value("probe", probe_name(t))
                .value("msg_size", static_cast<std::uint64_t>(size));
            if (!thr.empty())
                write_throughput(w, thr, size);
            else
                w.null("throughput");
            if (lat) {
                w.begin_object("latency");
                write_latency_fields(w, lat->rtt_half_us);
                w.value("unit", "us").value("measure", "rtt/2").end_object();
            } else {
                w.null("latency");
            }
            w.end_object();
        }
    w.end_array();
}

void write_context(JsonWriter &w, const ProbeOptions &o, const std::vector<ThreadInfo> &threads) {
    w.value("role", to_string(o.role)).value("process_model", to_string(o.process_model));
    w.begin_object("settings")
        .value("sndbuf", o.sndbuf)
        .value("rcvbuf", o.rcvbuf)
        .value("bytes", o.bytes)
        .value("source_messages", o.source_messages)
        .value("lat_count", o.lat_samples);
    w.begin_array("write_sizes");
    for (std::size_t ws : o.write_sizes)
        w.value("", static_cast<std::uint64_t>(ws));
    w.end_array().begin_array("io_waits");
    for (IoWait io : o.io_waits)
        w.value("", to_string(io));
    w.end_array()
        .value("mode", to_string(o.mode))
        .value("bind", o.bind)
        .value("connect", o.connect)
        .end_object();
    w.begin_object("placement");
    for (const auto &[key, pin] :
         {std::pair{"sender", &o.pin_sender}, std::pair{"receiver", &o.pin_receiver}}) {
        if (pin->given())
            w.value(key, pin->asked);
        else
            w.null(key);
    }
    w.value("allowed", o.allowed.str()).end_object();
    w.begin_array("threads");
    for (const auto &t : threads)
        w.begin_object()
            .value("tid", t.tid)
            .value("name", t.name)
            .value("role", t.role)
            .value("cpus", t.cpus)
            .end_object();
    w.end_array();
}

}  // namespace

int main(int argc, char **argv) {
    set_program_name("ceiling_probe");
    const ProbeOptions o = parse_probe_options(argc, argv);
    name_current_thread("probe-main");
    thread_census().register_self("main");
    const Pin &own = o.role == Role::sender ? o.pin_sender : o.pin_receiver;
    if (o.role != Role::both && own.given())
        pin_current_thread(own.cpus, to_string(o.role));
    Rows rows;
    const std::vector<ThreadInfo> threads = run_sides(o, rows);
    JsonWriter w;
    w.begin_object().value("schema", "testbed.ceiling/2").value("clock", kClockName);
    write_context(w, o, threads);
    write_rows(w, o, rows);
    w.end_object();
    cleanup_paths();
    std::printf("%s\n", w.str().c_str());
    return 0;
}
