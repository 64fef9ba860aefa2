// A peer on other CPUs, over a real ipc or tcp loopback connection to a
// hand-made ZMTP peer.  The peer is this process's main thread: over ipc
// SO_PEERCRED names our pid, whose affinity is the main thread's; over tcp the
// peer's segments (its greeting) are delivered on the main thread's CPU.  So
// pinning the main thread to one CPU and the context's IO thread to another
// puts the "peer" elsewhere:
// - over tcp every lone mid-size message takes the paused path
//   (transport/peer_pause.hpp: 8 KiB, a wait for writability, the rest).  Each
//   frame is read back byte for byte: fails if the paused path loses, repeats or
//   reorders bytes at its cut, or leaves the rest unsent.  (Whether the cut
//   happens is tested on the decision itself: tests/engine/peer_pause_test.cpp.
//   From outside it cannot be seen: Asio's wait for writability on a socket
//   with room ends at once, so the rest follows after one trip through epoll.)
// - over ipc the drain wake is armed instead (transport/drain_wake.hpp): the
//   IO thread wakes when the peer reads what it sent, seen from outside in the
//   IO thread's voluntary context switches; its frames must arrive intact too.
#include "allowed_cpus.hpp"
#include "fault_util.hpp"
#include "thread_switches.hpp"
#include "zmtp_bytes.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

using namespace faults;

namespace {

constexpr std::size_t header_bytes = 9;  // long frame: flags + 8-byte size

std::string pattern(std::size_t n, int seed) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>(static_cast<unsigned char>(i * 13 + seed + i / 509));
    return s;
}

// The voluntary context switches of the IO thread named name, or -1.
long voluntary_switches_of(const std::string &name) {
    const auto all = test_support::io_thread_switches();
    const auto it = all.find(name);
    return it == all.end() ? -1 : it->second;
}

class PeerPause : public ::testing::Test {
protected:
    void SetUp() override {
        cpus_ = test_support::allowed_cpus();
        if (cpus_.size() < 2)
            GTEST_SKIP() << "needs two CPUs to pin the two ends apart; this process has "
                         << cpus_.size();
        CPU_ZERO(&saved_);
        ASSERT_EQ(::sched_getaffinity(0, sizeof saved_, &saved_), 0);
        saved_valid_ = true;
    }
    void TearDown() override {
        if (fd_ >= 0)
            ::close(fd_);
        if (s_)
            zmq_close(s_);
        if (ctx_)
            zmq_ctx_term(ctx_);
        if (!path_.empty())
            ::unlink(path_.c_str());
        if (saved_valid_)
            ::sched_setaffinity(0, sizeof saved_, &saved_);
    }

    enum class transport { ipc, tcp };

    // start(unpinned): neither thread pinned (free placement).
    static constexpr int unpinned = -1;

    // Main thread (the peer) on cpus_[0], the IO thread on io_cpu.
    void start(int io_cpu, transport over = transport::ipc) {
        if (io_cpu != unpinned) {
            cpu_set_t m;
            CPU_ZERO(&m);
            CPU_SET(cpus_[0], &m);
            ASSERT_EQ(::sched_setaffinity(0, sizeof m, &m), 0);
        }
        ctx_ = zmq_ctx_new();
        ASSERT_NE(ctx_, nullptr);
        if (io_cpu != unpinned)
            ASSERT_EQ(zmq_ctx_set(ctx_, ZMQ_THREAD_AFFINITY_CPU_ADD, io_cpu), 0);
        s_ = zmq_socket(ctx_, ZMQ_PAIR);
        ASSERT_NE(s_, nullptr);
        set_int(s_, ZMQ_LINGER, 0);
        if (over == transport::tcp)
            connect_tcp();
        else
            connect_ipc();
        ASSERT_GE(fd_, 0);
        const std::string hello = greeting() + ready("PAIR");
        ASSERT_EQ(::send(fd_, hello.data(), hello.size(), MSG_NOSIGNAL), ssize_t(hello.size()));
        // Its greeting, then its READY (a short command: 0x04, size, body).
        read_exactly(64);
        const std::string head = read_exactly(2);
        ASSERT_EQ(head.size(), 2u);
        read_exactly(static_cast<unsigned char>(head[1]));
    }

