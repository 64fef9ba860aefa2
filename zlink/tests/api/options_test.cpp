// Generic socket options and context options with libzmq 4.3.5's rules:
// defaults, accepted ranges, exact value sizes, strings, filters, and the
// options zlink refuses (GSSAPI/VMCI: EINVAL).
#include <dirent.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "core/options.hpp"
#include "zlink.h"
#include "zmq.h"

namespace {

class SocketOptions : public ::testing::Test {
protected:
    void SetUp() override {
        ctx = zmq_ctx_new();
        s = zmq_socket(ctx, ZMQ_DEALER);
    }
    void TearDown() override {
        zmq_close(s);
        zmq_ctx_term(ctx);
    }
    int get_int(int option) {
        int v = INT_MIN;
        size_t len = sizeof v;
        EXPECT_EQ(zmq_getsockopt(s, option, &v, &len), 0) << option;
        EXPECT_EQ(len, sizeof v);
        return v;
    }
    int set_int(int option, int v) { return zmq_setsockopt(s, option, &v, sizeof v); }

    void *ctx = nullptr;
    void *s = nullptr;
};

// Each integer option: its default, the lowest accepted value, and the value
// just below it (refused with EINVAL).
struct int_rule {
    const char *name;
    int option;
    int dflt;
    int lowest;
};

const int_rule int_rules[] = {
    {"SNDHWM", ZMQ_SNDHWM, 1000, 0},
    {"RCVHWM", ZMQ_RCVHWM, 1000, 0},
    {"LINGER", ZMQ_LINGER, -1, -1},
    {"RECONNECT_IVL", ZMQ_RECONNECT_IVL, 100, -1},
    {"RECONNECT_IVL_MAX", ZMQ_RECONNECT_IVL_MAX, 0, 0},
    {"BACKLOG", ZMQ_BACKLOG, 100, 0},
    {"SNDBUF", ZMQ_SNDBUF, -1, -1},
    {"RCVBUF", ZMQ_RCVBUF, -1, -1},
    {"SNDTIMEO", ZMQ_SNDTIMEO, -1, -1},
    {"RCVTIMEO", ZMQ_RCVTIMEO, -1, -1},
    {"TCP_KEEPALIVE", ZMQ_TCP_KEEPALIVE, -1, -1},
    {"TCP_KEEPALIVE_CNT", ZMQ_TCP_KEEPALIVE_CNT, -1, -1},
    {"TCP_KEEPALIVE_IDLE", ZMQ_TCP_KEEPALIVE_IDLE, -1, -1},
    {"TCP_KEEPALIVE_INTVL", ZMQ_TCP_KEEPALIVE_INTVL, -1, -1},
    {"HEARTBEAT_IVL", ZMQ_HEARTBEAT_IVL, 0, 0},
    {"HEARTBEAT_TIMEOUT", ZMQ_HEARTBEAT_TIMEOUT, -1, 0},
    {"HANDSHAKE_IVL", ZMQ_HANDSHAKE_IVL, 30000, 0},
    {"CONNECT_TIMEOUT", ZMQ_CONNECT_TIMEOUT, 0, 0},
    {"TOS", ZMQ_TOS, 0, 0},
    {"TCP_MAXRT", ZMQ_TCP_MAXRT, 0, 0},
    {"USE_FD", ZMQ_USE_FD, -1, -1},
    {"RATE", ZMQ_RATE, 100, 1},
    {"RECOVERY_IVL", ZMQ_RECOVERY_IVL, 10000, 0},
    {"MULTICAST_HOPS", ZMQ_MULTICAST_HOPS, 1, 1},
    {"MULTICAST_MAXTPDU", ZMQ_MULTICAST_MAXTPDU, 1500, 1},
    {"IMMEDIATE", ZMQ_IMMEDIATE, 0, 0},
    {"IPV6", ZMQ_IPV6, 0, 0},
    {"IPV4ONLY", ZMQ_IPV4ONLY, 1, 0},
};

TEST_F(SocketOptions, IntegerDefaultsRangesAndRoundTrips) {
    for (const auto &r : int_rules) {
        EXPECT_EQ(get_int(r.option), r.dflt) << r.name;
        EXPECT_EQ(set_int(r.option, r.lowest), 0) << r.name;
        EXPECT_EQ(get_int(r.option), r.lowest) << r.name;
        errno = 0;
        EXPECT_EQ(set_int(r.option, r.lowest - 1), -1) << r.name;
        EXPECT_EQ(errno, EINVAL) << r.name;
        EXPECT_EQ(get_int(r.option), r.lowest) << r.name << ": a refused value changed it";
    }
}

TEST_F(SocketOptions, IntegersNeedExactlyAnInt) {
    int64_t wide = 5;
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_SNDHWM, &wide, sizeof wide), -1);
    EXPECT_EQ(errno, EINVAL);
    size_t len = sizeof wide;
    EXPECT_EQ(zmq_getsockopt(s, ZMQ_SNDHWM, &wide, &len), -1);  // libzmq wants an exact size
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(SocketOptions, BooleansAcceptOnlyZeroAndOne) {
    EXPECT_EQ(set_int(ZMQ_IPV6, 2), -1);
    EXPECT_EQ(set_int(ZMQ_IMMEDIATE, 2), -1);
    EXPECT_EQ(set_int(ZMQ_IPV4ONLY, 0), 0);
    EXPECT_EQ(get_int(ZMQ_IPV6), 1);  // IPV4ONLY is the inverse of IPV6
}

