// STREAM against libzmq 4.3.5's zmq_socket(3) ZMQ_STREAM description, talking
// to a plain (non-ZMTP) client socket. STREAM carries raw bytes, so it exists
// for byte-stream transports only: tcp and ipc; inproc has no byte stream and
// is not a STREAM transport in libzmq either (not run, not reported passing).
#include "spec_util.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

namespace {

using namespace spec;
using frames = std::vector<std::string>;

class Stream : public transport_test {
protected:
    // A plain client socket connected to `ep` (tcp://127.0.0.1:port or ipc://path).
    int raw_connect(const std::string &ep) {
        int fd = -1;
        if (ep.rfind("tcp://", 0) == 0) {
            const auto colon = ep.rfind(':');
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_port = htons(static_cast<uint16_t>(std::stoi(ep.substr(colon + 1))));
            inet_pton(AF_INET, ep.substr(6, colon - 6).c_str(), &a.sin_addr);
            fd = ::socket(AF_INET, SOCK_STREAM, 0);
            if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0)
                return -1;
        } else {
            sockaddr_un a{};
            a.sun_family = AF_UNIX;
            const std::string path = ep.substr(6);
            std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
            fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0)
                return -1;
        }
        timeval tv{3, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        return fd;
    }
    std::string raw_read(int fd, size_t n) {
        std::string out;
        char buf[4096];
        while (out.size() < n) {
            const ssize_t r = ::read(fd, buf, std::min(sizeof buf, n - out.size()));
            if (r <= 0)
                break;
            out.append(buf, static_cast<size_t>(r));
        }
        return out;
    }
};

// zmq_socket(3), ZMQ_STREAM: "When a connection is made, a zero-length message
// will be received by the application. Similarly, when the peer disconnects
// (or the connection is lost), a zero-length message will be received by the
// application." (with ZMQ_STREAM_NOTIFY, on by default). "When receiving TCP
// data, a ZMQ_STREAM socket shall prepend a message part containing the
// routing id of the originating peer to the message before passing it to the
// application."
TEST_P(Stream, ConnectDataDisconnectWithPlainClient) {
    void *server = socket(ZMQ_STREAM);
    const std::string ep = bind(server);
    const int fd = raw_connect(ep);
    ASSERT_GE(fd, 0) << "plain connect to " << ep;

    frames hello = recv_all(server);
    ASSERT_EQ(hello.size(), 2u);
    EXPECT_EQ(hello[1], "") << "connect notification";
    const std::string id = hello[0];
    EXPECT_FALSE(id.empty());

    ASSERT_EQ(::write(fd, "ping", 4), 4);
    frames data = recv_all(server);
    ASSERT_EQ(data.size(), 2u);
    EXPECT_EQ(data[0], id);
    EXPECT_EQ(data[1], "ping");  // a 4-byte write over loopback arrives as one read

    // "When sending TCP data, a ZMQ_STREAM socket shall remove the first part
    // of the message and use it to determine the routing id of the peer".
    send_all(server, {id, "pong"});
    EXPECT_EQ(raw_read(fd, 4), "pong");

    ::close(fd);
    frames bye = recv_all(server);
    EXPECT_EQ(bye, (frames{id, ""})) << "disconnect notification";
}

// zmq_socket(3), ZMQ_STREAM: "To close a specific connection, send the routing
// id frame followed by a zero-length message."
TEST_P(Stream, EmptyFrameClosesConnection) {
    void *server = socket(ZMQ_STREAM);
    const int fd = raw_connect(bind(server));
    ASSERT_GE(fd, 0);
    frames hello = recv_all(server);
    ASSERT_EQ(hello.size(), 2u);
    send_all(server, {hello[0], ""});
    char c;
    EXPECT_EQ(::read(fd, &c, 1), 0) << "connection not closed";
    ::close(fd);
}

// ZMQ_STREAM_NOTIFY = 0: no zero-length notifications, data only.
TEST_P(Stream, NotifyOffSendsDataOnly) {
    void *server = socket(ZMQ_STREAM);
    set_int(server, ZMQ_STREAM_NOTIFY, 0);
    const int fd = raw_connect(bind(server));
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "abc", 3), 3);
    frames data = recv_all(server);
    ASSERT_EQ(data.size(), 2u);
    EXPECT_EQ(data[1], "abc");
    ::close(fd);
    EXPECT_TRUE(nothing_arrives(server, std::chrono::milliseconds(300)));
}

// An unknown routing id cannot be routed (libzmq 4.3.5: EHOSTUNREACH).
TEST_P(Stream, UnknownIdIsEhostunreach) {
    void *server = socket(ZMQ_STREAM);
    bind(server);
    EXPECT_EQ(send(server, "nobody", ZMQ_SNDMORE | ZMQ_DONTWAIT), -1);
    EXPECT_EQ(zmq_errno(), EHOSTUNREACH);
}

// zmq_setsockopt(3), ZMQ_CONNECT_ROUTING_ID: "Sets the peer id of the peer
// connected via the following zmq_connect() call" (also for ZMQ_STREAM). A
// STREAM that connects out to a plain listening socket addresses it by that id.
TEST_P(Stream, ConnectOutWithConnectRoutingId) {
    // A plain listener on a fresh endpoint of this transport.
    int lfd = -1;
    std::string ep;
    if (transport() == "tcp") {
        lfd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        socklen_t len = sizeof a;
        getsockname(lfd, reinterpret_cast<sockaddr *>(&a), &len);
        ep = "tcp://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    } else {
        const std::string path = "/tmp/zlink-spec-" + unique_name() + ".sock";
        ipc_paths_.push_back(path);
        lfd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
        ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        ep = "ipc://" + path;
    }
    ASSERT_EQ(::listen(lfd, 4), 0);
    void *client = socket(ZMQ_STREAM);
    set_str(client, ZMQ_CONNECT_ROUTING_ID, "out-1");
    connect(client, ep);
    const int fd = ::accept(lfd, nullptr, nullptr);
    ASSERT_GE(fd, 0);
    timeval tv{3, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    EXPECT_EQ(recv_all(client), (frames{"out-1", ""})) << "connect notification";
    send_all(client, {"out-1", "hi"});
    EXPECT_EQ(raw_read(fd, 2), "hi");
    ASSERT_EQ(::write(fd, "yo", 2), 2);
    EXPECT_EQ(recv_all(client), (frames{"out-1", "yo"}));
    ::close(fd);
    ::close(lfd);
}

INSTANTIATE_TEST_SUITE_P(, Stream, ::testing::Values("tcp", "ipc"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
