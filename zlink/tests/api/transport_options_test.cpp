// The transport effects of generic options, seen from outside through the
// public API and the kernel: ZMQ_TOS and ZMQ_TCP_MAXRT on the connection,
// ZMQ_CONNECT_TIMEOUT giving up on a connect that hangs, ZMQ_TCP_ACCEPT_FILTER
// and ZMQ_IPC_FILTER_UID refusing peers, ZMQ_USE_FD adopting a listening
// socket, zmq_unbind closing the accepted connections, and the connection
// metadata zmq_msg_gets reads (Socket-Type, Identity, Peer-Address, SRCFD).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>

#include "api_test_util.hpp"
#include "loopback_socket.hpp"

namespace {

int int_sockopt(int fd, int level, int name) {
    int v = -1;
    socklen_t len = sizeof v;
    getsockopt(fd, level, name, &v, &len);
    return v;
}

class TransportOptions : public ::testing::Test {
protected:
    void SetUp() override { ctx = zmq_ctx_new(); }
    void TearDown() override { zmq_ctx_term(ctx); }

    void *socket(int type) {
        void *s = zmq_socket(ctx, type);
        int zero = 0, patience = 3000;
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &patience, sizeof patience);
        return s;
    }
    static std::string last_endpoint(void *s) {
        char text[256];
        size_t len = sizeof text;
        zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, text, &len);
        return text;
    }
    static void set_int(void *s, int option, int v) {
        ASSERT_EQ(zmq_setsockopt(s, option, &v, sizeof v), 0) << option;
    }
    // Sends "ping" from `from`; true when `to` receives it within 3 s.  The
    // received message is kept in `got` for metadata checks.
    static bool delivered(void *from, void *to, zmq_msg_t &got) {
        if (zmq_send(from, "ping", 4, 0) != 4)
            return false;
        return zmq_msg_recv(&got, to, 0) == 4;
    }
    // Waits up to `ms` for monitor event `event`; returns its value or -1.
    static int wait_event(void *monitor, int event, int ms) {
        int timeout = ms;
        zmq_setsockopt(monitor, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
        for (;;) {
            unsigned char head[6];
            char addr[256];
            if (zmq_recv(monitor, head, sizeof head, 0) != 6)
                return -1;
            zmq_recv(monitor, addr, sizeof addr, 0);
            uint16_t id;
            uint32_t value;
            std::memcpy(&id, head, 2);
            std::memcpy(&value, head + 2, 4);
            if (id == event)
                return static_cast<int>(value);
        }
    }
    void *monitor_of(void *s, const char *name, int events) {
        EXPECT_EQ(zmq_socket_monitor(s, name, events), 0);
        void *m = socket(ZMQ_PAIR);
        EXPECT_EQ(zmq_connect(m, name), 0);
        return m;
    }

    // The send buffer of an accepted ipc connection (ZMQ_SRCFD of a message it
    // delivered), given ZMQ_SNDBUF = `sndbuf` on the server (-1: left unset).
    int ipc_send_buffer(int sndbuf) {
        void *server = socket(ZMQ_PAIR), *client = socket(ZMQ_PAIR);
        if (sndbuf >= 0)
            set_int(server, ZMQ_SNDBUF, sndbuf);
        int size = -1;
        zmq_msg_t got;
        zmq_msg_init(&got);
        if (zmq_bind(server, "ipc://*") == 0 &&
            zmq_connect(client, last_endpoint(server).c_str()) == 0 &&
            delivered(client, server, got) && zmq_msg_get(&got, ZMQ_SRCFD) >= 0)
            size = int_sockopt(zmq_msg_get(&got, ZMQ_SRCFD), SOL_SOCKET, SO_SNDBUF);
        zmq_msg_close(&got);
        zmq_close(client);
        zmq_close(server);
        return size;
    }

    void *ctx = nullptr;
};

TEST_F(TransportOptions, TosAndMaxrtReachTheAcceptedConnection) {
    void *server = socket(ZMQ_PAIR), *client = socket(ZMQ_PAIR);
    set_int(server, ZMQ_TOS, 0x28);
    set_int(server, ZMQ_TCP_MAXRT, 4000);
    ASSERT_EQ(zmq_bind(server, "tcp://127.0.0.1:*"), 0);
    ASSERT_EQ(zmq_connect(client, last_endpoint(server).c_str()), 0);
    zmq_msg_t got;
    zmq_msg_init(&got);
    ASSERT_TRUE(delivered(client, server, got));
    const int fd = zmq_msg_get(&got, ZMQ_SRCFD);  // the accepted connection
    ASSERT_GE(fd, 0);
    EXPECT_EQ(int_sockopt(fd, IPPROTO_IP, IP_TOS), 0x28);
    EXPECT_EQ(int_sockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 4000);
    zmq_msg_close(&got);
    zmq_close(client);
    zmq_close(server);
}

