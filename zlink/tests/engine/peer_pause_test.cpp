// pause_candidate: which batch sizes may pause for the peer (tcp loopback), and
// where the peer runs, over ipc (its pid: the drain wake's test) and tcp on
// loopback (the CPU that delivered its last segment) (transport/peer_pause.hpp,
// transport/drain_wake.hpp); the pause and the drain wake themselves are tested
// over real connections in tests/faults/peer_pause_test.cpp.
#include "transport/peer_pause.hpp"

#include "allowed_cpus.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using zlink::pause_candidate;
using zlink::pause_max_batch;
using zlink::pause_min_batch;

TEST(PeerPause, OnlyWhereTheTransportAsksForIt) {
    EXPECT_FALSE(pause_candidate(false, 64 * 1024));
    EXPECT_TRUE(pause_candidate(true, 64 * 1024));
}

// Small batches go whole (a pause would cost a round of wake-ups for nothing to
// overlap); large ones too: ipc 256 KiB round trips were already ahead.
TEST(PeerPause, OnlyMidSizeBatches) {
    EXPECT_FALSE(pause_candidate(true, 1024));
    EXPECT_FALSE(pause_candidate(true, pause_min_batch));
    EXPECT_TRUE(pause_candidate(true, pause_min_batch + 1));
    EXPECT_TRUE(pause_candidate(true, pause_max_batch));
    EXPECT_FALSE(pause_candidate(true, pause_max_batch + 1));
    EXPECT_FALSE(pause_candidate(true, 256 * 1024));
}

// Both ends of a socketpair belong to this process, whose CPUs are ours.
TEST(PeerPause, APeerInThisProcessIsNotElsewhere) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    EXPECT_FALSE(zlink::peer_pinned_elsewhere(sv[0]));
    ::close(sv[0]);
    ::close(sv[1]);
}

// Not a unix socket: no peer credentials, so no pause.
TEST(PeerPause, NotAUnixSocketIsNotElsewhere) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    EXPECT_FALSE(zlink::peer_pinned_elsewhere(p[0]));
    ::close(p[0]);
    ::close(p[1]);
}

