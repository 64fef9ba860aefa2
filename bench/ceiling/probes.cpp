#include "probes.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "../common/clock.hpp"
#include "../common/process.hpp"
#include "handoff.hpp"
#include "stream_io.hpp"

namespace bench {

namespace {

enum class RowKind : std::uint32_t { done = 0, throughput = 1, latency = 2 };

// The first bytes of every row's connection (native byte order: both ends run the
// same binary; two hosts of different endianness are not supported).
struct Header {
    std::uint32_t magic = 0x4345494c;  // "CEIL"
    RowKind kind = RowKind::done;
    std::uint64_t size = 0;
    std::uint64_t warm = 0;   // throughput: uncounted bytes first; latency: uncounted round trips
    std::uint64_t count = 0;  // throughput: counted bytes; latency: counted round trips
    std::uint64_t write = 0;  // throughput: bytes per write (the receiver reads as much)
    std::uint64_t io = 0;     // throughput: IoWait both sides use
};

SocketBuffers buffers_of(const ProbeOptions &o) { return SocketBuffers{o.sndbuf, o.rcvbuf}; }

// Reads exactly n bytes; a peer that went away ends the probe with exit 3.
void read_full(RawSocket &s, void *data, std::size_t n, const char *during) {
    char *p = static_cast<char *>(data);
    while (n > 0) {
        const std::size_t r = s.read_some(p, n);
        if (r == 0)
            exit_timeout(std::string("the peer closed the connection during ") + during);
        p += r;
        n -= r;
    }
}

BandwidthResult receive_handed_over(RawSocket &sock, const Header &h) {
    const HandoffResult r =
        receive_with_handoff(sock, h.warm, h.count, static_cast<std::size_t>(h.write));
    const char ack = 'k';
    sock.write_all(&ack, 1);
    return BandwidthResult{r.counted_bytes, seconds_between(r.start, r.end),
                           static_cast<std::size_t>(h.write), IoWait::handoff};
}

BandwidthResult receive_stream(RawSocket &sock, const Header &h, int timeout_ms) {
    if (static_cast<IoWait>(h.io) == IoWait::handoff)
        return receive_handed_over(sock, h);
    StreamIo s(sock, static_cast<IoWait>(h.io), timeout_ms);
    std::vector<char> buf(static_cast<std::size_t>(h.write));
    const std::uint64_t total = h.warm + h.count;
    std::uint64_t got = 0, got_at_start = 0;
    bool started = h.warm == 0;
    Clock::time_point start = Clock::now();
    while (got < total) {
        // Reads stop at the warm-up boundary, so the window counts exactly h.count bytes.
        const std::uint64_t limit = started ? total - got : h.warm - got;
        const std::size_t r = s.read_some(
            buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), limit)));
        if (r == 0)
            exit_timeout("the sender closed the connection during a throughput row");
        got += r;
        if (!started && got >= h.warm) {
            // Bytes up to here were sent before the clock started: not counted.
            start = Clock::now();
            started = true;
            got_at_start = got;
        }
    }
    const auto end = Clock::now();
    const char ack = 'k';
    s.write_all(&ack, 1);
    return BandwidthResult{got - got_at_start, seconds_between(start, end),
                           static_cast<std::size_t>(h.write), static_cast<IoWait>(h.io)};
}

void echo_stream(RawSocket &s, const Header &h) {
    std::vector<char> buf(std::max<std::size_t>(h.size, 1));
    for (std::uint64_t i = 0; i < h.warm + h.count; ++i) {
        read_full(s, buf.data(), buf.size(), "a latency row");
        s.write_all(buf.data(), buf.size());
    }
}

RawSocket open_row(const Endpoint &ep, const ProbeOptions &o, const Header &h) {
    RawSocket s = connect_to_endpoint(ep, o.timeout_ms, "the probe's receiver", buffers_of(o));
    s.write_all(&h, sizeof h);
    return s;
}

void send_stream(const Endpoint &ep, const ProbeOptions &o, std::size_t size,
                 std::size_t write_size, IoWait io) {
    Header h{};
    h.write = write_size;
    h.io = static_cast<std::uint64_t>(io);
    h.kind = RowKind::throughput;
    h.size = size;
    h.warm = o.bytes / 10;
    h.count = o.bytes;
    RawSocket sock = open_row(ep, o, h);
    StreamIo s(sock, io, o.timeout_ms);
    // Writes walk a source region of o.source_messages messages (at least one write),
    // starting again at its beginning when the next write would run past its end.
    const std::size_t region =
        std::max<std::size_t>(write_size, static_cast<std::size_t>(size * o.source_messages));
    std::vector<char> buf(region, 'x');
    std::size_t at = 0;
    for (std::uint64_t sent = 0, total = h.warm + h.count; sent < total;) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(write_size, total - sent));
        if (at + n > region)
            at = 0;
        s.write_all(buf.data() + at, n);
        at += n;
        sent += n;
    }
    char ack = 0;
    if (s.read_some(&ack, 1) == 0)
        exit_timeout("the peer closed the connection at the end of a throughput row");
}

