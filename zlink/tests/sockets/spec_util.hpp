// Helpers for the socket-type spec tests: one case body runs over every
// transport (tcp, ipc, inproc) through the public zmq.h API only, so the same
// tests could be pointed at libzmq to check that they test the right thing.
#pragma once

#include <zmq.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace spec {

// Receive timeout of every test socket: long enough for a loaded 2-core CI
// machine, short enough that a missing message fails the test quickly.
constexpr int recv_timeout_ms = 3000;

inline std::string unique_name() {
    static std::atomic<int> n{0};
    return std::to_string(::getpid()) + "-" + std::to_string(n++);
}

// A fixture parametrised by transport name; owns the context and closes every
// socket it made (linger 0) so a failing case cannot hang teardown.
class transport_test : public ::testing::TestWithParam<const char *> {
protected:
    void SetUp() override {
        ctx_ = zmq_ctx_new();
        ASSERT_NE(ctx_, nullptr);
    }
    void TearDown() override {
        for (void *s : sockets_)
            zmq_close(s);
        zmq_ctx_term(ctx_);
        for (auto &p : ipc_paths_)
            ::unlink(p.c_str());
    }

    std::string transport() const { return GetParam(); }

    void *socket(int type) {
        void *s = zmq_socket(ctx_, type);
        EXPECT_NE(s, nullptr) << "zmq_socket(" << type << "): " << zmq_strerror(zmq_errno());
        int linger = 0, timeo = recv_timeout_ms;
        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeo, sizeof timeo);
        sockets_.push_back(s);
        return s;
    }
    void close(void *s) {
        std::erase(sockets_, s);
        zmq_close(s);
    }

    // A fresh endpoint of this test's transport (tcp: any port).
    std::string fresh_endpoint() {
        if (transport() == "tcp")
            return "tcp://127.0.0.1:*";
        if (transport() == "inproc")
            return "inproc://spec-" + unique_name();
        const std::string ep = "ipc:///tmp/zlink-spec-" + unique_name() + ".sock";
        ipc_paths_.push_back(ep.substr(6));
        return ep;
    }
    // Binds `s` on a fresh endpoint of this test's transport; returns the
    // endpoint peers connect to.
    std::string bind(void *s) {
        const std::string ep = fresh_endpoint();
        if (zmq_bind(s, ep.c_str()) != 0)
            abort_case("bind " + ep);
        char last[256];
        size_t len = sizeof last;
        EXPECT_EQ(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, last, &len), 0);
        return last;
    }
    // An endpoint of this test's transport that nobody is bound to yet, for
    // cases that connect first and bind later. For tcp a port is found by
    // binding a throwaway socket; bind_at() retries while it is released.
    std::string endpoint_for_later_bind() {
        if (transport() != "tcp")
            return fresh_endpoint();
        void *probe = zmq_socket(ctx_, ZMQ_PAIR);
        const std::string ep = bind(probe);
        zmq_unbind(probe, ep.c_str());
        zmq_close(probe);
        return ep;
    }
    void bind_at(void *s, const std::string &ep) {
        for (int i = 0; i < 100; ++i) {
            if (zmq_bind(s, ep.c_str()) == 0)
                return;
            if (zmq_errno() != EADDRINUSE)
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        abort_case("bind " + ep);
    }
    void connect(void *s, const std::string &ep) {
        if (zmq_connect(s, ep.c_str()) != 0)
            abort_case("connect " + ep);
    }
    // A case cannot go on without its endpoint (e.g. a transport the library
    // does not have yet): fail it now, loudly, instead of waiting out every
    // receive timeout. gtest reports the exception as a failure of the case.
    [[noreturn]] static void abort_case(const std::string &what) {
        const std::string msg = what + ": " + zmq_strerror(zmq_errno());
        ADD_FAILURE() << msg;
        throw std::runtime_error(msg);
    }

    void *ctx_ = nullptr;
    std::vector<void *> sockets_;
    std::vector<std::string> ipc_paths_;
};

inline int send(void *s, const std::string &body, int flags = 0) {
    return zmq_send(s, body.data(), body.size(), flags);
}

