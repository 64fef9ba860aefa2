// ZMQ_SOCKS_PROXY: the SOCKS5 client (RFC 1928, RFC 1929 credentials).
// First the message codec byte by byte, then whole connections through a
// small proxy in this process: it speaks the server side of the exchange,
// records what it was asked, and relays bytes to the real destination.  Its
// replies can be spoiled, to show that a bad proxy fails that one connection
// and the connecter tries again (reconnect) without harming the socket.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "loopback_socket.hpp"
#include "transport/socks.hpp"
#include "zlink.h"
#include "zmq.h"

namespace {

using bytes = std::vector<std::uint8_t>;

bytes of(const std::string &s) { return bytes(s.begin(), s.end()); }

// ---- the codec ----

TEST(SocksCodec, GreetingOffersOneMethod) {
    EXPECT_EQ(of(zlink::socks_greeting(false)), (bytes{5, 1, 0}));
    EXPECT_EQ(of(zlink::socks_greeting(true)), (bytes{5, 1, 2}));
}

TEST(SocksCodec, MethodChoice) {
    const std::uint8_t none[2] = {5, 0}, pass[2] = {5, 2}, refused[2] = {5, 0xff}, v4[2] = {4, 0};
    EXPECT_EQ(zlink::socks_check_choice(none, false), zlink::socks_error::ok);
    EXPECT_EQ(zlink::socks_check_choice(pass, true), zlink::socks_error::ok);
    EXPECT_EQ(zlink::socks_check_choice(refused, false), zlink::socks_error::no_method);
    EXPECT_EQ(zlink::socks_check_choice(pass, false),
              zlink::socks_error::malformed);  // not offered
    EXPECT_EQ(zlink::socks_check_choice(v4, false), zlink::socks_error::malformed);
}

TEST(SocksCodec, Credentials) {
    EXPECT_EQ(of(zlink::socks_credentials("ab", "xyz")), (bytes{1, 2, 'a', 'b', 3, 'x', 'y', 'z'}));
    const std::uint8_t ok[2] = {1, 0}, no[2] = {1, 1}, bad[2] = {5, 0};
    EXPECT_EQ(zlink::socks_check_auth_status(ok), zlink::socks_error::ok);
    EXPECT_EQ(zlink::socks_check_auth_status(no), zlink::socks_error::auth_rejected);
    EXPECT_EQ(zlink::socks_check_auth_status(bad), zlink::socks_error::malformed);
}

TEST(SocksCodec, ConnectRequestByAddressType) {
    std::string out;
    ASSERT_EQ(zlink::socks_connect_request("127.0.0.1", 0x1234, out), zlink::socks_error::ok);
    EXPECT_EQ(of(out), (bytes{5, 1, 0, 1, 127, 0, 0, 1, 0x12, 0x34}));
    ASSERT_EQ(zlink::socks_connect_request("::1", 80, out), zlink::socks_error::ok);
    bytes v6{5, 1, 0, 4};
    v6.insert(v6.end(), 15, 0);
    v6.insert(v6.end(), {1, 0, 80});
    EXPECT_EQ(of(out), v6);
    ASSERT_EQ(zlink::socks_connect_request("ex.org", 1, out), zlink::socks_error::ok);
    EXPECT_EQ(of(out), (bytes{5, 1, 0, 3, 6, 'e', 'x', '.', 'o', 'r', 'g', 0, 1}));
    EXPECT_EQ(zlink::socks_connect_request(std::string(256, 'a'), 1, out),
              zlink::socks_error::bad_target);
}

TEST(SocksCodec, ReplyHeadSaysHowMuchFollows) {
    std::size_t rest = 0;
    const std::uint8_t v4[5] = {5, 0, 0, 1, 127}, v6[5] = {5, 0, 0, 4, 0},
                       name[5] = {5, 0, 0, 3, 9};
    EXPECT_EQ(zlink::socks_check_reply_head(v4, rest), zlink::socks_error::ok);
    EXPECT_EQ(rest, 5u);
    EXPECT_EQ(zlink::socks_check_reply_head(v6, rest), zlink::socks_error::ok);
    EXPECT_EQ(rest, 17u);
    EXPECT_EQ(zlink::socks_check_reply_head(name, rest), zlink::socks_error::ok);
    EXPECT_EQ(rest, 11u);
    const std::uint8_t refused[5] = {5, 5, 0, 1, 0}, version[5] = {4, 0, 0, 1, 0},
                       reserved[5] = {5, 0, 1, 1, 0}, atyp[5] = {5, 0, 0, 7, 0};
    EXPECT_EQ(zlink::socks_check_reply_head(refused, rest), zlink::socks_error::request_refused);
    EXPECT_EQ(zlink::socks_check_reply_head(version, rest), zlink::socks_error::malformed);
    EXPECT_EQ(zlink::socks_check_reply_head(reserved, rest), zlink::socks_error::malformed);
    EXPECT_EQ(zlink::socks_check_reply_head(atyp, rest), zlink::socks_error::malformed);
}

// ---- whole connections through a proxy in this process ----

// How the proxy answers one connection.
enum class answer { good, garbage_reply, refused_reply, bad_version_choice };

// Serves connections one after another, each answered as the next entry of
// `script` says (the last entry repeats).  Bounded: every wait has a timeout
// and the destructor stops it.
class mock_proxy {
public:
    mock_proxy(std::vector<answer> script, std::string user = {}, std::string pass = {})
        : script_(std::move(script)), user_(std::move(user)), pass_(std::move(pass)), listener_(8),
          thread_([this] { serve(); }) {}
    ~mock_proxy() {
        stop_ = true;
        thread_.join();
    }
    std::string address() const { return listener_.address(); }
    int connections() const { return connections_.load(); }
    std::vector<bytes> requests() {
        std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }

private:
    bool wait_readable(int fd) {
        pollfd p{fd, POLLIN, 0};
        while (!stop_)
            if (::poll(&p, 1, 50) > 0)
                return true;
        return false;
    }
    bool read_exact(int fd, std::uint8_t *buf, size_t n) {
        for (size_t got = 0; got < n;) {
            if (!wait_readable(fd))
                return false;
            const ssize_t r = ::recv(fd, buf + got, n - got, 0);
            if (r <= 0)
                return false;
            got += static_cast<size_t>(r);
        }
        return true;
    }
    void send_all(int fd, const bytes &b) { (void)::send(fd, b.data(), b.size(), MSG_NOSIGNAL); }