namespace {

// A connected unix socket pair through a listener, so SO_PEERCRED names this
// process (the connecting side), whose affinity is the main thread's.
struct accepted_pair {
    int listener = -1, client = -1, server = -1;
    std::string path;
    accepted_pair() {
        path = "/tmp/zlink-peer-pause-unit-" + std::to_string(::getpid()) + ".sock";
        ::unlink(path.c_str());
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
        listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
        client = ::socket(AF_UNIX, SOCK_STREAM, 0);
        if (::bind(listener, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
            ::listen(listener, 1) == 0 &&
            ::connect(client, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0)
            server = ::accept(listener, nullptr, nullptr);
    }
    ~accepted_pair() {
        for (int fd : {listener, client, server})
            if (fd >= 0)
                ::close(fd);
        ::unlink(path.c_str());
    }
};

// Runs f on a thread pinned to cpu; false if the pin fails.
template <typename F>
bool on_cpu(int cpu, F f) {
    bool pinned = false;
    std::thread t([&] {
        cpu_set_t m;
        CPU_ZERO(&m);
        CPU_SET(cpu, &m);
        pinned = ::sched_setaffinity(0, sizeof m, &m) == 0;
        if (pinned)
            f();
    });
    t.join();
    return pinned;
}

// From a thread pinned to `cpu`: is the peer (the main thread's CPUs) elsewhere?
bool elsewhere_from(int cpu, int fd) {
    bool result = false;
    on_cpu(cpu, [&] { result = zlink::peer_pinned_elsewhere(fd); });
    return result;
}

}  // namespace

// The main thread pinned to one CPU: a thread on another CPU finds the peer
// elsewhere, a thread on the same CPU does not; unpinned, nobody is elsewhere.
TEST(PeerPause, APeerPinnedToOtherCpusIsElsewhere) {
    cpu_set_t saved;
    CPU_ZERO(&saved);
    ASSERT_EQ(::sched_getaffinity(0, sizeof saved, &saved), 0);
    const std::vector<int> cpus = test_support::allowed_cpus();
    if (cpus.size() < 2)
        GTEST_SKIP() << "needs two CPUs; this process has " << cpus.size();
    accepted_pair p;
    ASSERT_GE(p.server, 0) << std::strerror(errno);

    EXPECT_FALSE(elsewhere_from(cpus[1], p.server)) << "an unpinned peer may share our CPU";
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[0], &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
    const bool other_cpu = elsewhere_from(cpus[1], p.server);
    const bool same_cpu = elsewhere_from(cpus[0], p.server);
    ::sched_setaffinity(0, sizeof saved, &saved);
    EXPECT_TRUE(other_cpu);
    EXPECT_FALSE(same_cpu);
}

TEST(PeerPause, LoopbackAddresses) {
    sockaddr_in v4{};
    v4.sin_family = AF_INET;
    ASSERT_EQ(::inet_pton(AF_INET, "127.3.2.1", &v4.sin_addr), 1);
    EXPECT_TRUE(zlink::is_loopback(&v4, sizeof v4));
    ASSERT_EQ(::inet_pton(AF_INET, "10.0.0.1", &v4.sin_addr), 1);
    EXPECT_FALSE(zlink::is_loopback(&v4, sizeof v4));
    EXPECT_FALSE(zlink::is_loopback(&v4, sizeof v4 - 1)) << "a short address is not read";

    sockaddr_in6 v6{};
    v6.sin6_family = AF_INET6;
    ASSERT_EQ(::inet_pton(AF_INET6, "::1", &v6.sin6_addr), 1);
    EXPECT_TRUE(zlink::is_loopback(&v6, sizeof v6));
    ASSERT_EQ(::inet_pton(AF_INET6, "::ffff:127.0.0.1", &v6.sin6_addr), 1);
    EXPECT_TRUE(zlink::is_loopback(&v6, sizeof v6));
    ASSERT_EQ(::inet_pton(AF_INET6, "::ffff:10.0.0.1", &v6.sin6_addr), 1);
    EXPECT_FALSE(zlink::is_loopback(&v6, sizeof v6));
    ASSERT_EQ(::inet_pton(AF_INET6, "fe80::1", &v6.sin6_addr), 1);
    EXPECT_FALSE(zlink::is_loopback(&v6, sizeof v6));

    sockaddr_un unix_address{};
    unix_address.sun_family = AF_UNIX;
    EXPECT_FALSE(zlink::is_loopback(&unix_address, sizeof unix_address));
}

namespace {

// A tcp connection over 127.0.0.1 inside this process.
struct tcp_pair {
    int listener = -1, client = -1, server = -1;
    tcp_pair() {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        listener = ::socket(AF_INET, SOCK_STREAM, 0);
        client = ::socket(AF_INET, SOCK_STREAM, 0);
        if (::bind(listener, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
            ::listen(listener, 1) == 0 &&
            ::getsockname(listener, reinterpret_cast<sockaddr *>(&a), &len) == 0 &&
            ::connect(client, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0)
            server = ::accept(listener, nullptr, nullptr);
    }
    ~tcp_pair() {
        for (int fd : {listener, client, server})
            if (fd >= 0)
                ::close(fd);
    }
};

}  // namespace

// The client sends from one CPU: loopback delivers in its context, so the
// server's socket records that CPU.  A server thread pinned to another CPU
// finds the peer elsewhere; one pinned to the same CPU does not; an unpinned
// one (it may run anywhere) never does.
TEST(PeerPause, ALoopbackPeerThatSentFromAnotherCpuIsElsewhere) {
    const std::vector<int> cpus = test_support::allowed_cpus();
    if (cpus.size() < 2)
        GTEST_SKIP() << "needs two CPUs; this process has " << cpus.size();
    tcp_pair p;
    ASSERT_GE(p.server, 0) << std::strerror(errno);
    EXPECT_FALSE(zlink::loopback_peer_ran_elsewhere(p.server)) << "unpinned: CPUs shared";

    for (int sender : {cpus[0], cpus[1]}) {
        const int other = sender == cpus[0] ? cpus[1] : cpus[0];
        ASSERT_TRUE(on_cpu(sender, [&] { ASSERT_EQ(::send(p.client, "x", 1, 0), 1); }));
        char byte = 0;
        ASSERT_EQ(::recv(p.server, &byte, 1, 0), 1);
        bool from_other = false, from_same = true, whole = true;
        ASSERT_TRUE(on_cpu(other, [&] {
            from_other = zlink::loopback_peer_ran_elsewhere(p.server);
            whole = zlink::peer_elsewhere(p.server);
        }));
        ASSERT_TRUE(
            on_cpu(sender, [&] { from_same = zlink::loopback_peer_ran_elsewhere(p.server); }));
        EXPECT_TRUE(from_other) << "sent from CPU " << sender << ", asked from CPU " << other;
        EXPECT_TRUE(whole) << "peer_elsewhere() asks the tcp test when SO_PEERCRED has no pid";
        EXPECT_FALSE(from_same) << "sent from and asked on CPU " << sender;
    }
    EXPECT_FALSE(zlink::loopback_peer_ran_elsewhere(p.server)) << "unpinned: CPUs shared";
}

// A unix socket is not tcp: the loopback test says no (the pid test decides).
TEST(PeerPause, AUnixSocketIsNotALoopbackPeer) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    EXPECT_FALSE(zlink::loopback_peer_ran_elsewhere(sv[0]));
    ::close(sv[0]);
    ::close(sv[1]);
}