int wmem_max() {
    FILE *f = std::fopen("/proc/sys/net/core/wmem_max", "r");
    int v = -1;
    if (f != nullptr) {
        if (std::fscanf(f, "%d", &v) != 1)
            v = -1;
        std::fclose(f);
    }
    return v;
}

// Unset, an ipc connection asks for 256 KiB (the kernel doubles it, capped by
// wmem_max), room for a 256 KiB message in one write; a set ZMQ_SNDBUF wins.
TEST_F(TransportOptions, IpcSendBufferHoldsALargeMessageUnlessSet) {
    const int cap = wmem_max();
    ASSERT_GT(cap, 0) << "cannot read /proc/sys/net/core/wmem_max";
    EXPECT_EQ(ipc_send_buffer(-1), 2 * std::min(256 * 1024, cap));
    EXPECT_EQ(ipc_send_buffer(65536), 2 * std::min(65536, cap));
}

TEST_F(TransportOptions, ReceivedMessagesCarryConnectionMetadata) {
    for (const char *ep : {"tcp://127.0.0.1:*", "ipc://*"}) {
        void *server = socket(ZMQ_DEALER), *client = socket(ZMQ_DEALER);
        ASSERT_EQ(zmq_setsockopt(client, ZMQ_ROUTING_ID, "client-7", 8), 0);
        ASSERT_EQ(zmq_bind(server, ep), 0);
        ASSERT_EQ(zmq_connect(client, last_endpoint(server).c_str()), 0);
        zmq_msg_t got;
        zmq_msg_init(&got);
        ASSERT_TRUE(delivered(client, server, got)) << ep;
        EXPECT_STREQ(zmq_msg_gets(&got, "Socket-Type"), "DEALER") << ep;
        EXPECT_STREQ(zmq_msg_gets(&got, "Identity"), "client-7") << ep;
        const char *peer = zmq_msg_gets(&got, "Peer-Address");
        ASSERT_NE(peer, nullptr) << ep;
        if (ep[0] == 't') {
            EXPECT_STREQ(peer, "127.0.0.1");
        } else {  // libzmq's form for ipc: host, then :uid:gid:pid of the peer
            const std::string own = ":" + std::to_string(getuid()) + ":" +
                                    std::to_string(getgid()) + ":" + std::to_string(getpid());
            EXPECT_NE(std::string(peer).find(own), std::string::npos) << peer;
        }
        zmq_close(client);  // the message keeps its metadata after the connection is gone
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        EXPECT_STREQ(zmq_msg_gets(&got, "Socket-Type"), "DEALER") << ep;
        zmq_msg_close(&got);
        zmq_close(server);
    }
}

TEST_F(TransportOptions, InprocMessagesHaveNoMetadata) {
    void *a = socket(ZMQ_PAIR), *b = socket(ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(a, "inproc://no-metadata"), 0);
    ASSERT_EQ(zmq_connect(b, "inproc://no-metadata"), 0);
    zmq_msg_t got;
    zmq_msg_init(&got);
    ASSERT_TRUE(delivered(b, a, got));
    EXPECT_EQ(zmq_msg_gets(&got, "Socket-Type"), nullptr);
    EXPECT_EQ(zmq_msg_get(&got, ZMQ_SRCFD), -1);
    zmq_msg_close(&got);
    zmq_close(a);
    zmq_close(b);
}

TEST_F(TransportOptions, AcceptFilterRefusesOtherAddresses) {
    for (const char *filter : {"127.0.0.2", "127.0.0.0/8"}) {
        const bool allowed = std::strcmp(filter, "127.0.0.0/8") == 0;
        void *server = socket(ZMQ_PAIR), *client = socket(ZMQ_PAIR);
        ASSERT_EQ(zmq_setsockopt(server, ZMQ_TCP_ACCEPT_FILTER, filter, std::strlen(filter)), 0);
        void *monitor = monitor_of(server, allowed ? "inproc://af-ok" : "inproc://af-no",
                                   ZMQ_EVENT_ACCEPT_FAILED | ZMQ_EVENT_ACCEPTED);
        ASSERT_EQ(zmq_bind(server, "tcp://127.0.0.1:*"), 0);
        ASSERT_EQ(zmq_connect(client, last_endpoint(server).c_str()), 0);
        const int event = allowed ? ZMQ_EVENT_ACCEPTED : ZMQ_EVENT_ACCEPT_FAILED;
        EXPECT_NE(wait_event(monitor, event, 3000), -1) << filter;
        if (allowed) {
            zmq_msg_t got;
            zmq_msg_init(&got);
            EXPECT_TRUE(delivered(client, server, got));
            zmq_msg_close(&got);
        }
        zmq_socket_monitor(server, nullptr, 0);
        zmq_close(monitor);
        zmq_close(client);
        zmq_close(server);
    }
}