    void connect_ipc() {
        path_ = "/tmp/zlink-peer-pause-" + std::to_string(::getpid()) + ".sock";
        ::unlink(path_.c_str());
        ASSERT_EQ(zmq_bind(s_, ("ipc://" + path_).c_str()), 0);
        fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
        ASSERT_GE(fd_, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path_.c_str());
        ASSERT_EQ(::connect(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    }

    void connect_tcp() {
        ASSERT_EQ(zmq_bind(s_, "tcp://127.0.0.1:*"), 0);
        fd_ = test_support::connect_loopback(test_support::port_of(last_endpoint(s_))).release();
    }

    std::string read_exactly(std::size_t n) {
        std::string out(n, '\0');
        std::size_t got = 0;
        while (got < n) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 5000) <= 0)
                break;
            const ssize_t r = ::recv(fd_, out.data() + got, n - got, 0);
            if (r <= 0)
                break;
            got += static_cast<std::size_t>(r);
        }
        out.resize(got);
        return out;
    }

    // How many times the IO thread went to sleep while the peer read one
    // short frame that was already sent and written (the thread asleep before
    // and after: nothing else is due on an idle connection).
    long io_thread_sleeps_while_the_peer_drains() {
        const std::string body(64, 'x');
        EXPECT_EQ(zmq_send(s_, body.data(), body.size(), 0), int(body.size()));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const long before = voluntary_switches_of("zlink/IO/0");
        EXPECT_EQ(read_exactly(2 + body.size()).size(), 2 + body.size());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const long after = voluntary_switches_of("zlink/IO/0");
        EXPECT_GE(before, 0) << "no thread named zlink/IO/0";
        return after - before;
    }

    // Queues more than the socket holds (the IO thread waits for room), reads it
    // all back intact, then counts the IO thread's wake-ups by one more drain: 0.
    void fill_then_drain_leaves_no_wake();

    // Sends one message and reads its frame back byte for byte; false (with
    // the failures said) when it does not arrive whole within 5 s.
    bool frame_arrives_intact(std::size_t size, int seed) {
        const std::string body = pattern(size, seed);
        EXPECT_EQ(zmq_send(s_, body.data(), body.size(), 0), int(body.size()));
        const std::size_t frame = (size > 255 ? header_bytes : 2) + size;
        const std::string got = read_exactly(frame);
        EXPECT_EQ(got.size(), frame) << "the frame did not arrive whole";
        if (got.size() != frame)
            return false;
        const bool same = got.substr(frame - size) == body;
        EXPECT_TRUE(same) << "the body arrived with other bytes";
        return same;
    }

    std::vector<int> cpus_;
    cpu_set_t saved_{};
    bool saved_valid_ = false;
    void *ctx_ = nullptr;
    void *s_ = nullptr;
    int fd_ = -1;
    std::string path_;
};

// ipc, the IO thread on another CPU than the peer (the drain wake armed), for sizes
// around the old cut and the pause range's ends, each frame intact.
TEST_F(PeerPause, MessagesToAPeerElsewhereArriveIntact) {
    start(cpus_[1]);
    int seed = 0;
    for (std::size_t size :
         {std::size_t(64 * 1024), std::size_t(16 * 1024 + 1), std::size_t(8 * 1024 + 1),
          std::size_t(100 * 1024), std::size_t(128 * 1024), std::size_t(200 * 1024)})
        EXPECT_TRUE(frame_arrives_intact(size, ++seed)) << size;
}

// Over tcp on loopback: the peer's greeting came from another CPU, so the
// paused path, each frame intact.
TEST_F(PeerPause, MessagesToALoopbackTcpPeerElsewhereArriveIntact) {
    start(cpus_[1], transport::tcp);
    int seed = 0;
    for (std::size_t size :
         {std::size_t(64 * 1024), std::size_t(16 * 1024 + 1), std::size_t(100 * 1024),
          std::size_t(128 * 1024), std::size_t(200 * 1024)})
        EXPECT_TRUE(frame_arrives_intact(size, ++seed)) << size;
}

// The same CPU for both: the single write, intact.
TEST_F(PeerPause, MessagesToAPeerOnOurCpuArriveIntact) {
    start(cpus_[0]);
    EXPECT_TRUE(frame_arrives_intact(64 * 1024, 1));
    EXPECT_TRUE(frame_arrives_intact(100 * 1024, 2));
}