// Sends a multipart message; frames after the first are sent with SNDMORE
// on all but the last.
inline void send_all(void *s, const std::vector<std::string> &frames) {
    for (size_t i = 0; i < frames.size(); ++i) {
        const int flags = i + 1 < frames.size() ? ZMQ_SNDMORE : 0;
        ASSERT_EQ(send(s, frames[i], flags), static_cast<int>(frames[i].size()))
            << "frame " << i << ": " << zmq_strerror(zmq_errno());
    }
}

// One frame, or "<error: ...>" so the comparison in the test shows what failed.
inline std::string recv(void *s, int flags = 0) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, s, flags) < 0) {
        const int e = zmq_errno();
        zmq_msg_close(&m);
        return std::string("<error: ") + zmq_strerror(e) + ">";
    }
    std::string out(static_cast<const char *>(zmq_msg_data(&m)), zmq_msg_size(&m));
    zmq_msg_close(&m);
    return out;
}

inline bool rcvmore(void *s) {
    int more = 0;
    size_t len = sizeof more;
    zmq_getsockopt(s, ZMQ_RCVMORE, &more, &len);
    return more != 0;
}

// All frames of the next message.
inline std::vector<std::string> recv_all(void *s, int flags = 0) {
    std::vector<std::string> frames{recv(s, flags)};
    while (rcvmore(s))
        frames.push_back(recv(s, flags));
    return frames;
}

inline void set_int(void *s, int opt, int v) {
    EXPECT_EQ(zmq_setsockopt(s, opt, &v, sizeof v), 0)
        << "option " << opt << ": " << zmq_strerror(zmq_errno());
}
inline void set_str(void *s, int opt, const std::string &v) {
    EXPECT_EQ(zmq_setsockopt(s, opt, v.data(), v.size()), 0)
        << "option " << opt << ": " << zmq_strerror(zmq_errno());
}

// Blocks until nothing arrives for `quiet`; returns what arrived (used to show
// that a message was NOT delivered without sleeping blindly).
inline bool nothing_arrives(void *s,
                            std::chrono::milliseconds quiet = std::chrono::milliseconds(200)) {
    zmq_pollitem_t item{s, 0, ZMQ_POLLIN, 0};
    return zmq_poll(&item, 1, static_cast<long>(quiet.count())) == 0;
}

// Waits for a message on `receiver` while making `other` process its
// commands (a socket attaches new peers only inside its own zmq_* calls, as
// in libzmq); false when nothing arrived within the receive timeout.
inline bool wait_pumping(void *receiver, void *other) {
    for (int i = 0; i < recv_timeout_ms / 10; ++i) {
        int events = 0;
        size_t len = sizeof events;
        zmq_getsockopt(other, ZMQ_EVENTS, &events, &len);
        zmq_pollitem_t item{receiver, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 10) == 1)
            return true;
    }
    return false;
}

inline void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Lets `s` run its pending commands (zmq_poll does, through ZMQ_EVENTS). A
// fair-queue test needs it after its peers' queues fill: a pipe that ran dry
// comes back to the queue by a command, and recv runs the commands only once
// every 100 calls while some pipe is readable, as libzmq 4.3.5 does (without
// the poll, libzmq reads one peer's whole queue first: "cccccc").
inline void take_commands(void *s) {
    zmq_pollitem_t item{s, 0, ZMQ_POLLIN, 0};
    zmq_poll(&item, 1, 0);
}

// Pub-sub has no connection handshake visible to the application: publish a
// probe until the subscriber sees one, so the subscription has certainly
// reached the publisher. The subscriber must be subscribed to `probe`
// (callers unsubscribe and drain afterwards with drain_probes).
inline bool wait_subscribed(void *pub, void *sub, const std::string &probe) {
    for (int i = 0; i < 300; ++i) {
        send(pub, probe, ZMQ_DONTWAIT);
        zmq_pollitem_t item{sub, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 10) == 1)
            return true;
    }
    return false;
}
inline void drain(void *s) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    while (zmq_msg_recv(&m, s, ZMQ_DONTWAIT) >= 0) {
    }
    zmq_msg_close(&m);
}

}  // namespace spec

#define SPEC_ALL_TRANSPORTS(Suite)                                                                 \
    INSTANTIATE_TEST_SUITE_P(, Suite, ::testing::Values("tcp", "ipc", "inproc"),                   \
                             [](const auto &info) { return std::string(info.param); })