    void serve() {
        while (!stop_) {
            if (!wait_readable(listener_.fd()))
                return;
            const test_support::unique_fd client{::accept(listener_.fd(), nullptr, nullptr)};
            if (!client)
                continue;
            const int n = connections_++;
            const answer how = script_[std::min<size_t>(n, script_.size() - 1)];
            const test_support::unique_fd remote = negotiate(client.get(), how);
            if (remote)
                relay(client.get(), remote.get());
        }
    }

    // The server side of RFC 1928/1929; the connected destination, or an empty fd.
    test_support::unique_fd negotiate(int client, answer how) {
        std::uint8_t b[300];
        if (!read_exact(client, b, 2) || !read_exact(client, b + 2, b[1]))
            return {};
        const std::uint8_t want = user_.empty() ? 0 : 2;
        const bool offered = std::memchr(b + 2, want, b[1]) != nullptr;
        send_all(client, {std::uint8_t(how == answer::bad_version_choice ? 4 : 5),
                          std::uint8_t(offered ? want : 0xff)});
        if (!offered || how == answer::bad_version_choice)
            return {};
        if (want == 2) {
            if (!read_exact(client, b, 2) || !read_exact(client, b + 2, b[1] + 1u))
                return {};
            const std::string user(reinterpret_cast<char *>(b + 2), b[1]);
            const size_t plen = b[2 + b[1]];
            std::uint8_t p[256];
            if (!read_exact(client, p, plen))
                return {};
            const bool ok =
                user == user_ && std::string(reinterpret_cast<char *>(p), plen) == pass_;
            send_all(client, {1, std::uint8_t(ok ? 0 : 1)});
            if (!ok)
                return {};
        }
        if (!read_exact(client, b, 5))
            return {};
        const size_t rest = b[3] == 1 ? 5 : b[3] == 4 ? 17 : b[3] == 3 ? b[4] + 2u : 0;
        if (rest == 0 || !read_exact(client, b + 5, rest))
            return {};
        {
            std::lock_guard<std::mutex> lock(mutex_);
            requests_.emplace_back(b, b + 5 + rest);
        }
        if (how == answer::garbage_reply) {
            send_all(client, {'g', 'a', 'r', 'b', 'a', 'g', 'e', '!', '!', '!'});
            return {};
        }
        if (how == answer::refused_reply) {
            send_all(client, {5, 5, 0, 1, 0, 0, 0, 0, 0, 0});
            return {};
        }
        // Every destination is this host; the port is the request's last two bytes.
        const std::uint16_t port =
            static_cast<std::uint16_t>(b[5 + rest - 2] << 8 | b[5 + rest - 1]);
        test_support::unique_fd remote = test_support::try_connect_loopback(port);
        if (!remote) {
            send_all(client, {5, 5, 0, 1, 0, 0, 0, 0, 0, 0});
            return {};
        }
        send_all(client, {5, 0, 0, 1, 127, 0, 0, 1, 0, 0});
        return remote;
    }

    void relay(int client, int remote) {
        pollfd p[2] = {{client, POLLIN, 0}, {remote, POLLIN, 0}};
        char buf[4096];
        while (!stop_) {
            if (::poll(p, 2, 50) <= 0)
                continue;
            for (int i = 0; i < 2; ++i) {
                if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                const ssize_t r = ::recv(p[i].fd, buf, sizeof buf, 0);
                if (r <= 0)
                    return;
                (void)::send(p[1 - i].fd, buf, static_cast<size_t>(r), MSG_NOSIGNAL);
            }
        }
    }