TEST_F(SocketOptions, HeartbeatTtlIsStoredInDeciseconds) {
    EXPECT_EQ(set_int(ZMQ_HEARTBEAT_TTL, 1234), 0);
    EXPECT_EQ(get_int(ZMQ_HEARTBEAT_TTL), 1200);
    EXPECT_EQ(set_int(ZMQ_HEARTBEAT_TTL, 6553599), 0);
    EXPECT_EQ(set_int(ZMQ_HEARTBEAT_TTL, 6553600), -1);
}

TEST_F(SocketOptions, SixtyFourBitOptions) {
    int64_t max = -2;
    size_t len = sizeof max;
    ASSERT_EQ(zmq_getsockopt(s, ZMQ_MAXMSGSIZE, &max, &len), 0);
    EXPECT_EQ(max, -1);
    max = 1 << 20;
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max, sizeof max), 0);
    uint64_t affinity = 3;
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_AFFINITY, &affinity, sizeof affinity), 0);
    affinity = 0;
    len = sizeof affinity;
    ASSERT_EQ(zmq_getsockopt(s, ZMQ_AFFINITY, &affinity, &len), 0);
    EXPECT_EQ(affinity, 3u);
    EXPECT_EQ(set_int(ZMQ_AFFINITY, 1), -1);  // an int is the wrong size
}

TEST_F(SocketOptions, BindToDeviceIsAStringUpToSixteenBytes) {
    char name[32];
    size_t len = sizeof name;
    ASSERT_EQ(zmq_getsockopt(s, ZMQ_BINDTODEVICE, name, &len), 0);
    EXPECT_EQ(len, 1u);
    EXPECT_EQ(name[0], '\0');
    ASSERT_EQ(zmq_setsockopt(s, ZMQ_BINDTODEVICE, "eth0", 4), 0);
    len = sizeof name;
    ASSERT_EQ(zmq_getsockopt(s, ZMQ_BINDTODEVICE, name, &len), 0);
    EXPECT_STREQ(name, "eth0");
    EXPECT_EQ(len, 5u);
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_BINDTODEVICE, "0123456789abcdefg", 17), -1);
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_BINDTODEVICE, nullptr, 0), 0);  // clears
}

TEST_F(SocketOptions, StringsAreZeroFilledAndNeedRoom) {
    ASSERT_EQ(zmq_setsockopt(s, ZMQ_ROUTING_ID, "abc", 3), 0);
    char id[8];
    std::memset(id, 'x', sizeof id);
    size_t len = sizeof id;
    ASSERT_EQ(zmq_getsockopt(s, ZMQ_ROUTING_ID, id, &len), 0);
    EXPECT_EQ(len, 3u);  // a routing id is bytes, no NUL
    EXPECT_EQ(std::string(id, 8), std::string("abc\0\0\0\0\0", 8));
    len = 2;
    EXPECT_EQ(zmq_getsockopt(s, ZMQ_ROUTING_ID, id, &len), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(SocketOptions, ThreadSafeIsZeroAndReadOnly) {
    EXPECT_EQ(get_int(ZMQ_THREAD_SAFE), 0);
    EXPECT_EQ(set_int(ZMQ_THREAD_SAFE, 1), -1);
}

TEST_F(SocketOptions, TcpAcceptFilterParsesAndClears) {
    const char *good[] = {"127.0.0.1", "10.0.0.0/8", "192.168.1.0/24", "0.0.0.0/0"};
    for (const char *f : good)
        EXPECT_EQ(zmq_setsockopt(s, ZMQ_TCP_ACCEPT_FILTER, f, std::strlen(f)), 0) << f;
    const char *bad[] = {"localhost", "10.0.0.0/33", "10.0.0.0/", "::1", "1.2.3.4/x", "eth0"};
    for (const char *f : bad) {
        errno = 0;
        EXPECT_EQ(zmq_setsockopt(s, ZMQ_TCP_ACCEPT_FILTER, f, std::strlen(f)), -1) << f;
        EXPECT_EQ(errno, EINVAL) << f;
    }
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_TCP_ACCEPT_FILTER, nullptr, 0), 0);
    EXPECT_EQ(set_int(ZMQ_IPV6, 1), 0);
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_TCP_ACCEPT_FILTER, "::1", 3), 0);  // IPv6 text needs ZMQ_IPV6
}

