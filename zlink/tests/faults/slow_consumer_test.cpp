// Slow consumer across processes. tests/sockets already checks HWM inside
// one process (the consumer's IO thread keeps running); here the consumer is
// another process, frozen with SIGSTOP after the handshake, so its kernel
// socket buffer fills up for real before the HWM queues do. 2000 messages of
// 16 KiB (32 MB) exceed both HWMs plus any loopback/unix socket buffer.
//
// zmq_socket(3): PAIR, DEALER: "When a ZMQ_PAIR/ZMQ_DEALER socket enters the
// mute state due to having reached the high water mark [...] any zmq_send(3)
// operations on the socket shall block until the mute state ends or at least
// one peer becomes available for sending; messages are not discarded."
// zmq_setsockopt(3), ZMQ_ROUTER_MANDATORY: "When set to 1 [...] If the send
// call would block [...] (due to reaching the HWM) it returns EAGAIN" with
// ZMQ_DONTWAIT and blocks otherwise.
// RFC 29, PUB: "SHALL silently drop the message if the queue for a
// subscriber is full" and "SHALL NOT block on sending."
#include "fault_util.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <tuple>

using namespace faults;

namespace {

constexpr int hwm = 50;
constexpr int count = 2000;
constexpr size_t body_size = 16 * 1024;

// Same pattern as fault_peer checks: byte i of message seq.
std::string body_for(long seq) {
    std::string b(body_size, '\0');
    for (size_t i = 0; i < b.size(); ++i)
        b[i] = static_cast<char>(static_cast<unsigned char>(seq * 7 + i));
    return b;
}

struct pattern_t {
    const char *name;
    int type;           // this process: the fast sender
    const char *child;  // the slow receiver's socket type
    bool blocking;      // false: PUB, drops at HWM
};
const pattern_t patterns[] = {
    {"PAIR", ZMQ_PAIR, "PAIR", true},
    {"DEALER", ZMQ_DEALER, "ROUTER", true},
    {"ROUTER_MANDATORY", ZMQ_ROUTER, "DEALER", true},
    {"PUB", ZMQ_PUB, "SUB", false},
};

// Readable test names in gtest's failure messages.
void PrintTo(const pattern_t &p, std::ostream *os) { *os << p.name; }

class SlowConsumer : public ::testing::TestWithParam<std::tuple<const char *, pattern_t>> {
protected:
    void SetUp() override {
        ctx_ = zmq_ctx_new();
        transport_ = std::get<0>(GetParam());
        p_ = std::get<1>(GetParam());
        s_ = zmq_socket(ctx_, p_.type);
        set_int(s_, ZMQ_LINGER, 0);
        set_int(s_, ZMQ_SNDHWM, hwm);
        if (p_.type == ZMQ_ROUTER)
            set_int(s_, ZMQ_ROUTER_MANDATORY, 1);
        const std::string ep = transport_ == "tcp" ? "tcp://127.0.0.1:*" : fixed_endpoint("ipc");
        ASSERT_EQ(zmq_bind(s_, ep.c_str()), 0) << ep << ": " << zmq_strerror(zmq_errno());
        ep_ = last_endpoint(s_);
    }
    void TearDown() override {
        zmq_close(s_);
        zmq_ctx_term(ctx_);
        if (ep_.rfind("ipc://", 0) == 0)
            ::unlink(ep_.substr(6).c_str());
    }

    // One whole message; -1 with errno when refused (only ever on the first
    // frame: HWM counts whole messages).
    int send_msg(const std::string &head, const std::string *body, int flags) {
        if (p_.type == ZMQ_ROUTER && zmq_send(s_, "slow", 4, ZMQ_SNDMORE | flags) < 0)
            return -1;
        const bool more = body != nullptr;
        if (zmq_send(s_, head.data(), head.size(), (more ? ZMQ_SNDMORE : 0) | flags) < 0) {
            // A refused header after an accepted ROUTER id would split a message.
            if (p_.type == ZMQ_ROUTER)
                ADD_FAILURE() << "refused after the routing id frame";
            return -1;
        }
        if (more && zmq_send(s_, body->data(), body->size(), flags) < 0) {
            ADD_FAILURE() << "refused in mid-message: " << zmq_strerror(zmq_errno());
            return -1;
        }
        return 0;
    }

    // The child has completed its handshake (it saw a "sync" message).
    bool sync_with(child_process &c) {
        const auto deadline = clock::now() + 10s;
        while (clock::now() < deadline) {
            // May be dropped/unroutable until connected; queued ones count towards the HWM.
            if (send_msg("sync", nullptr, ZMQ_DONTWAIT) == 0)
                ++syncs_sent_;
            if (auto l = c.read_line(20ms))
                return *l == "READY";
        }
        return false;
    }

