#include "probes.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "../common/clock.hpp"
#include "../common/raw_socket.hpp"

namespace bench {

namespace {

struct Connected {
    RawSocket client, server;
};

Connected connect_pair(StreamKind kind, int timeout_ms) {
    Connected c;
    if (kind == StreamKind::tcp) {
        RawListener l = RawListener::tcp_loopback();
        c.client = tcp_connect_loopback(l.port(), timeout_ms);
        c.server = l.accept(timeout_ms);
        c.client.set_nodelay();
        c.server.set_nodelay();
    } else {
        RawListener l = RawListener::unix_socket();
        c.client = unix_connect(l.path(), timeout_ms);
        c.server = l.accept(timeout_ms);
    }
    c.server.set_timeouts(timeout_ms);
    return c;
}

}  // namespace

BandwidthResult stream_bandwidth(StreamKind kind, std::size_t msg_size, std::uint64_t bytes, int timeout_ms) {
    Connected c = connect_pair(kind, timeout_ms);
    const std::size_t unit = std::max<std::size_t>(msg_size, 1);
    const std::size_t write_size = std::max<std::size_t>(unit, (256 * 1024 / unit) * unit);
    const std::uint64_t warm = bytes / 10;
    const std::uint64_t total = bytes + warm;
    std::thread sender([&] {
        std::vector<char> buf(write_size, 'x');
        std::uint64_t sent = 0;
        while (sent < total) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(write_size, total - sent));
            c.client.write_all(buf.data(), n);
            sent += n;
        }
    });
    std::vector<char> buf(std::max<std::size_t>(write_size, 256 * 1024));
    std::uint64_t got = 0, got_at_start = 0;
    Clock::time_point start{};
    bool started = false;
    while (got < total) {
        const std::size_t r = c.server.read_some(buf.data(), buf.size());
        if (r == 0) break;
        got += r;
        if (!started && got >= warm) {
            // Bytes up to here were sent before the clock started: not counted.
            start = Clock::now();
            started = true;
            got_at_start = got;
        }
    }
    const auto end = Clock::now();
    sender.join();
    return BandwidthResult{got - got_at_start, seconds_between(start, end), write_size};
}

LatencySummary stream_round_trip(StreamKind kind, std::size_t msg_size, std::uint64_t samples, int timeout_ms) {
    Connected c = connect_pair(kind, timeout_ms);
    const std::size_t n = std::max<std::size_t>(msg_size, 1);
    const std::uint64_t warm = std::max<std::uint64_t>(10, samples / 10);
    std::thread echo([&] {
        std::vector<char> buf(n);
        for (std::uint64_t i = 0; i < warm + samples; ++i) {
            c.server.read_exact(buf.data(), n);
            c.server.write_all(buf.data(), n);
        }
    });
    std::vector<char> out(n, 'p'), in(n);
    std::vector<double> rtt_half;
    rtt_half.reserve(samples);
    for (std::uint64_t i = 0; i < warm + samples; ++i) {
        const auto t0 = Clock::now();
        c.client.write_all(out.data(), n);
        c.client.read_exact(in.data(), n);
        const auto t1 = Clock::now();
        if (i >= warm) rtt_half.push_back(microseconds_between(t0, t1) / 2.0);
    }
    echo.join();
    return summarize(rtt_half);
}

BandwidthResult memcpy_bandwidth(std::size_t msg_size, std::uint64_t bytes) {
    const std::size_t n = std::max<std::size_t>(msg_size, 1);
    std::vector<char> src(n, 'm'), dst(n);
    const std::uint64_t reps = std::max<std::uint64_t>(1, bytes / n);
    for (std::uint64_t i = 0; i < std::min<std::uint64_t>(reps, 100); ++i) std::memcpy(dst.data(), src.data(), n);
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
