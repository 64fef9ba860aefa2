// Stress of the receive path's wake-ups around the engine's deferral
// (engine_input.hpp): a read that fills its buffer while a large message is in
// flight publishes without waking the socket; the wake-up goes with a later
// flush.  Message sizes cycle around the in-place threshold (1 KiB) and the
// chunk and body sizes where a read comes back full or short; a small HWM makes
// the engine block and restart mid-run; the sender pauses after every third
// message, the receiver sleeps in zmq_poll whenever it has nothing and now and
// then pauses so the pipe fills.  A lost wake-up is a poll that times out with
// messages still to come; a message out of order or of the wrong size is a
// fault of its own.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "zmq.h"

namespace {

constexpr int poll_timeout_ms = 5000;  // a lost wake-up, not a slow host

// Sizes on both sides of where the engine's reads change behaviour: the
// in-place threshold (1024), the default chunk sizes, and large bodies.
const std::vector<std::size_t> sizes = {64,    1000,  1023,   1024,   1025,   2047,
                                        4096,  8191,  8192,   8193,   16384,  65535,
                                        65536, 65537, 131072, 262143, 262144, 300000};

std::size_t size_of(int seq) { return sizes[static_cast<std::size_t>(seq) % sizes.size()]; }

std::string last_endpoint(void *s) {
    char ep[256];
    size_t len = sizeof ep;
    EXPECT_EQ(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len), 0);
    return ep;
}

void set_int(void *s, int option, int value) {
    ASSERT_EQ(zmq_setsockopt(s, option, &value, sizeof value), 0);
}

// Bursts of three with a pause after each, so the receiver drains and sleeps
// and the next burst's last read (a large body among them) must wake it.
void send_all(void *push, int count) {
    std::vector<char> body(sizes.back() + 4, 'w');
    for (int seq = 0; seq < count; ++seq) {
        std::memcpy(body.data(), &seq, sizeof seq);
        const std::size_t size = size_of(seq);
        ASSERT_EQ(zmq_send(push, body.data(), size, 0), static_cast<int>(size))
            << "message " << seq;
        if (seq % 3 == 2)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

// Receives `count` messages in order, sleeping in zmq_poll whenever the socket
// has nothing; every `pause_every` polls it sleeps 2 ms first (the pipe fills
// to the HWM and the engine stops reading until the socket drains it).
void receive_all(void *pull, int count, int pause_every) {
    std::vector<char> buf(sizes.back() + 1);
    int got = 0;
    for (int polls = 1; got < count; ++polls) {
        if (pause_every > 0 && polls % pause_every == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        zmq_pollitem_t item{pull, 0, ZMQ_POLLIN, 0};
        ASSERT_EQ(zmq_poll(&item, 1, poll_timeout_ms), 1)
            << "no POLLIN with " << count - got << " of " << count << " messages still to come";
        int n = 0;
        while ((n = zmq_recv(pull, buf.data(), buf.size(), ZMQ_DONTWAIT)) >= 0) {
            int seq = -1;
            std::memcpy(&seq, buf.data(), sizeof seq);
            ASSERT_EQ(seq, got) << "out of order";
            ASSERT_EQ(static_cast<std::size_t>(n), size_of(got)) << "message " << got;
            ++got;
        }
        ASSERT_EQ(zmq_errno(), EAGAIN);
    }
}

struct stress_case {
    const char *name;
    int hwm;  // both sides; 0 = the default
    bool pull_binds;
    int pause_every;
    bool curve = false;  // CURVE: the sender seals, the receiver opens each frame
};

// CURVE with the PULL as server: the engine's reads then deliver opened frames
// (engine_input::open_frame), and a PUSH may seal several large messages into
// one batch (engine_output::add_sealed).
void use_curve(void *pull, void *push) {
    char server_public[41], server_secret[41], client_public[41], client_secret[41];
    ASSERT_EQ(zmq_curve_keypair(server_public, server_secret), 0);
    ASSERT_EQ(zmq_curve_keypair(client_public, client_secret), 0);
    set_int(pull, ZMQ_CURVE_SERVER, 1);
    ASSERT_EQ(zmq_setsockopt(pull, ZMQ_CURVE_SECRETKEY, server_secret, 40), 0);
    ASSERT_EQ(zmq_setsockopt(push, ZMQ_CURVE_SERVERKEY, server_public, 40), 0);
    ASSERT_EQ(zmq_setsockopt(push, ZMQ_CURVE_PUBLICKEY, client_public, 40), 0);
    ASSERT_EQ(zmq_setsockopt(push, ZMQ_CURVE_SECRETKEY, client_secret, 40), 0);
}

class WakeStress : public ::testing::TestWithParam<stress_case> {};

TEST_P(WakeStress, EveryMessageArrivesInOrder) {
    const auto c = GetParam();
    // Six cycles of the sizes (about 7 MiB): enough runs of full reads, short
    // enough for every CI run.
    const int count = static_cast<int>(sizes.size()) * 6;
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    if (c.hwm > 0) {
        set_int(pull, ZMQ_RCVHWM, c.hwm);
        set_int(push, ZMQ_SNDHWM, c.hwm);
    }
    if (c.curve)
        use_curve(pull, push);
    void *binder = c.pull_binds ? pull : push;
    void *connecter = c.pull_binds ? push : pull;
    ASSERT_EQ(zmq_bind(binder, "tcp://127.0.0.1:*"), 0);
    ASSERT_EQ(zmq_connect(connecter, last_endpoint(binder).c_str()), 0);
    std::thread sender([&] { send_all(push, count); });
    receive_all(pull, count, c.pause_every);
    sender.join();
    zmq_close(push);
    zmq_close(pull);
    zmq_ctx_term(ctx);
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, WakeStress,
    ::testing::Values(stress_case{"default_hwm_bind", 0, true, 0},
                      stress_case{"default_hwm_connect_pausing", 0, false, 7},
                      stress_case{"hwm2_bind_pausing", 2, true, 3},
                      stress_case{"hwm5_connect", 5, false, 0},
                      stress_case{"curve_default_hwm_bind", 0, true, 0, true},
                      stress_case{"curve_hwm2_connect_pausing", 2, false, 3, true}),
    [](const ::testing::TestParamInfo<stress_case> &i) { return std::string(i.param.name); });

}  // namespace