TEST_F(TransportOptions, IpcUidFilterRefusesOtherUsers) {
    for (uid_t uid : {getuid() + 1, getuid()}) {
        const bool allowed = uid == getuid();
        void *server = socket(ZMQ_PAIR), *client = socket(ZMQ_PAIR);
        ASSERT_EQ(zmq_setsockopt(server, ZMQ_IPC_FILTER_UID, &uid, sizeof uid), 0);
        void *monitor = monitor_of(server, allowed ? "inproc://uid-ok" : "inproc://uid-no",
                                   ZMQ_EVENT_ACCEPT_FAILED | ZMQ_EVENT_ACCEPTED);
        ASSERT_EQ(zmq_bind(server, "ipc://*"), 0);
        ASSERT_EQ(zmq_connect(client, last_endpoint(server).c_str()), 0);
        const int event = allowed ? ZMQ_EVENT_ACCEPTED : ZMQ_EVENT_ACCEPT_FAILED;
        EXPECT_NE(wait_event(monitor, event, 3000), -1) << uid;
        zmq_socket_monitor(server, nullptr, 0);
        zmq_close(monitor);
        zmq_close(client);
        zmq_close(server);
    }
}

TEST_F(TransportOptions, UseFdAdoptsTheApplicationsListeningSocket) {
    test_support::loopback_listener listener(16);
    const std::string endpoint = listener.endpoint();
    void *server = socket(ZMQ_PAIR), *client = socket(ZMQ_PAIR);
    set_int(server, ZMQ_USE_FD, listener.release());
    ASSERT_EQ(zmq_bind(server, endpoint.c_str()), 0);
    EXPECT_EQ(last_endpoint(server), endpoint);
    ASSERT_EQ(zmq_connect(client, endpoint.c_str()), 0);
    zmq_msg_t got;
    zmq_msg_init(&got);
    EXPECT_TRUE(delivered(client, server, got));
    zmq_msg_close(&got);
    zmq_close(client);
    zmq_close(server);  // the listener owns (and closes) the adopted fd
}

TEST_F(TransportOptions, UnbindClosesTheAcceptedConnections) {
    void *server = socket(ZMQ_PAIR), *client = socket(ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(server, "tcp://127.0.0.1:*"), 0);
    const std::string endpoint = last_endpoint(server);
    void *monitor = monitor_of(client, "inproc://unbind-client", ZMQ_EVENT_DISCONNECTED);
    ASSERT_EQ(zmq_connect(client, endpoint.c_str()), 0);
    zmq_msg_t got;
    zmq_msg_init(&got);
    ASSERT_TRUE(delivered(client, server, got));
    zmq_msg_close(&got);
    ASSERT_EQ(zmq_unbind(server, endpoint.c_str()), 0);
    // The server socket finishes the pipe's termination inside its own calls
    // (as in libzmq), so keep it busy while waiting for the client's event.
    bool disconnected = false;
    for (int i = 0; i < 30 && !disconnected; ++i) {
        int events;
        size_t len = sizeof events;
        zmq_getsockopt(server, ZMQ_EVENTS, &events, &len);
        disconnected = wait_event(monitor, ZMQ_EVENT_DISCONNECTED, 100) != -1;
    }
    EXPECT_TRUE(disconnected);
    zmq_socket_monitor(client, nullptr, 0);
    zmq_close(monitor);
    zmq_close(client);
    zmq_close(server);
}

// A listening socket whose accept queue is full: the kernel drops further
// SYNs, so a connect to it hangs until ZMQ_CONNECT_TIMEOUT gives up.
struct stuffed_listener {
    test_support::loopback_listener listener{0};
    test_support::unique_fd fillers[4];
    std::string endpoint = listener.endpoint();
    stuffed_listener() {
        for (auto &f : fillers)  // fill the queue; the later ones stay half-open
            f = test_support::start_connect_loopback(listener.port());
    }
};

