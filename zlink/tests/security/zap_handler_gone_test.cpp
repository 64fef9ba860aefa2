// A ZAP handler that goes away or goes silent after taking the request, as
// libzmq 4.3.5's test_security_zap drives it (zap_disconnect, zap_do_not_recv).
// libzmq keeps such a handshake waiting: the connection carries no message, and
// when the peer hangs up the server reports HANDSHAKE_FAILED_NO_DETAIL with EPIPE
// (the errno of a read that found the end of the stream). Failing the handshake
// at once instead would let the client reconnect and, with no handler bound any
// more, pass unauthenticated: the bug this file guards against.
#include "zmq.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

namespace {

enum class handler_mode { disconnect_after_first_frame, never_read };

class ZapHandlerGone : public ::testing::TestWithParam<handler_mode> {
protected:
    void SetUp() override {
        ctx_ = zmq_ctx_new();
        handler_ = zmq_socket(ctx_, ZMQ_REP);
        ASSERT_EQ(zmq_bind(handler_, "inproc://zeromq.zap.01"), 0);
        if (GetParam() == handler_mode::disconnect_after_first_frame)
            handler_thread_ = std::thread([this] { take_one_frame_and_close(); });
        server_ = socket(ZMQ_DEALER);
        // NULL asks ZAP only with a domain (libzmq 4.3.5).
        ASSERT_EQ(zmq_setsockopt(server_, ZMQ_ZAP_DOMAIN, "test", 4), 0);
        ASSERT_EQ(zmq_socket_monitor(server_, "inproc://gone-mon", ZMQ_EVENT_ALL), 0);
        monitor_ = socket(ZMQ_PAIR);
        ASSERT_EQ(zmq_connect(monitor_, "inproc://gone-mon"), 0);
        ASSERT_EQ(zmq_bind(server_, "tcp://127.0.0.1:*"), 0);
    }
    void TearDown() override {
        if (handler_thread_.joinable())
            handler_thread_.join();
        for (void *s : {server_, monitor_, handler_})
            if (s)
                zmq_close(s);
        zmq_ctx_term(ctx_);
    }
    void *socket(int type) {
        void *s = zmq_socket(ctx_, type);
        int zero = 0, timeout = 500;
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
        return s;
    }
    void take_one_frame_and_close() {
        char buf[64];
        zmq_recv(handler_, buf, sizeof buf, 0);  // the version frame, then leave
        int zero = 0;
        zmq_setsockopt(handler_, ZMQ_LINGER, &zero, sizeof zero);
        zmq_close(handler_);
        handler_ = nullptr;
    }
    std::string endpoint() {
        char text[256];
        std::size_t len = sizeof text;
        zmq_getsockopt(server_, ZMQ_LAST_ENDPOINT, text, &len);
        return text;
    }
    // The first handshake failure the monitor reports, as (event, value).
    std::pair<int, uint32_t> first_handshake_failure() {
        constexpr int failures = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
        for (int i = 0; i < 20; ++i) {
            zmq_msg_t head, addr;
            zmq_msg_init(&head);
            zmq_msg_init(&addr);
            if (zmq_msg_recv(&head, monitor_, 0) < 0)
                return {0, 0};
            zmq_msg_recv(&addr, monitor_, 0);
            uint16_t event;
            uint32_t value;
            std::memcpy(&event, zmq_msg_data(&head), 2);
            std::memcpy(&value, static_cast<char *>(zmq_msg_data(&head)) + 2, 4);
            zmq_msg_close(&head);
            zmq_msg_close(&addr);
            if (event & failures)
                return {event, value};
        }
        return {0, 0};
    }

    void *ctx_ = nullptr;
    void *handler_ = nullptr;
    void *server_ = nullptr;
    void *monitor_ = nullptr;
    std::thread handler_thread_;
};

TEST_P(ZapHandlerGone, NoMessagePassesAndThePeersHangUpIsEpipe) {
    void *client = socket(ZMQ_DEALER);
    ASSERT_EQ(zmq_connect(client, endpoint().c_str()), 0);
    const std::string payload(32, 'x');
    ASSERT_EQ(zmq_send(client, payload.data(), payload.size(), 0), 32);
    char buf[64];
    // Long enough for the client's reconnect (100 ms) and a second handshake.
    int timeout = 1000;
    zmq_setsockopt(server_, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    EXPECT_EQ(zmq_recv(server_, buf, sizeof buf, 0), -1) << "the handshake must still wait for ZAP";
    EXPECT_EQ(zmq_errno(), EAGAIN);
    zmq_close(client);
    const auto failure = first_handshake_failure();
    EXPECT_EQ(failure.first, ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    EXPECT_EQ(failure.second, static_cast<uint32_t>(EPIPE));
}

INSTANTIATE_TEST_SUITE_P(Modes, ZapHandlerGone,
                         ::testing::Values(handler_mode::disconnect_after_first_frame,
                                           handler_mode::never_read),
                         [](const auto &info) {
                             return info.param == handler_mode::never_read
                                        ? std::string("NeverReads")
                                        : std::string("DisconnectsAfterOneFrame");
                         });

}  // namespace
