// ZAP end to end through the public API, zlink on both sides: a REP handler at
// inproc://zeromq.zap.01, a server socket with a ZAP domain, a client. Checks
// what libzmq's test_metadata and test_security_* check: the request's frames,
// zmq_msg_gets (handler metadata, User-Id, Socket-Type, Peer-Address), and the
// monitor events with their values on refusal.
#include "zmq.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using frames = std::vector<std::string>;

frames recv_all(void *s) {
    frames out;
    int more = 1;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, s, 0) < 0) {
            zmq_msg_close(&m);
            return {};
        }
        out.emplace_back(static_cast<char *>(zmq_msg_data(&m)), zmq_msg_size(&m));
        more = zmq_msg_more(&m);
        zmq_msg_close(&m);
    }
    return out;
}

void send_all(void *s, const frames &f) {
    for (std::size_t i = 0; i < f.size(); ++i)
        zmq_send(s, f[i].data(), f[i].size(), i + 1 < f.size() ? ZMQ_SNDMORE : 0);
}

// Answers ZAP requests: "200" with metadata Hello=World and User-Id "anonymous"
// for PLAIN admin/password and NULL, "400" otherwise; "300" (temporary failure)
// for the domain LATER and "400" for the domain WRONG. Records the last request
// and counts them.
class zap_handler {
public:
    explicit zap_handler(void *ctx) : rep_(zmq_socket(ctx, ZMQ_REP)) {
        int timeout = 100;
        zmq_setsockopt(rep_, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
        EXPECT_EQ(zmq_bind(rep_, "inproc://zeromq.zap.01"), 0);
        thread_ = std::thread([this] { run(); });
    }
    ~zap_handler() {
        stop_ = true;
        thread_.join();
        int zero = 0;
        zmq_setsockopt(rep_, ZMQ_LINGER, &zero, sizeof zero);
        zmq_close(rep_);
    }
    int requests() const { return requests_.load(); }
    frames last_request() const {
        std::lock_guard<std::mutex> g(mu_);
        return last_;
    }

private:
    void run() {
        while (!stop_) {
            frames req = recv_all(rep_);
            if (req.empty())
                continue;
            {
                std::lock_guard<std::mutex> g(mu_);
                last_ = req;
            }
            ++requests_;
            const bool ok =
                req.size() >= 6 && (req[5] == "NULL" ||
                                    (req.size() == 8 && req[6] == "admin" && req[7] == "password"));
            const std::string meta("\x05"
                                   "Hello"
                                   "\0\0\0\x05"
                                   "World",
                                   15);
            if (req.size() >= 3 && req[2] == "LATER")
                send_all(rep_, {req[0], req[1], "300", "Later", "", ""});
            else if (req.size() >= 3 && req[2] == "WRONG")
                send_all(rep_, {req[0], req[1], "400", "Bad domain", "", ""});
            else if (ok)
                send_all(rep_, {req[0], req[1], "200", "OK", "anonymous", meta});
            else
                send_all(rep_, {req[0], req[1], "400", "No", "", ""});
        }
    }

    void *rep_;
    std::atomic<bool> stop_{false};
    std::atomic<int> requests_{0};
    std::thread thread_;
    mutable std::mutex mu_;
    frames last_;
};

class ZapApi : public ::testing::Test {
protected:
    void SetUp() override {
        ctx = zmq_ctx_new();
        handler = std::make_unique<zap_handler>(ctx);
        server = socket(ZMQ_DEALER);
        client = socket(ZMQ_DEALER);
    }
    void TearDown() override {
        for (void *s : {server, client, server_mon, client_mon})
            if (s)
                zmq_close(s);
        handler.reset();
        zmq_ctx_term(ctx);
    }
    void *socket(int type) {
        void *s = zmq_socket(ctx, type);
        int zero = 0, timeout = 3000;
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
        return s;
    }
    static constexpr int handshake_events =
        ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
        ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;
    void *monitor(void *s, const char *name,
                  int events = ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        zmq_socket_monitor(s, name, events);
        void *m = socket(ZMQ_PAIR);
        zmq_connect(m, name);
        return m;
    }
    // The next event on a monitor socket as (event, value); (0, 0) on timeout.
    static std::pair<int, uint32_t> next_event(void *mon) {
        frames f = recv_all(mon);
        if (f.size() != 2 || f[0].size() < 6)
            return {0, 0};
        uint16_t event;
        uint32_t value;
        std::memcpy(&event, f[0].data(), 2);
        std::memcpy(&value, f[0].data() + 2, 4);
        return {event, value};
    }
    std::string connect_pair() {
        EXPECT_EQ(zmq_bind(server, "tcp://127.0.0.1:*"), 0);
        char endpoint[256];
        std::size_t len = sizeof endpoint;
        zmq_getsockopt(server, ZMQ_LAST_ENDPOINT, endpoint, &len);
        EXPECT_EQ(zmq_connect(client, endpoint), 0);
        return endpoint;
    }