    void *ctx_ = nullptr;
    void *s_ = nullptr;
    std::string transport_, ep_;
    pattern_t p_{};
    int syncs_sent_ = 0;
};

TEST_P(SlowConsumer, FrozenConsumerProcess) {
    std::vector<std::string> args{"--role",    "receiver",
                                  "--type",    p_.child,
                                  "--connect", ep_,
                                  "--size",    std::to_string(body_size),
                                  "--rcvhwm",  std::to_string(hwm)};
    if (p_.blocking)
        args.insert(args.end(), {"--count", std::to_string(count)});
    else
        args.insert(args.end(), {"--until-end", "--order", "increasing"});
    if (p_.type == ZMQ_ROUTER)
        args.insert(args.end(), {"--routing-id", "slow"});
    child_process c(args);
    ASSERT_TRUE(c.started());
    ASSERT_TRUE(sync_with(c)) << "the consumer never connected";
    c.signal(SIGSTOP);  // frozen: reads nothing, its kernel buffer fills

    if (!p_.blocking) {
        // PUB: every send succeeds at once even though nobody reads.
        const auto t0 = clock::now();
        for (int seq = 0; seq < count; ++seq) {
            const std::string body = body_for(seq);
            ASSERT_EQ(send_msg(std::to_string(seq), &body, ZMQ_DONTWAIT), 0)
                << "PUB refused message " << seq << ": " << zmq_strerror(zmq_errno());
        }
        EXPECT_LT(clock::now() - t0, 10s) << "PUB was slowed down by the frozen subscriber";
        c.signal(SIGCONT);
        // The end marker may be dropped too while the queue drains: repeat it.
        std::optional<std::string> done;
        std::vector<std::string> seen;
        const auto deadline = clock::now() + 20s;
        while (!done && clock::now() < deadline) {
            send_msg("end", nullptr, ZMQ_DONTWAIT);
            done = c.expect_line("DONE ", 20ms, &seen);
        }
        ASSERT_TRUE(done && done->rfind("DONE ", 0) == 0) << done.value_or("<no DONE>");
        ASSERT_EQ(c.wait_exit(5s), 0);
        long n = 0, first = 0, last = 0;
        ASSERT_EQ(std::sscanf(done->c_str(), "DONE n=%ld first=%ld last=%ld", &n, &first, &last),
                  3);
        RecordProperty("received", static_cast<int>(n));
        EXPECT_GT(n, 0);
        EXPECT_LT(n, count) << "nothing was dropped although the subscriber was frozen";
        // In order and whole: checked message by message in the child.
        return;
    }

    // Blocking patterns: fill everything (HWMs + kernel buffers) without
    // blocking; the queues are full when no more is taken for 300 ms.
    int accepted = 0;
    int quiet_rounds = 0;
    while (accepted < count && quiet_rounds < 3) {
        const std::string body = body_for(accepted);
        if (send_msg(std::to_string(accepted), &body, ZMQ_DONTWAIT) == 0) {
            ++accepted;
            quiet_rounds = 0;
            continue;
        }
        ASSERT_EQ(zmq_errno(), EAGAIN) << zmq_strerror(zmq_errno());
        ++quiet_rounds;
        std::this_thread::sleep_for(100ms);
    }
    RecordProperty("accepted_while_frozen", accepted);
    std::printf("%s/%s: %d messages of %zu B accepted while the consumer was frozen (SNDHWM %d)\n",
                transport_.c_str(), p_.name, accepted, body_size, hwm);
    ASSERT_LT(accepted, count) << "the sender never reached its HWM";
    // The pipe's HWM counts messages its reader has not yet acknowledged,
    // possibly including the sync messages.
    ASSERT_GE(accepted + syncs_sent_, hwm) << "refused before the HWM was reached";

    // Blocking send: blocks for SNDTIMEO, then EAGAIN; nothing is discarded.
    set_int(s_, ZMQ_SNDTIMEO, 300);
    const auto t0 = clock::now();
    const std::string body = body_for(accepted);
    EXPECT_EQ(send_msg(std::to_string(accepted), &body, 0), -1) << "a full queue took a message";
    EXPECT_EQ(zmq_errno(), EAGAIN);
    EXPECT_GE(clock::now() - t0, 250ms) << "the send did not block";

    c.signal(SIGCONT);
    set_int(s_, ZMQ_SNDTIMEO, 10000);
    for (int seq = accepted; seq < count; ++seq) {
        const std::string b = body_for(seq);
        if (send_msg(std::to_string(seq), &b, 0) != 0) {
            const std::string why = zmq_strerror(zmq_errno());
            FAIL() << "seq " << seq << ": " << why
                   << "; consumer said: " << c.expect_line("DONE", 1s).value_or("<nothing>");
        }
    }
    std::vector<std::string> seen;
    auto done = c.expect_line("DONE ", 30s, &seen);
    ASSERT_TRUE(done.has_value()) << "the consumer did not get all messages";
    EXPECT_EQ(*done,
              "DONE n=" + std::to_string(count) + " first=0 last=" + std::to_string(count - 1));
    EXPECT_EQ(c.wait_exit(5s), 0);
}

INSTANTIATE_TEST_SUITE_P(, SlowConsumer,
                         ::testing::Combine(::testing::Values("tcp", "ipc"),
                                            ::testing::ValuesIn(patterns)),
                         [](const auto &info) {
                             return std::string(std::get<0>(info.param)) + "_" +
                                    std::get<1>(info.param).name;
                         });

}  // namespace