LatencySummary ping_pong(const Endpoint &ep, const ProbeOptions &o, std::size_t size) {
    Header h{};
    h.kind = RowKind::latency;
    h.size = size;
    // Big messages get fewer round trips so the probe stays short.
    h.count = size > 65536 ? std::max<std::uint64_t>(1, o.lat_samples / 2) : o.lat_samples;
    h.warm = std::max<std::uint64_t>(10, h.count / 10);
    RawSocket s = open_row(ep, o, h);
    std::vector<char> out(size, 'p'), in(size);
    std::vector<double> rtt_half;
    rtt_half.reserve(h.count);
    for (std::uint64_t i = 0; i < h.warm + h.count; ++i) {
        const auto t0 = Clock::now();
        s.write_all(out.data(), size);
        read_full(s, in.data(), size, "a latency row");
        const auto t1 = Clock::now();
        if (i >= h.warm)
            rtt_half.push_back(microseconds_between(t0, t1) / 2.0);
    }
    return summarize(rtt_half);
}

}  // namespace

std::size_t write_size_for(std::size_t size, std::size_t target) {
    const std::size_t unit = std::max<std::size_t>(size, 1);
    return std::max<std::size_t>(unit, (target / unit) * unit);
}

std::vector<std::size_t> write_sizes_for(std::size_t size,
                                         const std::vector<std::size_t> &targets) {
    std::vector<std::size_t> out;
    for (std::size_t t : targets)
        out.push_back(write_size_for(size, t));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<ThroughputRow> serve_rows(RawListener &listener, const std::string &transport,
                                      const ProbeOptions &o) {
    std::vector<ThroughputRow> rows;
    for (;;) {
        RawSocket s = listener.accept(o.timeout_ms, "probe sender");
        s.set_timeouts(o.timeout_ms);
        if (transport == "tcp")
            s.set_nodelay();
        Header h{};
        read_full(s, &h, sizeof h, "a row header");
        if (h.magic != Header{}.magic)
            exit_error("a connection that is not the probe's sender arrived");
        if (h.kind == RowKind::done)
            return rows;
        if (h.kind == RowKind::latency) {
            echo_stream(s, h);
            continue;
        }
        if (h.write == 0 || h.write > (1ULL << 30) || h.io >= kIoWaits)
            exit_error("a throughput row with a bad header arrived");
        rows.push_back(ThroughputRow{transport, static_cast<std::size_t>(h.size),
                                     receive_stream(s, h, o.timeout_ms)});
    }
}

std::vector<LatencyRow> drive_rows(const Endpoint &ep, const ProbeOptions &o) {
    std::vector<LatencyRow> rows;
    for (std::size_t size : o.sizes) {
        if (o.mode != Mode::lat)
            for (std::size_t w : write_sizes_for(size, o.write_sizes))
                for (IoWait io : o.io_waits)
                    send_stream(ep, o, size, w, io);
        if (o.mode != Mode::thr)
            rows.push_back(LatencyRow{ep.scheme, size, ping_pong(ep, o, size)});
        std::fprintf(stderr, "ceiling_probe: %s %zu B done\n", ep.scheme.c_str(), size);
    }
    Header done{};
    open_row(ep, o, done);
    return rows;
}

BandwidthResult memcpy_bandwidth(std::size_t msg_size, std::uint64_t bytes) {
    const std::size_t n = std::max<std::size_t>(msg_size, 1);
    std::vector<char> src(n, 'm'), dst(n);
    const std::uint64_t reps = std::max<std::uint64_t>(1, bytes / n);
    for (std::uint64_t i = 0; i < std::min<std::uint64_t>(reps, 100); ++i)
        std::memcpy(dst.data(), src.data(), n);
    const auto t0 = Clock::now();
    for (std::uint64_t i = 0; i < reps; ++i) {
        std::memcpy(dst.data(), src.data(), n);
        // Keeps the compiler from proving the copies redundant.
        asm volatile("" : : "r"(dst.data()), "r"(src.data()) : "memory");
    }
    const auto t1 = Clock::now();
    return BandwidthResult{reps * n, seconds_between(t0, t1), n};
}

}  // namespace bench
