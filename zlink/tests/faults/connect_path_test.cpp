// A tcp connect to an address in numbers goes from zmq_connect to connect(2)
// on the IO thread, with no resolver thread on the way.
//
// Why (faults run 20261202T090133Z-9e56, PUB_SUB/curve/hb-off/bandwidth): in a
// load spike (load average 16 on 2 CPUs) a zlink SUB's first connect(2) came
// 2.1 s after its zmq_connect. Every connect went through Asio's async
// resolver, which starts a thread of its own at the first resolve and hands
// the work there and the result back: two more threads that must each get a
// CPU before the connection can start. libzmq resolves on its IO thread.
//
// Seen from outside: the process has no more threads after the connect than
// before it (the old path left Asio's resolver thread behind). zmq.h only.
#include "fault_util.hpp"

#include <dirent.h>
#include <gtest/gtest.h>

#include <string>

using namespace faults;

namespace {

int thread_count() {
    int n = 0;
    if (DIR *d = ::opendir("/proc/self/task")) {
        while (const dirent *e = ::readdir(d))
            n += e->d_name[0] != '.';
        ::closedir(d);
    }
    return n;
}

// Connects to a port nobody listens on and waits for the first CONNECT_RETRIED:
// by then the address was resolved and connect(2) refused.
void connect_and_wait_for_the_attempt(void *ctx, const std::string &endpoint) {
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    set_int(s, ZMQ_LINGER, 0);
    ASSERT_EQ(zmq_socket_monitor(s, "inproc://connect-path", ZMQ_EVENT_CONNECT_RETRIED), 0);
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    set_int(mon, ZMQ_LINGER, 0);
    set_int(mon, ZMQ_RCVTIMEO, 5000);
    ASSERT_EQ(zmq_connect(mon, "inproc://connect-path"), 0);
    ASSERT_EQ(zmq_connect(s, endpoint.c_str()), 0);
    EXPECT_EQ(recv_frames(mon).size(), 2u) << "no connect attempt within 5 s";
    zmq_socket_monitor(s, nullptr, 0);
    zmq_close(mon);
    zmq_close(s);
}

TEST(ConnectPath, NumericAddressNeedsNoResolverThread) {
    void *ctx = zmq_ctx_new();
    void *warm = zmq_socket(ctx, ZMQ_PAIR);  // the context's own threads start here
    const int before = thread_count();
    connect_and_wait_for_the_attempt(ctx, "tcp://127.0.0.1:" + std::to_string(free_tcp_port()));
    EXPECT_EQ(thread_count(), before);
    zmq_close(warm);
    zmq_ctx_term(ctx);
}

}  // namespace
