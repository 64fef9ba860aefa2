// Shared helpers of the C API tests: a context with a pair of sentinel
// sockets that must keep working whatever a test case did to the API.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>

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

}  // namespace api_test
