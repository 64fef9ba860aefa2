// Hostile wire input, repeated, with memory bounded. tests/interop's
// "hostile" case sends each bad input once and checks the connection closes;
// this adds what it does not check: the zmq_socket_monitor event for each bad
// connection, a well-behaved peer on the same socket doing a round trip
// between every two attacks (and never being dropped), a few hundred
// repetitions per case, and the process RSS staying bounded throughout.
// Case (f) runs against a socket WITHOUT ZMQ_MAXMSGSIZE: the declared 2^62
// size must not be trusted for an allocation either way.
//
// RFC 37: "A peer MUST [...] close the connection" / "the peer SHOULD
// close the connection" on an invalid greeting or mechanism mismatch, and
// zmq_setsockopt(3), ZMQ_MAXMSGSIZE: "Limits the size of the inbound message.
// If a peer sends a message larger than ZMQ_MAXMSGSIZE it is disconnected."
#include "fault_util.hpp"
#include "zmtp_bytes.hpp"

#include <gtest/gtest.h>

#include <netinet/tcp.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>

using namespace faults;

// Case (f) makes the library ask malloc for 2^62 bytes (as libzmq does without
// ZMQ_MAXMSGSIZE); glibc returns NULL and the connection is dropped. Under
// ASan/TSan that request is fatal unless the sanitizer may return NULL too, as
// glibc does: these hooks set that default for this test binary only.
extern "C" const char *__asan_default_options() { return "allocator_may_return_null=1"; }
extern "C" const char *__tsan_default_options() { return "allocator_may_return_null=1"; }

