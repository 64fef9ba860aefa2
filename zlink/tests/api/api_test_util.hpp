// Shared helpers of the C API tests: a context with a pair of sentinel
// sockets that must keep working whatever a test case did to the API.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "zmq.h"

namespace api_test {

// The outcome of one C call: its return value and errno right after it.
struct outcome {
    long rc;
    int err;
};

template <typename Call>
outcome run(Call call) {
    errno = 0;
    long rc = static_cast<long>(call());
    return {rc, errno};
}

// A context plus two connected inproc PAIR sockets.  alive() sends one
// message across and reads it back: the proof that a failed call left the
// context and the other sockets working.
class sentinel_ctx {
public:
    sentinel_ctx() : ctx(zmq_ctx_new()) {
        a = zmq_socket(ctx, ZMQ_PAIR);
        b = zmq_socket(ctx, ZMQ_PAIR);
        int zero = 0;
        zmq_setsockopt(a, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(b, ZMQ_LINGER, &zero, sizeof zero);
        zmq_bind(a, "inproc://api-sentinel");
        zmq_connect(b, "inproc://api-sentinel");
    }
    ~sentinel_ctx() {
        zmq_close(a);
        zmq_close(b);
        zmq_ctx_term(ctx);
    }
    sentinel_ctx(const sentinel_ctx &) = delete;
    sentinel_ctx &operator=(const sentinel_ctx &) = delete;

    bool alive() {
        if (zmq_send(a, "ping", 4, 0) != 4)
            return false;
        char buf[8] = {};
        int timeout = 2000;
        zmq_setsockopt(b, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
        return zmq_recv(b, buf, sizeof buf, 0) == 4 && std::memcmp(buf, "ping", 4) == 0;
    }

    void *ctx;
    void *a = nullptr;
    void *b = nullptr;
};

inline void set_int(void *s, int option, int value) {
    ASSERT_EQ(0, zmq_setsockopt(s, option, &value, sizeof value));
}

// The socket's ZMQ_LAST_ENDPOINT (a bound wildcard's actual address).
inline std::string last_endpoint(void *s) {
    char ep[256];
    size_t len = sizeof ep;
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len);
    return ep;
}

// A fixture owning a context and every socket it hands out: each is closed in
// TearDown, so a failed ASSERT cannot leave one open and hang zmq_ctx_term.
// Sockets get LINGER 0 and, when rcvtimeo_ms >= 0, that receive timeout.
class socket_owner : public ::testing::Test {
protected:
    explicit socket_owner(int rcvtimeo_ms = -1) : rcvtimeo_ms_(rcvtimeo_ms) {}
    void SetUp() override { ctx = zmq_ctx_new(); }
    void TearDown() override {
        for (void *s : open_)
            zmq_close(s);
        EXPECT_EQ(0, zmq_ctx_term(ctx));
    }
    void *socket(int type) {
        void *s = zmq_socket(ctx, type);
        const int zero = 0;
        EXPECT_EQ(0, zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero));
        if (rcvtimeo_ms_ >= 0)
            EXPECT_EQ(0, zmq_setsockopt(s, ZMQ_RCVTIMEO, &rcvtimeo_ms_, sizeof rcvtimeo_ms_));
        open_.push_back(s);
        return s;
    }
    void close_now(void *s) {
        open_.erase(std::find(open_.begin(), open_.end(), s));
        zmq_close(s);
    }
    void *ctx = nullptr;

private:
    const int rcvtimeo_ms_;
    std::vector<void *> open_;
};

}  // namespace api_test
