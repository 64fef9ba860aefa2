// Giving up an ipc endpoint and binding the same path again at once must
// leave the new listener's socket file in place.
//
// zmq_close and zmq_unbind return before the old listener has stopped: its IO
// thread closes the acceptor and removes the socket file later, while the
// caller is already binding the successor, which unlinks the old file and
// makes its own. The old listener checked "is the file at this path still
// mine?" and then unlinked it, two system calls apart. When the binding
// thread ran in that gap (the IO thread lost the CPU there, or waited in its
// unlink for the directory lock the binding thread held), the check saw its
// own file and the unlink removed the successor's: the new socket was bound
// and listening but unreachable, so connecting peers retried forever
// (libzmq's test_rebind_ipc hung in zmq_send, 1 run in about 5000 under load).
//
// The whole test runs on one CPU (the IO and reaper threads inherit the
// affinity at zmq_socket), where the binding thread can only run in the gap
// by preempting the IO thread; before the fix, about 1 run in 7 of this
// test's 20000 rounds lost the file.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "one_cpu.hpp"
#include "zmq.h"

namespace {

using zlink_test::one_cpu;

void set_int(void *s, int option, int value) {
    ASSERT_EQ(zmq_setsockopt(s, option, &value, sizeof value), 0);
}

// Waits for the monitored socket's next CLOSED event: its listener has
// stopped, so it has removed (or left alone) the socket file. False after
// timeout_ms of silence.
bool wait_until_closed(void *mon, int timeout_ms) {
    set_int(mon, ZMQ_RCVTIMEO, timeout_ms);
    unsigned char head[6];
    if (zmq_recv(mon, head, sizeof head, 0) != 6)
        return false;
    char addr[256];
    zmq_recv(mon, addr, sizeof addr, 0);
    uint16_t ev;
    std::memcpy(&ev, head, 2);
    return ev == ZMQ_EVENT_CLOSED;
}

// What a peer sees: can it connect to the path at all?
bool reachable(const std::string &path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0;
    ::close(fd);
    return ok;
}

// A PUSH socket with a monitor PAIR that hears only its CLOSED events.
struct watched_socket {
    void *socket = nullptr;
    void *monitor = nullptr;
    watched_socket(void *ctx, const std::string &monitor_name) {
        socket = zmq_socket(ctx, ZMQ_PUSH);
        set_int(socket, ZMQ_LINGER, 0);
        EXPECT_EQ(zmq_socket_monitor(socket, monitor_name.c_str(), ZMQ_EVENT_CLOSED), 0);
        monitor = zmq_socket(ctx, ZMQ_PAIR);
        EXPECT_EQ(zmq_connect(monitor, monitor_name.c_str()), 0);
    }
    ~watched_socket() {
        zmq_close(monitor);
        zmq_close(socket);
    }
};

}  // namespace

// Two sockets take turns on one path: the one bound gives it up (zmq_unbind
// stops its listener exactly as zmq_close does) and the other binds it at
// once. Cheap rounds, so a run tries the interleaving many times.
TEST(IpcRebindRace, SuccessorKeepsItsSocketFile) {
    char dir[] = "/tmp/zlink-rebind-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string path = std::string(dir) + "/socket";
    const std::string endpoint = "ipc://" + path;
    {
        one_cpu pin;
        void *ctx = zmq_ctx_new();
        {
            watched_socket sockets[2] = {{ctx, "inproc://ipc-rebind-0"},
                                         {ctx, "inproc://ipc-rebind-1"}};
            ASSERT_EQ(zmq_bind(sockets[0].socket, endpoint.c_str()), 0);
            constexpr int rounds = 20000;
            int round = 0;
            for (; round < rounds; ++round) {
                watched_socket &old_one = sockets[round % 2];
                watched_socket &successor = sockets[(round + 1) % 2];
                ASSERT_EQ(zmq_unbind(old_one.socket, endpoint.c_str()), 0);
                ASSERT_EQ(zmq_bind(successor.socket, endpoint.c_str()), 0);
                ASSERT_TRUE(wait_until_closed(old_one.monitor, 5000));
                if (!reachable(path))
                    break;
            }
            EXPECT_EQ(round, rounds)
                << "the successor's socket file was removed in round " << round;
        }
        zmq_ctx_term(ctx);
    }
    ::unlink(path.c_str());
    ::rmdir(dir);
}