// ipc, the peer pinned elsewhere: its read of our frame wakes the IO thread
// (the drain wake); on the IO thread's own CPU nothing wakes it.  Each frame
// is read only after the IO thread is asleep again, so the count is the
// drain's alone.
TEST_F(PeerPause, AnIpcPeerElsewhereWakesTheIoThreadByDraining) {
    start(cpus_[1]);
    EXPECT_TRUE(frame_arrives_intact(64, 1));  // the first batch arms it
    EXPECT_GE(io_thread_sleeps_while_the_peer_drains(), 1);
}

TEST_F(PeerPause, AnIpcPeerOnOurCpuDoesNotWakeTheIoThreadByDraining) {
    start(cpus_[0]);
    EXPECT_TRUE(frame_arrives_intact(64, 1));
    EXPECT_EQ(io_thread_sleeps_while_the_peer_drains(), 0);
}

// Without the drain wake, a write that had to wait for room leaves no wake-up
// behind (engine_output::wait_writable): once the output is idle again, the peer
// draining the socket does not wake the IO thread.  Fails where the wait registers
// write interest on the socket itself (Asio keeps it for the descriptor's life).
// The frames that waited arrive intact.
TEST_F(PeerPause, AWriteThatWaitedForRoomLeavesNoDrainWakeBehind) {
    start(cpus_[0]);
    fill_then_drain_leaves_no_wake();
}

// The same with neither side pinned: a stream's waits used to leave the interest
// there, and every later drain woke the IO thread (with 2 IO threads, one that
// never reads the answer: docs/profiling/2026-12-05-lasting-interest.md).
TEST_F(PeerPause, AWriteThatWaitedForRoomLeavesNoDrainWakeBehindUnpinned) {
    start(unpinned);
    fill_then_drain_leaves_no_wake();
}

void PeerPause::fill_then_drain_leaves_no_wake() {
    const std::size_t size = 256 * 1024, messages = 8;  // 2 MiB: past the socket's buffer
    std::vector<std::string> bodies;
    for (std::size_t i = 0; i < messages; ++i) {
        bodies.push_back(pattern(size, int(i) + 1));
        ASSERT_EQ(zmq_send(s_, bodies.back().data(), size, 0), int(size));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the IO thread waits for room
    for (const auto &body : bodies) {
        const std::string got = read_exactly(header_bytes + size);
        ASSERT_EQ(got.size(), header_bytes + size) << "a frame did not arrive whole";
        EXPECT_TRUE(got.substr(header_bytes) == body) << "a frame arrived with other bytes";
    }
    EXPECT_EQ(io_thread_sleeps_while_the_peer_drains(), 0);
}

// Closing the socket while a write waits for room (through its duplicate
// descriptor) ends the connection: the peer reads to the end of the stream, and
// no descriptor is left open once the context is gone.
TEST_F(PeerPause, ClosingWhileAWriteWaitsForRoomEndsTheConnection) {
    const auto open_fds = [] {
        long n = 0;
        for (const auto &entry : std::filesystem::directory_iterator("/proc/self/fd")) {
            (void)entry;
            ++n;
        }
        return n;
    };
    const long before = open_fds();
    start(cpus_[0]);
    const std::string body(256 * 1024, 'z');
    for (int i = 0; i < 8; ++i)
        ASSERT_EQ(zmq_send(s_, body.data(), body.size(), 0), int(body.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    zmq_close(s_);
    s_ = nullptr;
    ASSERT_EQ(zmq_ctx_term(ctx_), 0);
    ctx_ = nullptr;
    std::string rest;
    for (;;) {
        const std::string got = read_exactly(64 * 1024);
        if (got.empty())
            break;
        rest += got;
    }
    pollfd p{fd_, POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 0), 1);
    char byte;
    EXPECT_EQ(::recv(fd_, &byte, 1, MSG_DONTWAIT), 0)
        << "the peer does not see the end of the stream";
    EXPECT_LT(rest.size(), 8 * (header_bytes + body.size())) << "linger 0: not everything was sent";
    EXPECT_EQ(open_fds(), before + 1) << "descriptors left open (the peer's own is the +1)";
}

}  // namespace
