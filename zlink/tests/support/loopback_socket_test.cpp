// The helper's own contract: what it hands back works, and every failed call
// throws with the call and errno in its message (the tests using it rely on
// that instead of checking each call).
#include "loopback_socket.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace {

using namespace test_support;

// The message of the std::system_error `call` throws, and its errno.
template <typename Call>
std::pair<std::string, int> system_error_of(Call call) {
    try {
        call();
    } catch (const std::system_error &e) {
        return {e.what(), e.code().value()};
    }
    return {"(nothing thrown)", 0};
}

TEST(LoopbackSocket, ListenerAcceptsAConnectFromItsPort) {
    loopback_listener listener;
    ASSERT_NE(listener.port(), 0);
    EXPECT_EQ(listener.endpoint(), "tcp://127.0.0.1:" + std::to_string(listener.port()));
    const unique_fd client = connect_loopback(listener.port());
    sockaddr_in local{};
    socklen_t len = sizeof local;
    ASSERT_EQ(::getsockname(client.get(), reinterpret_cast<sockaddr *>(&local), &len), 0);
    std::uint16_t peer_port = 0;
    const unique_fd served = listener.accept(5000, &peer_port);
    ASSERT_TRUE(served);
    EXPECT_EQ(peer_port, ntohs(local.sin_port));
    ASSERT_EQ(::send(client.get(), "x", 1, MSG_NOSIGNAL), 1);
    char got = 0;
    EXPECT_EQ(::recv(served.get(), &got, 1, 0), 1);
    EXPECT_EQ(got, 'x');
}

TEST(LoopbackSocket, AcceptWithoutAConnectionTimesOutEmpty) {
    loopback_listener listener;
    EXPECT_FALSE(listener.accept(20));
}

TEST(LoopbackSocket, TakenPortThrowsNamingBindAndErrno) {
    loopback_listener first;
    const auto [what, err] = system_error_of([&] { loopback_listener second(4, first.port()); });
    EXPECT_EQ(err, EADDRINUSE);
    EXPECT_EQ(what.rfind("bind(" + first.address() + ") errno " + std::to_string(EADDRINUSE), 0),
              0u)
        << what;
}

TEST(LoopbackSocket, RefusedConnectThrowsOrAnswersEmpty) {
    loopback_listener closed;
    const std::uint16_t port = closed.port();
    closed.close();
    const auto [what, err] = system_error_of([&] { connect_loopback(port); });
    EXPECT_EQ(err, ECONNREFUSED);
    EXPECT_EQ(what.rfind("connect(127.0.0.1:" + std::to_string(port) + ") errno", 0), 0u) << what;
    errno = 0;
    EXPECT_FALSE(try_connect_loopback(port));
    EXPECT_EQ(errno, ECONNREFUSED);
}

TEST(LoopbackSocket, StartedConnectCompletesLater) {
    loopback_listener listener;
    const unique_fd client = start_connect_loopback(listener.port());
    ASSERT_TRUE(client);
    EXPECT_TRUE(listener.accept(5000));
}

TEST(LoopbackSocket, ReleasedDescriptorIsNotClosed) {
    int fd = -1;
    {
        loopback_listener listener;
        fd = listener.release();
        EXPECT_EQ(listener.fd(), -1);
    }
    int type = 0;
    socklen_t len = sizeof type;
    EXPECT_EQ(::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len), 0) << "closed by the listener";
    unique_fd owner{fd};
}

TEST(LoopbackSocket, PortOfReadsTheNumberAfterTheLastColon) {
    EXPECT_EQ(port_of("tcp://127.0.0.1:5555"), 5555);
    EXPECT_EQ(port_of("[::1]:80"), 80);
    EXPECT_THROW(port_of("tcp://127.0.0.1:*"), std::invalid_argument);
    EXPECT_THROW(port_of("tcp://127.0.0.1:70000"), std::invalid_argument);
    EXPECT_THROW(port_of("no-port"), std::invalid_argument);
}

TEST(LoopbackSocket, FreePortIsBelowTheEphemeralRangeAndBindable) {
    int low = 32768, high = 60999;
    if (FILE *f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
        ASSERT_EQ(std::fscanf(f, "%d %d", &low, &high), 2);
        std::fclose(f);
    }
    const std::uint16_t port = free_port_below_ephemeral();
    EXPECT_GE(port, 10000);
    if (low > 10100)
        EXPECT_LT(port, low);
    loopback_listener on_it(4, port);
    EXPECT_EQ(on_it.port(), port);
}

}  // namespace