    void *ctx = nullptr;
    std::unique_ptr<zap_handler> handler;
    void *server = nullptr;
    void *client = nullptr;
    void *server_mon = nullptr;
    void *client_mon = nullptr;
};

TEST_F(ZapApi, NullWithDomainCarriesZapMetadataToMessages) {
    zmq_setsockopt(server, ZMQ_ZAP_DOMAIN, "DOMAIN", 6);
    zmq_setsockopt(server, ZMQ_ROUTING_ID, "SRV", 3);
    connect_pair();
    zmq_send(client, "hello", 5, 0);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    ASSERT_EQ(zmq_msg_recv(&msg, server, 0), 5);
    EXPECT_STREQ(zmq_msg_gets(&msg, "Hello"), "World");
    EXPECT_STREQ(zmq_msg_gets(&msg, "User-Id"), "anonymous");
    EXPECT_STREQ(zmq_msg_gets(&msg, "Socket-Type"), "DEALER");
    EXPECT_STREQ(zmq_msg_gets(&msg, "Peer-Address"), "127.0.0.1");
    errno = 0;
    EXPECT_EQ(zmq_msg_gets(&msg, "No Such"), nullptr);
    EXPECT_EQ(errno, EINVAL);
    zmq_msg_close(&msg);
    const frames req = handler->last_request();
    ASSERT_EQ(req.size(), 6u) << "version, id, domain, address, identity, mechanism";
    EXPECT_EQ(req[0], "1.0");
    EXPECT_EQ(req[1], "1");
    EXPECT_EQ(req[2], "DOMAIN");
    EXPECT_EQ(req[3], "127.0.0.1");
    EXPECT_EQ(req[4], "SRV") << "the asking socket's own routing id, as libzmq";
    EXPECT_EQ(req[5], "NULL");
}

// libzmq's test_router_prefetch_metadata: every frame a ROUTER hands out, the
// routing id it prepends included, carries the connection's ZAP metadata.
TEST_F(ZapApi, RouterFramesAllCarryZapMetadata) {
    zmq_close(server);
    server = socket(ZMQ_ROUTER);
    zmq_setsockopt(server, ZMQ_ZAP_DOMAIN, "DOMAIN", 6);
    connect_pair();
    zmq_send(client, "hello", 5, 0);
    for (const char *frame : {"routing id", "body"}) {
        zmq_msg_t msg;
        zmq_msg_init(&msg);
        ASSERT_GE(zmq_msg_recv(&msg, server, 0), 0) << frame;
        EXPECT_STREQ(zmq_msg_gets(&msg, "Hello"), "World") << frame;
        EXPECT_STREQ(zmq_msg_gets(&msg, "User-Id"), "anonymous") << frame;
        zmq_msg_close(&msg);
    }
}

TEST_F(ZapApi, NoDomainNoZapAndOnlyConnectionProperties) {
    connect_pair();
    zmq_send(client, "hello", 5, 0);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    ASSERT_EQ(zmq_msg_recv(&msg, server, 0), 5);
    EXPECT_EQ(zmq_msg_gets(&msg, "User-Id"), nullptr);
    EXPECT_STREQ(zmq_msg_gets(&msg, "Socket-Type"), "DEALER");
    zmq_msg_close(&msg);
    EXPECT_TRUE(handler->last_request().empty());
}

TEST_F(ZapApi, PlainWrongPasswordIsAuth400OnBothSides) {
    const int one = 1;
    zmq_setsockopt(server, ZMQ_PLAIN_SERVER, &one, sizeof one);
    zmq_setsockopt(client, ZMQ_PLAIN_USERNAME, "admin", 5);
    zmq_setsockopt(client, ZMQ_PLAIN_PASSWORD, "wrong", 5);
    server_mon = monitor(server, "inproc://mon-server");
    client_mon = monitor(client, "inproc://mon-client");
    connect_pair();
    EXPECT_EQ(next_event(server_mon), std::make_pair(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 400u));
    EXPECT_EQ(next_event(client_mon), std::make_pair(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 400u));
    const frames req = handler->last_request();
    ASSERT_EQ(req.size(), 8u);
    EXPECT_EQ(req[5], "PLAIN");
    EXPECT_EQ(req[6], "admin");
    EXPECT_EQ(req[7], "wrong");
}

TEST_F(ZapApi, PlainGoodPasswordSetsUserId) {
    const int one = 1;
    zmq_setsockopt(server, ZMQ_PLAIN_SERVER, &one, sizeof one);
    zmq_setsockopt(client, ZMQ_PLAIN_USERNAME, "admin", 5);
    zmq_setsockopt(client, ZMQ_PLAIN_PASSWORD, "password", 8);
    connect_pair();
    zmq_send(client, "hi", 2, 0);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    ASSERT_EQ(zmq_msg_recv(&msg, server, 0), 2);
    EXPECT_STREQ(zmq_msg_gets(&msg, "User-Id"), "anonymous");
    zmq_msg_close(&msg);
}

// What test_security_zap counts: a client refused with ERROR 400 gives up on
// the endpoint as libzmq 4.3.5 does (a protocol error ends a connecting
// session), so one refusal, one ZAP request, no reconnect loop.
TEST_F(ZapApi, ClientRefusedWith400DoesNotReconnect) {
    zmq_setsockopt(server, ZMQ_ZAP_DOMAIN, "WRONG", 5);
    const int ivl = 10;
    zmq_setsockopt(client, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
    client_mon = monitor(client, "inproc://mon-client", handshake_events);
    connect_pair();
    EXPECT_EQ(next_event(client_mon), std::make_pair(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 400u));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const int short_wait = 100;
    zmq_setsockopt(client_mon, ZMQ_RCVTIMEO, &short_wait, sizeof short_wait);
    EXPECT_EQ(next_event(client_mon), std::make_pair(0, 0u)) << "no second attempt";
    EXPECT_EQ(handler->requests(), 1);
}

// ZAP 300 (temporary failure): the server reports AUTH 300 but, as libzmq 4.3.5,
// sends no ERROR and does not hang up, so the client sees no failure and does
// not reconnect and ask again (test_security_zap's *_temporary_failure_* cases).
TEST_F(ZapApi, Temporary300IsReportedOnTheServerOnlyAndAskedOnce) {
    zmq_setsockopt(server, ZMQ_ZAP_DOMAIN, "LATER", 5);
    server_mon = monitor(server, "inproc://mon-server", handshake_events);
    client_mon = monitor(client, "inproc://mon-client", handshake_events);
    connect_pair();
    EXPECT_EQ(next_event(server_mon), std::make_pair(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 300u));
    const int short_wait = 300;
    zmq_setsockopt(client_mon, ZMQ_RCVTIMEO, &short_wait, sizeof short_wait);
    zmq_setsockopt(server_mon, ZMQ_RCVTIMEO, &short_wait, sizeof short_wait);
    EXPECT_EQ(next_event(client_mon), std::make_pair(0, 0u)) << "no ERROR, no hang-up";
    EXPECT_EQ(next_event(server_mon), std::make_pair(0, 0u));
    EXPECT_EQ(handler->requests(), 1);
}

// zmq_ctx_term on another thread; false if it has not returned within `limit`
// (the thread is then left behind: the test has failed anyway).
bool term_within(void *ctx, std::chrono::milliseconds limit) {
    auto done = std::make_shared<std::promise<void>>();
    auto finished = done->get_future();
    std::thread([ctx, done] {
        zmq_ctx_term(ctx);
        done->set_value();
    }).detach();
    return finished.wait_for(limit) == std::future_status::ready;
}

// LINGER is read when the socket closes, not when it connected: the usual
// "set LINGER 0, then close" (libzmq's close_zero_linger) must drop a message
// still queued for a peer that never completes a handshake.
TEST(ZapApiLinger, LingerSetJustBeforeCloseDropsQueuedMessages) {
    void *ctx = zmq_ctx_new();
    void *probe = zmq_socket(ctx, ZMQ_DEALER);
    ASSERT_EQ(zmq_bind(probe, "tcp://127.0.0.1:*"), 0);
    char endpoint[256];
    std::size_t len = sizeof endpoint;
    zmq_getsockopt(probe, ZMQ_LAST_ENDPOINT, endpoint, &len);
    int zero = 0;
    zmq_setsockopt(probe, ZMQ_LINGER, &zero, sizeof zero);
    zmq_close(probe);  // the port is free again: the client keeps retrying
    void *client = zmq_socket(ctx, ZMQ_DEALER);  // LINGER: forever (default)
    ASSERT_EQ(zmq_connect(client, endpoint), 0);
    ASSERT_EQ(zmq_send(client, "queued", 6, ZMQ_DONTWAIT), 6);
    zmq_setsockopt(client, ZMQ_LINGER, &zero, sizeof zero);
    zmq_close(client);
    EXPECT_TRUE(term_within(ctx, std::chrono::seconds(5))) << "zmq_ctx_term still waits";
}

#ifdef ZLINK_HAVE_CURVE
TEST_F(ZapApi, CurveCarriesMessagesAndTheClientKeyReachesZap) {
    char server_pub[41], server_sec[41], client_pub[41], client_sec[41];
    ASSERT_EQ(zmq_curve_keypair(server_pub, server_sec), 0);
    ASSERT_EQ(zmq_curve_keypair(client_pub, client_sec), 0);
    const int one = 1;
    zmq_setsockopt(server, ZMQ_CURVE_SERVER, &one, sizeof one);
    zmq_setsockopt(server, ZMQ_CURVE_SECRETKEY, server_sec, 40);
    zmq_setsockopt(client, ZMQ_CURVE_SERVERKEY, server_pub, 40);
    zmq_setsockopt(client, ZMQ_CURVE_PUBLICKEY, client_pub, 40);
    zmq_setsockopt(client, ZMQ_CURVE_SECRETKEY, client_sec, 40);
    // The handler refuses CURVE (it knows no keys): 400, as a ZAP refusal.
    client_mon = monitor(client, "inproc://mon-client");
    connect_pair();
    EXPECT_EQ(next_event(client_mon), std::make_pair(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 400u));
    const frames req = handler->last_request();
    ASSERT_EQ(req.size(), 7u);
    EXPECT_EQ(req[5], "CURVE");
    uint8_t key[32];
    ASSERT_NE(zmq_z85_decode(key, client_pub), nullptr);
    EXPECT_EQ(req[6], std::string(reinterpret_cast<char *>(key), 32));
}
#endif

}  // namespace
