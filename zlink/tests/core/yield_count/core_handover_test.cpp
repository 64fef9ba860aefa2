// A thread never hands its core over at the default HWM: not a writer of large
// inproc messages, not a blocking recv, send or zmq_poll before it sleeps
// (core/socket_base.cpp's retry_until says why). Only a writer at unlimited HWM
// that ran 1 MiB ahead yields (core/pipe.cpp).
//
// The yields are counted, not timed: this executable defines sched_yield, which
// takes the place of the C library's for everything linked into it (zlink is
// linked statically), counts the calling thread's calls and then yields for real.
// Its own executable so the count stays out of the other core tests.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "zmq.h"

namespace {
thread_local int yields_here = 0;
}  // namespace

extern "C" int sched_yield() noexcept {
    ++yields_here;
    return static_cast<int>(syscall(SYS_sched_yield));
}

namespace {

constexpr size_t large = 64 * 1024;  // the size the yields used to single out (>= 32 KiB)
constexpr size_t small = 1024;

struct Pair {
    void *ctx = zmq_ctx_new();
    void *tx = zmq_socket(ctx, ZMQ_PAIR);
    void *rx = zmq_socket(ctx, ZMQ_PAIR);
    explicit Pair(const std::string &transport) {
        int linger = 0;
        zmq_setsockopt(tx, ZMQ_LINGER, &linger, sizeof linger);
        zmq_setsockopt(rx, ZMQ_LINGER, &linger, sizeof linger);
        std::string where = transport == "inproc" ? "inproc://handover"
                            : transport == "ipc"
                                ? "ipc://@zlink-handover-" + std::to_string(getpid())
                                : "tcp://127.0.0.1:*";
        EXPECT_EQ(zmq_bind(rx, where.c_str()), 0);
        char endpoint[256];
        size_t len = sizeof endpoint;
        EXPECT_EQ(zmq_getsockopt(rx, ZMQ_LAST_ENDPOINT, endpoint, &len), 0);
        EXPECT_EQ(zmq_connect(tx, endpoint), 0);
    }
    ~Pair() {
        zmq_close(tx);
        zmq_close(rx);
        zmq_ctx_term(ctx);
    }
    // Sends n messages of `size` and returns this thread's yields meanwhile.
    int yields_sending(int n, size_t size) {
        std::vector<char> body(size, 'x');
        const int before = yields_here;
        for (int i = 0; i < n; ++i)
            EXPECT_EQ(zmq_send(tx, body.data(), size, 0), static_cast<int>(size));
        return yields_here - before;
    }
    void receive(int n, size_t size) {
        std::vector<char> body(size);
        for (int i = 0; i < n; ++i)
            EXPECT_EQ(zmq_recv(rx, body.data(), size, 0), static_cast<int>(size));
    }
    // One message of `size` through, then a recv that finds nothing: that recv's yields.
    int yields_in_empty_recv_after(size_t size) {
        yields_sending(1, size);
        receive(1, size);
        return yields_in_empty_recv();
    }
    // A recv that finds nothing within 200 ms, and this thread's yields in it.
    // Ample: a first look later than the timeout would skip the yield.
    int yields_in_empty_recv() {
        int timeout_ms = 200;
        zmq_setsockopt(rx, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
        char c;
        const int before = yields_here;
        EXPECT_EQ(zmq_recv(rx, &c, 1, 0), -1);
        EXPECT_EQ(zmq_errno(), EAGAIN);
        return yields_here - before;
    }
};

}  // namespace

TEST(CoreHandover, InprocWriterOfLargeMessagesKeepsItsCore) {
    // It yielded after every 4th message of 32 KiB or more; on a loaded host each
    // such yield gave the core away for a slice.
    Pair p("inproc");
    EXPECT_EQ(p.yields_sending(12, large), 0);
    p.receive(12, large);
}

TEST(CoreHandover, InprocWriterOfSmallMessagesKeepsItsCore) {
    Pair p("inproc");
    EXPECT_EQ(p.yields_sending(16, small), 0);
    p.receive(16, small);
}

TEST(CoreHandover, TcpAndIpcWritersKeepTheirCore) {
    // Their pipe's reader is the IO thread, which shares the writer's core even
    // when the peer process has its own; there the yield cost large streams.
    for (const char *transport : {"tcp", "ipc"}) {
        SCOPED_TRACE(transport);
        Pair p(transport);
        EXPECT_EQ(p.yields_sending(8, large), 0);
        p.receive(8, large);
    }
}

TEST(CoreHandover, BlockingRecvSleepsWithoutYieldingWhateverTheSizeAndTransport) {
    // A yield before the sleep handed the core to any other runnable work on the
    // host for a whole slice: milliseconds of latency on a shared machine.
    for (const char *transport : {"inproc", "tcp", "ipc"}) {
        for (size_t size : {small, large}) {
            SCOPED_TRACE(std::string(transport) + " " + std::to_string(size));
            Pair p(transport);
            EXPECT_EQ(p.yields_in_empty_recv_after(size), 0);
            EXPECT_EQ(p.yields_in_empty_recv(), 0);
        }
    }
}

TEST(CoreHandover, BlockingSendAtTheHwmSleepsWithoutYielding) {
    for (const char *transport : {"inproc", "tcp"}) {
        SCOPED_TRACE(transport);
        Pair p(transport);
        int timeout_ms = 200;
        zmq_setsockopt(p.tx, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
        // Small messages until one blocks for the whole timeout (nobody reads:
        // both HWMs and the kernel's buffers fill, a few thousand messages).
        std::vector<char> body(small, 'x');
        const int before = yields_here;
        int rc = 0;
        for (int i = 0; i < 1000000 && rc >= 0; ++i)
            rc = zmq_send(p.tx, body.data(), body.size(), 0);
        EXPECT_EQ(rc, -1);
        EXPECT_EQ(zmq_errno(), EAGAIN);
        EXPECT_EQ(yields_here - before, 0);
    }
}

TEST(CoreHandover, PollSleepsWithoutYielding) {
    Pair p("tcp");
    zmq_pollitem_t item{p.rx, 0, ZMQ_POLLIN, 0};
    const int before = yields_here;
    EXPECT_EQ(zmq_poll(&item, 1, 50), 0);
    EXPECT_EQ(yields_here - before, 0);
}