TEST_F(SocketOptions, IpcFiltersTakeIdsOrClear) {
    uid_t uid = getuid();
    gid_t gid = getgid();
    pid_t pid = getpid();
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_IPC_FILTER_UID, &uid, sizeof uid), 0);
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_IPC_FILTER_GID, &gid, sizeof gid), 0);
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_IPC_FILTER_PID, &pid, sizeof pid), 0);
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_IPC_FILTER_PID, nullptr, 0), 0);
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_IPC_FILTER_UID, &uid, 2), -1);
}

TEST_F(SocketOptions, RefusedOptions) {
    for (int gss : {ZMQ_GSSAPI_SERVER, ZMQ_GSSAPI_PLAINTEXT, ZMQ_GSSAPI_PRINCIPAL_NAMETYPE,
                    ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE}) {
        errno = 0;
        EXPECT_EQ(set_int(gss, 1), -1) << gss;
        EXPECT_EQ(errno, EINVAL) << gss;
    }
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_GSSAPI_PRINCIPAL, "me", 2), -1);
    EXPECT_EQ(set_int(ZMQ_VMCI_BUFFER_SIZE, 1), -1);
}

// libzmq's rules: the proxy text is stored and read back with its NUL; (NULL,
// 0) unsets it and an empty text is EINVAL.  The credentials (libzmq's draft
// options, in zlink.h) take "" as well, up to 255 bytes.
TEST_F(SocketOptions, SocksOptions) {
    char text[300];
    size_t len = sizeof text;
    ASSERT_EQ(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, "somehost:1080", 13), 0);
    ASSERT_EQ(zmq_getsockopt(s, ZMQ_SOCKS_PROXY, text, &len), 0);
    EXPECT_EQ(len, 14u);
    EXPECT_STREQ(text, "somehost:1080");
    errno = 0;
    EXPECT_EQ(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, "", 0), -1);
    EXPECT_EQ(errno, EINVAL);
    ASSERT_EQ(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, nullptr, 0), 0);
    len = sizeof text;
    ASSERT_EQ(zmq_getsockopt(s, ZMQ_SOCKS_PROXY, text, &len), 0);
    EXPECT_EQ(len, 1u);

    const std::string longest(255, 'u');
    for (int opt : {ZMQ_SOCKS_USERNAME, ZMQ_SOCKS_PASSWORD}) {
        EXPECT_EQ(zmq_setsockopt(s, opt, "", 0), 0) << opt;
        EXPECT_EQ(zmq_setsockopt(s, opt, longest.data(), 255), 0) << opt;
        len = sizeof text;
        ASSERT_EQ(zmq_getsockopt(s, opt, text, &len), 0) << opt;
        EXPECT_EQ(len, 256u) << opt;
        errno = 0;
        EXPECT_EQ(zmq_setsockopt(s, opt, (longest + "u").data(), 256), -1) << opt;
        EXPECT_EQ(errno, EINVAL) << opt;
    }
}

TEST(TcpAddressMask, MatchesByPrefix) {
    zlink::tcp_address_mask m;
    ASSERT_EQ(zlink::tcp_address_mask::parse("192.168.1.0/23", false, m), 0);
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(0xC0A80105);  // 192.168.1.5
    EXPECT_TRUE(m.matches(reinterpret_cast<sockaddr *>(&in)));
    in.sin_addr.s_addr = htonl(0xC0A80005);  // 192.168.0.5: inside /23
    EXPECT_TRUE(m.matches(reinterpret_cast<sockaddr *>(&in)));
    in.sin_addr.s_addr = htonl(0xC0A80205);  // 192.168.2.5: outside
    EXPECT_FALSE(m.matches(reinterpret_cast<sockaddr *>(&in)));
    // With ZMQ_IPV6 the same text matches the v4-mapped form of the peer.
    ASSERT_EQ(zlink::tcp_address_mask::parse("192.168.1.0/24", true, m), 0);
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 9};
    std::memcpy(in6.sin6_addr.s6_addr, mapped, 16);
    EXPECT_TRUE(m.matches(reinterpret_cast<sockaddr *>(&in6)));
    EXPECT_FALSE(m.matches(reinterpret_cast<sockaddr *>(&in)));  // plain IPv4: other family
}