    std::vector<answer> script_;
    std::string user_, pass_;
    test_support::loopback_listener listener_;
    std::atomic<bool> stop_{false};
    std::atomic<int> connections_{0};
    std::mutex mutex_;
    std::vector<bytes> requests_;
    std::thread thread_;  // last: it starts serving once everything above exists
};

class SocksConnect : public ::testing::Test {
protected:
    void SetUp() override {
        ctx = zmq_ctx_new();
        push = zmq_socket(ctx, ZMQ_PUSH);
        pull = zmq_socket(ctx, ZMQ_PULL);
        int zero = 0, timeout = 5000, ivl = 20;
        zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(pull, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(pull, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
        zmq_setsockopt(pull, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
        ASSERT_EQ(0, zmq_bind(push, "tcp://127.0.0.1:*"));
        char text[256];
        size_t len = sizeof text;
        zmq_getsockopt(push, ZMQ_LAST_ENDPOINT, text, &len);
        port = std::strrchr(text, ':') + 1;
    }
    void TearDown() override {
        zmq_close(push);
        zmq_close(pull);
        zmq_ctx_term(ctx);
    }
    void connect_through(const mock_proxy &proxy, const std::string &host) {
        const std::string via = proxy.address();
        ASSERT_EQ(0, zmq_setsockopt(pull, ZMQ_SOCKS_PROXY, via.data(), via.size()));
        ASSERT_EQ(0, zmq_connect(pull, ("tcp://" + host + ":" + port).c_str()));
    }
    // Two messages across, in order: the connection carries ZMTP end to end.
    void expect_delivery() {
        ASSERT_EQ(3, zmq_send(push, "ABC", 3, 0));
        ASSERT_EQ(3, zmq_send(push, "DEF", 3, 0));
        char buf[8] = {};
        ASSERT_EQ(3, zmq_recv(pull, buf, sizeof buf, 0)) << zmq_strerror(errno);
        EXPECT_EQ(0, std::memcmp(buf, "ABC", 3));
        ASSERT_EQ(3, zmq_recv(pull, buf, sizeof buf, 0)) << zmq_strerror(errno);
        EXPECT_EQ(0, std::memcmp(buf, "DEF", 3));
    }
    bytes port_bytes() const {
        const int p = std::stoi(port);
        return {std::uint8_t(p >> 8), std::uint8_t(p & 0xff)};
    }

    void *ctx = nullptr, *push = nullptr, *pull = nullptr;
    std::string port;
};

TEST_F(SocksConnect, Ipv4DestinationGoesAsAnAddress) {
    mock_proxy proxy({answer::good});
    connect_through(proxy, "127.0.0.1");
    expect_delivery();
    const auto reqs = proxy.requests();
    ASSERT_EQ(reqs.size(), 1u);
    bytes want{5, 1, 0, 1, 127, 0, 0, 1};
    for (auto b : port_bytes())
        want.push_back(b);
    EXPECT_EQ(reqs[0], want);
}

TEST_F(SocksConnect, HostNameIsResolvedByTheProxy) {
    mock_proxy proxy({answer::good});
    connect_through(proxy, "no-such-host.invalid");  // unresolvable here: only the proxy may
    expect_delivery();
    const auto reqs = proxy.requests();
    ASSERT_EQ(reqs.size(), 1u);
    EXPECT_EQ(reqs[0][3], 3);
    EXPECT_EQ(std::string(reqs[0].begin() + 5, reqs[0].end() - 2), "no-such-host.invalid");
}

TEST_F(SocksConnect, Ipv6DestinationWithoutZmqIpv6) {
    mock_proxy proxy({answer::good});
    connect_through(proxy, "[::1]");
    expect_delivery();
    const auto reqs = proxy.requests();
    ASSERT_EQ(reqs.size(), 1u);
    EXPECT_EQ(reqs[0][3], 4);
    EXPECT_EQ(reqs[0][5 + 15 - 1], 1);  // ::1's last byte
}

TEST_F(SocksConnect, UsernameAndPassword) {
    mock_proxy proxy({answer::good}, "someuser", "somepass");
    ASSERT_EQ(0, zmq_setsockopt(pull, ZMQ_SOCKS_USERNAME, "someuser", 8));
    ASSERT_EQ(0, zmq_setsockopt(pull, ZMQ_SOCKS_PASSWORD, "somepass", 8));
    connect_through(proxy, "127.0.0.1");
    expect_delivery();
    EXPECT_EQ(proxy.connections(), 1);
}

// A bad proxy answer fails that connection only: the connecter closes it and
// tries again after its interval; the next, good answer carries the data.
TEST_F(SocksConnect, MalformedReplyIsRetried) {
    mock_proxy proxy({answer::garbage_reply, answer::good});
    connect_through(proxy, "127.0.0.1");
    expect_delivery();
    EXPECT_EQ(proxy.connections(), 2);
}

TEST_F(SocksConnect, RefusedRequestAndBadChoiceAreRetried) {
    mock_proxy proxy({answer::refused_reply, answer::bad_version_choice, answer::good});
    connect_through(proxy, "127.0.0.1");
    expect_delivery();
    EXPECT_EQ(proxy.connections(), 3);
}

}  // namespace
