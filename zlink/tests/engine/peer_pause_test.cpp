// pause_candidate: which batch sizes may pause for the peer over ipc
// (transport/peer_pause.hpp); the pause itself is tested over a real ipc
// connection in tests/faults/peer_pause_test.cpp.
#include "transport/peer_pause.hpp"

#include <gtest/gtest.h>
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

// From a thread pinned to `cpu`: is the peer (the main thread's CPUs) elsewhere?
bool elsewhere_from(int cpu, int fd) {
    bool result = false;
    std::thread t([&] {
        cpu_set_t m;
        CPU_ZERO(&m);
        CPU_SET(cpu, &m);
        if (::sched_setaffinity(0, sizeof m, &m) == 0)
            result = zlink::peer_pinned_elsewhere(fd);
    });
    t.join();
    return result;
}

}  // namespace

// The main thread pinned to one CPU: a thread on another CPU finds the peer
// elsewhere, a thread on the same CPU does not; unpinned, nobody is elsewhere.
TEST(PeerPause, APeerPinnedToOtherCpusIsElsewhere) {
    cpu_set_t saved;
    CPU_ZERO(&saved);
    ASSERT_EQ(::sched_getaffinity(0, sizeof saved, &saved), 0);
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &saved))
            cpus.push_back(c);
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