TEST_F(TransportOptions, ConnectTimeoutGivesUpOnAHangingConnect) {
    stuffed_listener stuffed;
    void *client = socket(ZMQ_DEALER);
    set_int(client, ZMQ_CONNECT_TIMEOUT, 200);
    void *monitor = monitor_of(client, "inproc://connect-timeout",
                               ZMQ_EVENT_CONNECT_DELAYED | ZMQ_EVENT_CONNECT_RETRIED);
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(zmq_connect(client, stuffed.endpoint.c_str()), 0);
    // As libzmq: DELAYED while the connect is pending, then, once the timeout
    // closed it, RETRIED with the wait before the next attempt (RECONNECT_IVL plus
    // a random part below it).
    EXPECT_EQ(wait_event(monitor, ZMQ_EVENT_CONNECT_DELAYED, 5000), EINPROGRESS);
    const int wait = wait_event(monitor, ZMQ_EVENT_CONNECT_RETRIED, 5000);
    EXPECT_GE(wait, 100);
    EXPECT_LT(wait, 200);
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_GE(waited, std::chrono::milliseconds(150));
    EXPECT_LT(waited, std::chrono::milliseconds(3000));  // the kernel alone takes longer
    zmq_socket_monitor(client, nullptr, 0);
    zmq_close(monitor);
    zmq_close(client);
}

// A TCP server that accepts every connection and closes it at once: a peer
// that never lets a queued message through.
struct slamming_server {
    test_support::loopback_listener listener{16};
    std::string endpoint = listener.endpoint();
    std::atomic<bool> done{false};
    std::thread loop{[this] {
        while (!done)
            if (int c = ::accept(listener.fd(), nullptr, nullptr); c >= 0)
                ::close(c);
    }};
    ~slamming_server() {
        done = true;
        ::shutdown(listener.fd(), SHUT_RDWR);  // wakes accept()
        loop.join();
    }
};

// libzmq reads ZMQ_LINGER when the socket closes: a linger of 0 set after
// zmq_connect must still drop the message that cannot be delivered, so
// zmq_ctx_term returns (zlink used the value from connect time and hung).
TEST_F(TransportOptions, LingerIsReadAtCloseNotAtConnect) {
    slamming_server server;
    void *client = zmq_socket(ctx, ZMQ_PAIR);  // default linger: forever
    ASSERT_EQ(zmq_connect(client, server.endpoint.c_str()), 0);
    ASSERT_EQ(zmq_send(client, "stuck", 5, 0), 5);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    set_int(client, ZMQ_LINGER, 0);
    zmq_close(client);
    const auto start = std::chrono::steady_clock::now();
    zmq_ctx_term(ctx);  // TearDown's term then finds the context gone: make a new one
    ctx = zmq_ctx_new();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// libzmq writes ZMQ_EVENTS as an int and zeroes the rest of a larger buffer:
// applications that read it into an int64 see only the POLLIN/POLLOUT bits.
TEST_F(TransportOptions, EventsIntoAWiderBufferReadsOnlyTheFlags) {
    void *s = socket(ZMQ_PAIR);
    std::int64_t events = -1;
    size_t len = sizeof events;
    ASSERT_EQ(zmq_getsockopt(s, ZMQ_EVENTS, &events, &len), 0);
    EXPECT_EQ(len, sizeof(int));
    EXPECT_EQ(events & ~std::int64_t{ZMQ_POLLIN | ZMQ_POLLOUT}, 0);
    zmq_close(s);
}

// A wildcard bind is known by its resolved endpoint only, as in libzmq.
TEST_F(TransportOptions, WildcardBindIsUnboundByItsResolvedEndpoint) {
    void *s = socket(ZMQ_PAIR);
    ASSERT_EQ(zmq_bind(s, "tcp://127.0.0.1:*"), 0);
    EXPECT_EQ(zmq_unbind(s, "tcp://127.0.0.1:*"), -1);
    EXPECT_EQ(zmq_errno(), ENOENT);
    EXPECT_EQ(zmq_unbind(s, last_endpoint(s).c_str()), 0);
    zmq_close(s);
}

// Closing a socket reports its listener's CLOSED before MONITOR_STOPPED (zlink
// stopped the monitor first, so CLOSED never arrived).
TEST_F(TransportOptions, MonitorSeesTheClosingEventsBeforeItStops) {
    void *s = socket(ZMQ_PAIR);
    void *monitor =
        monitor_of(s, "inproc://closing-events", ZMQ_EVENT_CLOSED | ZMQ_EVENT_MONITOR_STOPPED);
    ASSERT_EQ(zmq_bind(s, "tcp://127.0.0.1:*"), 0);
    zmq_close(s);
    EXPECT_NE(wait_event(monitor, ZMQ_EVENT_CLOSED, 3000), -1);
    EXPECT_NE(wait_event(monitor, ZMQ_EVENT_MONITOR_STOPPED, 3000), -1);
    zmq_close(monitor);
}

}  // namespace
