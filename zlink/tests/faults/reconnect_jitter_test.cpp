// The wait between reconnect attempts, as libzmq 4.3.5 draws it with the
// default RECONNECT_IVL_MAX (0): RECONNECT_IVL plus a random part below
// RECONNECT_IVL, a new draw for every attempt (stream_connecter_base_t::
// get_new_reconnect_ivl). zmq_setsockopt(3): "The reconnection interval may
// be randomized by libzmq to prevent reconnection storms in topologies with a
// large number of peers per socket."
//
// Why it matters (the faults experiment, run 20261202T090133Z-9e56): zlink
// waited exactly RECONNECT_IVL every time. A peer killed and restarted 1.5 s
// later (15 intervals) came back a few ms after one of zlink's retries on
// every repetition, and zlink reached it a whole interval late (reconnect
// 85-110 ms after the restart against libzmq's ~55 ms): decided SLOW. A fixed
// wait also keeps every client of a restarted server retrying in lockstep.
//
// The value of CONNECT_RETRIED is the wait the connecter chose, so the
// monitor shows the draws. zmq.h only.
#include "fault_util.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

using namespace faults;

namespace {

constexpr int ivl_ms = 10;  // short: 12 refused attempts take ~0.2 s
constexpr int retries = 12;

// The waits of the first `n` CONNECT_RETRIED events of a socket that keeps
// connecting to a port nobody listens on (every attempt refused).
std::vector<uint32_t> retry_waits(void *ctx, const std::string &endpoint, int ivl, int ivl_max,
                                  int n) {
    static int id = 0;
    const std::string mon_ep = "inproc://reconnect-jitter-" + std::to_string(id++);
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    set_int(s, ZMQ_LINGER, 0);
    set_int(s, ZMQ_RECONNECT_IVL, ivl);
    set_int(s, ZMQ_RECONNECT_IVL_MAX, ivl_max);
    EXPECT_EQ(zmq_socket_monitor(s, mon_ep.c_str(), ZMQ_EVENT_CONNECT_RETRIED), 0);
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    set_int(mon, ZMQ_LINGER, 0);
    set_int(mon, ZMQ_RCVTIMEO, 5000);
    EXPECT_EQ(zmq_connect(mon, mon_ep.c_str()), 0);
    EXPECT_EQ(zmq_connect(s, endpoint.c_str()), 0);
    std::vector<uint32_t> waits;
    while (int(waits.size()) < n) {
        const auto f = recv_frames(mon);
        if (f.size() != 2 || f[0].size() != 6)
            break;  // timed out: the test sees too few waits
        uint32_t value;
        std::memcpy(&value, f[0].data() + 2, 4);
        waits.push_back(value);
    }
    zmq_socket_monitor(s, nullptr, 0);
    zmq_close(s);
    zmq_close(mon);
    return waits;
}

class ReconnectJitter : public ::testing::Test {
protected:
    void SetUp() override { ctx_ = zmq_ctx_new(); }
    void TearDown() override { zmq_ctx_term(ctx_); }
    void *ctx_ = nullptr;
    // Refused at once: nothing listens there.
    std::string refused_ = "tcp://127.0.0.1:" + std::to_string(free_tcp_port());
};

// Every wait is in [IVL, 2 IVL), and they are not all the same: a fixed wait
// (the old zlink) gives IVL twelve times.
TEST_F(ReconnectJitter, EveryWaitIsIvlPlusARandomPartBelowIvl) {
    const auto waits = retry_waits(ctx_, refused_, ivl_ms, 0, retries);
    ASSERT_EQ(int(waits.size()), retries);
    for (uint32_t w : waits) {
        EXPECT_GE(w, uint32_t(ivl_ms));
        EXPECT_LT(w, uint32_t(2 * ivl_ms));
    }
    const std::set<uint32_t> distinct(waits.begin(), waits.end());
    // Twelve draws from 10 values: all equal has probability 10^-11.
    EXPECT_GT(distinct.size(), 1u) << "every wait was " << waits.front() << " ms";
}

// Two sockets (as two clients of one server) draw different waits, so they
// do not retry in lockstep. libzmq 4.3.5 never seeds rand(), so its
// processes all draw the same sequence; zlink seeds each connecter.
TEST_F(ReconnectJitter, TwoSocketsDrawDifferentWaits) {
    const auto a = retry_waits(ctx_, refused_, ivl_ms, 0, retries);
    const auto b = retry_waits(ctx_, refused_, ivl_ms, 0, retries);
    ASSERT_EQ(int(a.size()), retries);
    ASSERT_EQ(int(b.size()), retries);
    EXPECT_NE(a, b);  // equal by chance: probability 10^-12
}

// With RECONNECT_IVL_MAX set, libzmq 4.3.5 doubles the wait from IVL up to
// the maximum, with no random part; so does zlink.
TEST_F(ReconnectJitter, WithAMaximumTheWaitDoublesWithoutJitter) {
    const auto waits = retry_waits(ctx_, refused_, ivl_ms, 4 * ivl_ms, 5);
    const std::vector<uint32_t> expected = {ivl_ms, 2 * ivl_ms, 4 * ivl_ms, 4 * ivl_ms, 4 * ivl_ms};
    EXPECT_EQ(waits, expected);
}

}  // namespace
