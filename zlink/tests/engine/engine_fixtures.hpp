// Fixtures shared by the engine's test files: the peer's bytes written by
// hand (RFC 23/37 layouts), two engines over a socketpair (EnginePair), and
// one engine against a descriptor the test drives (EngineRaw).
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine_harness.hpp"
#include "transport/engine.hpp"
#include "zmq.h"

namespace engine_test {

using zlink::engine_t;
using zlink::options_t;

// ---- raw peer bytes (RFC 23/37 layouts, written by hand) ----

inline std::string greeting_bytes(const std::string &mechanism = "NULL") {
    std::string g(64, '\0');
    g[0] = '\xff';
    g[9] = '\x7f';
    g[10] = 3;
    g[11] = 1;
    g.replace(12, mechanism.size(), mechanism);
    return g;
}

inline std::string frame_bytes(const std::string &body, bool more, bool command = false) {
    std::string out(1, static_cast<char>((more ? 1 : 0) | (command ? 4 : 0)));
    out += static_cast<char>(body.size());  // short frames only
    return out + body;
}

inline std::string ready_bytes(const std::string &type) {
    std::string body = "\x05READY\x0bSocket-Type";
    body += std::string("\0\0\0", 3) + static_cast<char>(type.size()) + type;
    return frame_bytes(body, false, true);
}

inline void write_all(int fd, const std::string &bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
        if (n <= 0)
            return;
        off += static_cast<size_t>(n);
    }
}

// Everything readable now; `eof` set when the engine closed its end.
inline std::string read_available(int fd, bool *eof = nullptr) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            out.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n == 0 && eof)
            *eof = true;
        return out;
    }
}

inline std::string pattern(size_t n, int seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>((i * 31 + static_cast<size_t>(seed)) & 0xff);
    return s;
}

// Two engines joined by a socketpair, each with a recording host.
class EnginePair : public ::testing::Test {
protected:
    void SetUp() override { socket_pair(fds_); }
    void TearDown() override {
        if (a.engine)
            a.engine->terminate();
        if (b.engine)
            b.engine->terminate();
        ioc.restart();
        ioc.poll();
    }
    void start(const options_t &oa, const options_t &ob,
               std::unique_ptr<zlink::wire::handshake> ha = nullptr,
               std::unique_ptr<zlink::wire::handshake> hb = nullptr) {
        a.engine = std::make_shared<engine_t>(adopt(ioc, fds_[0]), oa,
                                              ha ? std::move(ha) : null_for(oa), a);
        b.engine = std::make_shared<engine_t>(adopt(ioc, fds_[1]), ob,
                                              hb ? std::move(hb) : null_for(ob), b);
        a.engine->start();
        b.engine->start();
    }
    void start_ready(int type_a = ZMQ_PAIR, int type_b = ZMQ_PAIR) {
        start(options_for(type_a), options_for(type_b));
        ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    }
    // a sends every frame; b must receive each once, in order, intact, with
    // its MORE flag.
    void send_and_expect_intact(const std::vector<frame> &sent) {
        for (const auto &f : sent)
            a.outbox.push_back(make_msg(f.body, f.more));
        a.engine->restart_output();
        ASSERT_TRUE(run_until(
            ioc, [&] { return b.received.size() == sent.size(); }, std::chrono::seconds(20)));
        for (size_t i = 0; i < sent.size(); ++i) {
            ASSERT_EQ(b.received[i].body.size(), sent[i].body.size()) << i;
            EXPECT_TRUE(b.received[i].body == sent[i].body) << "frame " << i << " corrupted";
            EXPECT_EQ(b.received[i].more, sent[i].more) << i;
        }
    }
    asio::io_context ioc;
    int fds_[2] = {-1, -1};
    recording_host a, b;
};

// One engine against a raw file descriptor the test writes and reads by hand.
class EngineRaw : public ::testing::Test {
protected:
    void SetUp() override { socket_pair(fds_); }
    void TearDown() override {
        if (host.engine)
            host.engine->terminate();
        ::close(fds_[1]);
        ioc.restart();
        ioc.poll();
    }
    void start(const options_t &o, std::unique_ptr<zlink::wire::handshake> hs) {
        host.engine = std::make_shared<engine_t>(adopt(ioc, fds_[0]), o, std::move(hs), host);
        host.engine->start();
    }
    void start_null(const options_t &o) { start(o, null_for(o)); }
    int peer() const { return fds_[1]; }
    asio::io_context ioc;
    int fds_[2] = {-1, -1};
    recording_host host;
};

}  // namespace engine_test