TEST(ContextOptions, DefaultsAsLibzmq) {
    void *ctx = zmq_ctx_new();
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_IO_THREADS), 1);
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_MAX_SOCKETS), 1023);
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_SOCKET_LIMIT), 65535);
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_MAX_MSGSZ), INT_MAX);
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_MSG_T_SIZE), static_cast<int>(sizeof(zmq_msg_t)));
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_IPV6), 0);
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_BLOCKY), 1);
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_THREAD_SCHED_POLICY), -1);
    EXPECT_EQ(zmq_ctx_get(ctx, 10), 1);  // libzmq's (draft-named) ZMQ_ZERO_COPY_RECV
    zmq_ctx_term(ctx);
}

TEST(ContextOptions, ThreadOptionsAreValidatedAndStored) {
    void *ctx = zmq_ctx_new();
    EXPECT_EQ(zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, -1), -1);
    EXPECT_EQ(zmq_ctx_set(ctx, ZMQ_THREAD_PRIORITY, -1), -1);
    EXPECT_EQ(zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, 0), 0);  // SCHED_OTHER
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_THREAD_SCHED_POLICY), 0);
    EXPECT_EQ(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, 0), 0);
    EXPECT_EQ(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_REMOVE, 0), 0);
    EXPECT_EQ(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_REMOVE, 0), -1);  // no longer there
    EXPECT_EQ(zmq_ctx_set(ctx, ZMQ_THREAD_NAME_PREFIX, 1234), 0);
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_THREAD_NAME_PREFIX), 1234);
    zmq_ctx_term(ctx);
}

std::string thread_name(int tid) {
    char path[64], comm[32] = {};
    std::snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
    FILE *f = std::fopen(path, "r");
    if (!f)
        return "";
    if (!std::fgets(comm, sizeof comm, f))
        comm[0] = '\0';
    std::fclose(f);
    std::string name(comm);
    if (!name.empty() && name.back() == '\n')
        name.pop_back();
    return name;
}

TEST(ContextOptions, AffinityPinsTheIoThreads) {
    void *ctx = zmq_ctx_new();
    ASSERT_EQ(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, 0), 0);
    void *s = zmq_socket(ctx, ZMQ_PAIR);  // starts the IO threads
    ASSERT_NE(s, nullptr);
    // Find the IO thread among this process's threads and read its allowed CPUs.
    bool found = false;
    DIR *tasks = opendir("/proc/self/task");
    ASSERT_NE(tasks, nullptr);
    while (dirent *e = readdir(tasks)) {
        const int tid = std::atoi(e->d_name);
        if (tid <= 0 || thread_name(tid) != "zlink/IO/0")
            continue;
        cpu_set_t cpus;
        ASSERT_EQ(sched_getaffinity(tid, sizeof cpus, &cpus), 0);
        EXPECT_EQ(CPU_COUNT(&cpus), 1);
        EXPECT_TRUE(CPU_ISSET(0, &cpus));
        found = true;
    }
    closedir(tasks);
    EXPECT_TRUE(found) << "no zlink/IO/0 thread in /proc/self/task";
    zmq_close(s);
    zmq_ctx_term(ctx);
}

TEST(ContextOptions, BlockyAndIpv6AreNewSocketsDefaults) {
    void *ctx = zmq_ctx_new();
    ASSERT_EQ(zmq_ctx_set(ctx, ZMQ_IPV6, 1), 0);
    ASSERT_EQ(zmq_ctx_set(ctx, ZMQ_BLOCKY, 0), 0);
    void *s = zmq_socket(ctx, ZMQ_ROUTER);
    int v = -7;
    size_t len = sizeof v;
    zmq_getsockopt(s, ZMQ_IPV6, &v, &len);
    EXPECT_EQ(v, 1);
    zmq_getsockopt(s, ZMQ_LINGER, &v, &len);
    EXPECT_EQ(v, 0);
    zmq_close(s);
    zmq_ctx_term(ctx);
}

}  // namespace