namespace {

constexpr int reps = 300;
constexpr int warmup = 50;  // RSS baseline after allocator/thread caches settle
// After the warm-up the reps fall into three equal windows of 83 connections;
// RSS is judged by how much each window's peak rose over the previous one's.
// A leak rises in both steps alike; a one-time rise (an allocator arena or a
// cache first touched late, which a loaded CI host once put after rep 50:
// base 5448 KiB, peak +1360 KiB, where quiet runs start near 6100 KiB) rises
// in one. So the smaller step is the leak's measure: 256 KiB catches about
// 3.5 KiB or more per hostile connection (checked: a 3.5 KiB malloc per rep
// rose 292-304 KiB a step). Quiet runs rise 0-200 KiB in all; under three
// busy loops, up to 240 KiB in all.
constexpr int rss_windows = 3;
constexpr long rss_step_limit = 256L << 10;
// And however the rises fall, memory stays bounded: this catches a leak that
// grows in bursts.
constexpr long rss_growth_limit = 8L << 20;
constexpr int max_msg = 1 << 20;

struct attack_t {
    const char *name;
    bool target_has_max;   // ZMQ_MAXMSGSIZE set on the target
    bool client_hangs_up;  // (d): we close; otherwise the target must close on us
    std::function<std::string(int rep, std::mt19937 &)> bytes;
};

const attack_t attacks[] = {
    {"malformed_greeting", true, false,
     [](int rep, std::mt19937 &) {
         switch (rep % 3) {
         case 0: {
             std::string g = greeting();
             g[0] = '\x00';
             return g;
         }  // bad signature
         case 1: return greeting(2, 0);   // ZMTP 2.0
         default: return greeting(0, 0);  // version 0.0
         }
     }},
    {"unsupported_mechanism", true, false,
     [](int rep, std::mt19937 &) { return greeting(3, 1, rep % 2 ? "PLAIN" : "CURVE"); }},
    {"frame_over_maxmsgsize", true, false,
     [](int, std::mt19937 &) {
         // Header declares MAXMSGSIZE + 1 and 64 KiB of the body follow.
         return greeting() + ready_dealer() + long_frame_header(max_msg + 1) +
                std::string(64 * 1024, 'x');
     }},
    {"truncated_frame_then_close", true, true,
     [](int, std::mt19937 &) {
         return greeting() + ready_dealer() +
                std::string("\x00\x10"
                            "abc",
                            5);
     }},
    // (d) also during the handshake: half a greeting, then the client hangs up.
    {"truncated_greeting_then_close", true, true,
     [](int, std::mt19937 &) { return greeting().substr(0, 20); }},
    {"random_garbage", true, false,
     [](int, std::mt19937 &rng) {
         // At least a greeting's length, so the target always has enough to decide.
         std::string g(64 + rng() % 4032, '\0');
         for (auto &c : g)
             c = static_cast<char>(rng());
         return g;
     }},
    {"huge_declared_size_2pow62", false, false,
     [](int, std::mt19937 &) {
         return greeting() + ready_dealer() + long_frame_header(uint64_t{1} << 62);
     }},
};

void PrintTo(const attack_t &a, std::ostream *os) { *os << a.name; }

long rss_bytes() {
    long pages = 0, resident = 0;
    if (FILE *f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return resident * ::sysconf(_SC_PAGESIZE);
}

bool is_failure_event(int ev) {
    return ev == ZMQ_EVENT_DISCONNECTED || ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
           ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
}

class HostileInput : public ::testing::TestWithParam<attack_t> {
protected:
    void SetUp() override {
        ctx_ = zmq_ctx_new();
        target_ = zmq_socket(ctx_, ZMQ_ROUTER);
        set_int(target_, ZMQ_LINGER, 0);
        set_int(target_, ZMQ_RCVTIMEO, 5000);
        set_int(target_, ZMQ_ROUTER_MANDATORY, 1);  // a dropped good peer shows as EHOSTUNREACH
        if (GetParam().target_has_max) {
            const int64_t m = max_msg;
            ASSERT_EQ(zmq_setsockopt(target_, ZMQ_MAXMSGSIZE, &m, sizeof m), 0);
        }
        const std::string mon_ep = "inproc://faults-monitor";
        ASSERT_EQ(zmq_socket_monitor(target_, mon_ep.c_str(), ZMQ_EVENT_ALL), 0);
        mon_ = zmq_socket(ctx_, ZMQ_PAIR);
        set_int(mon_, ZMQ_LINGER, 0);
        ASSERT_EQ(zmq_connect(mon_, mon_ep.c_str()), 0);
        ASSERT_EQ(zmq_bind(target_, "tcp://127.0.0.1:*"), 0);
        const std::string ep = last_endpoint(target_);
        port_ = std::stoi(ep.substr(ep.rfind(':') + 1));

        good_ = zmq_socket(ctx_, ZMQ_DEALER);
        set_int(good_, ZMQ_LINGER, 0);
        set_int(good_, ZMQ_RCVTIMEO, 5000);
        zmq_setsockopt(good_, ZMQ_ROUTING_ID, "good", 4);
        ASSERT_EQ(zmq_connect(good_, ep.c_str()), 0);
        ASSERT_TRUE(round_trip(-1));
    }
    void TearDown() override {
        zmq_close(good_);
        zmq_close(target_);
        zmq_close(mon_);
        zmq_ctx_term(ctx_);
    }

    // The good peer sends, the target answers it by routing id.
    bool round_trip(int rep) {
        const std::string ping = "ping " + std::to_string(rep),
                          pong = "pong " + std::to_string(rep);
        if (zmq_send(good_, ping.data(), ping.size(), 0) < 0)
            return false;
        auto in = recv_frames(target_);
        EXPECT_EQ(in, (std::vector<std::string>{"good", ping})) << "rep " << rep;
        if (zmq_send(target_, "good", 4, ZMQ_SNDMORE) < 0 ||
            zmq_send(target_, pong.data(), pong.size(), 0) < 0) {
            ADD_FAILURE() << "rep " << rep
                          << ": good peer unroutable: " << zmq_strerror(zmq_errno());
            return false;
        }
        auto back = recv_frames(good_);
        EXPECT_EQ(back, std::vector<std::string>{pong}) << "rep " << rep;
        return back == std::vector<std::string>{pong};
    }

    // Next monitor event number, or -1 after `timeout_ms`.
    int next_event(int timeout_ms) {
        zmq_pollitem_t it{mon_, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, timeout_ms) != 1)
            return -1;
        auto f = recv_frames(mon_);
        if (f.size() != 2 || f[0].size() != 6)
            return -1;
        uint16_t ev;
        std::memcpy(&ev, f[0].data(), 2);
        ev == ZMQ_EVENT_ACCEPTED ? ++accepted_ : is_failure_event(ev) ? ++failures_ : 0;
        ++events_[ev];
        return ev;
    }

    std::string attack(const std::string &bytes, bool we_hang_up) {
        return raw_attack(port_, bytes, we_hang_up);
    }

    void *ctx_ = nullptr, *target_ = nullptr, *mon_ = nullptr, *good_ = nullptr;
    int port_ = 0;
    int accepted_ = 0, failures_ = 0;
    std::map<int, int> events_;  // event number -> count, shown at the end
};

TEST_P(HostileInput, ConnectionClosedPeersServedMemoryBounded) {
    const attack_t &a = GetParam();
    std::mt19937 rng(12345);
    long rss_base = 0, rss_peak = 0;
    long window_peak[rss_windows] = {};
    constexpr int window_reps = (reps - warmup - 1) / rss_windows;
    // Events of the good peer's connection, before any attack.
    while (next_event(200) != -1) {
    }
    ASSERT_EQ(failures_, 0);
    const int accepted_before = accepted_;
    for (int rep = 0; rep < reps; ++rep) {
        const int failures_before = failures_;
        const std::string why = attack(a.bytes(rep, rng), a.client_hangs_up);
        ASSERT_EQ(why, "") << a.name << " rep " << rep;
        // zmq_socket_monitor(3) must report the failed connection.
        const auto deadline = clock::now() + 5s;
        while (failures_ == failures_before && clock::now() < deadline)
            next_event(100);
        ASSERT_GT(failures_, failures_before)
            << a.name << " rep " << rep << ": no disconnect/handshake-failure event";
        ASSERT_TRUE(round_trip(rep)) << "the good peer was not served after rep " << rep;
        if (rep == warmup)
            rss_base = rss_bytes();
        if (rep > warmup) {
            const long now = rss_bytes();
            rss_peak = std::max(rss_peak, now);
            const int w = std::min((rep - warmup - 1) / window_reps, rss_windows - 1);
            window_peak[w] = std::max(window_peak[w], now);
        }
    }
    while (next_event(100) != -1) {
    }
    EXPECT_EQ(accepted_ - accepted_before, reps)
        << "every attack is one accepted connection; the good peer never reconnected";
    RecordProperty("rss_base_kib", static_cast<int>(rss_base >> 10));
    RecordProperty("rss_peak_kib", static_cast<int>(rss_peak >> 10));
    std::printf("%s: RSS after %d reps %ld KiB, peak over the next %d reps %ld KiB (+%ld KiB)\n",
                a.name, warmup, rss_base >> 10, reps - warmup - 1, rss_peak >> 10,
                (rss_peak - rss_base) >> 10);
    // A step may be negative (RSS fell): it is then the smaller one.
    long smaller_step = window_peak[1] - window_peak[0];
    for (int w = 2; w < rss_windows; ++w)
        smaller_step = std::min(smaller_step, window_peak[w] - window_peak[w - 1]);
    std::printf("%s: window peaks %ld / %ld / %ld KiB, the smaller rise %ld KiB\n", a.name,
                window_peak[0] >> 10, window_peak[1] >> 10, window_peak[2] >> 10,
                smaller_step / 1024);
    std::string seen;
    for (auto [ev, n] : events_) {
        char one[32];
        std::snprintf(one, sizeof one, " 0x%04x:%d", ev, n);
        seen += one;
    }
    std::printf("%s: monitor events (event:count):%s\n", a.name, seen.c_str());
#if defined(__SANITIZE_ADDRESS__)
    // ASan keeps freed blocks in its quarantine (up to 256 MiB), so RSS grows here
    // whether or not anything leaks; in this build LeakSanitizer checks for leaks at
    // exit instead, and the plain build of this same test asserts the RSS bound.
    std::printf("%s: RSS bound not asserted under AddressSanitizer (quarantine); LeakSanitizer "
                "checks leaks\n",
                a.name);
#elif defined(__SANITIZE_THREAD__)
    // TSan's shadow memory and per-thread/per-sync-object state grow RSS by ~5 KiB
    // per connection (measured 1.25 MiB over 249), the size of leak this bound is
    // meant to catch; the TSan build looks for races, the plain and ASan builds of
    // this same test check memory.
    std::printf("%s: RSS bound not asserted under ThreadSanitizer (shadow memory); plain and ASan "
                "builds check it\n",
                a.name);
#else
    EXPECT_LT(smaller_step, rss_step_limit) << "memory grows with each hostile connection";
    EXPECT_LT(rss_peak - rss_base, rss_growth_limit) << "memory grows without bound";
#endif
}

INSTANTIATE_TEST_SUITE_P(, HostileInput, ::testing::ValuesIn(attacks),
                         [](const auto &info) { return std::string(info.param.name); });

}  // namespace
