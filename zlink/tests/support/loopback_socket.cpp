#include "loopback_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <system_error>

namespace test_support {

namespace {

// Throws for the call that just failed, with errno's number and text, e.g.
// "bind(127.0.0.1:5555) errno 98: Address already in use".
[[noreturn]] void fail(const std::string &call) {
    const int err = errno;
    throw std::system_error(err, std::generic_category(), call + " errno " + std::to_string(err));
}

std::string loopback_address(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
}

unique_fd tcp_socket(int flags = 0) {
    unique_fd fd{::socket(AF_INET, SOCK_STREAM | flags, 0)};
    if (!fd)
        fail("socket(AF_INET, SOCK_STREAM)");
    return fd;
}

int connect_to(int fd, std::uint16_t port) {
    const sockaddr_in a = loopback(port);
    return ::connect(fd, reinterpret_cast<const sockaddr *>(&a), sizeof a);
}

// The kernel's ephemeral range starts here (its documented default when the
// file cannot be read).
int ephemeral_low() {
    int low = 32768, high = 60999;
    if (FILE *f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
        if (std::fscanf(f, "%d %d", &low, &high) != 2)
            low = 32768;
        std::fclose(f);
    }
    return low;
}

// True when a fresh socket could bind 127.0.0.1:port just now.
bool bindable(std::uint16_t port) {
    const unique_fd fd = tcp_socket();
    const sockaddr_in a = loopback(port);
    return ::bind(fd.get(), reinterpret_cast<const sockaddr *>(&a), sizeof a) == 0;
}

}  // namespace

void unique_fd::reset(int fd) noexcept {
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = fd;
}

loopback_listener::loopback_listener(int backlog, std::uint16_t port) : fd_(tcp_socket()) {
    sockaddr_in a = loopback(port);
    if (::bind(fd_.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) != 0)
        fail("bind(" + loopback_address(port) + ")");
    if (::listen(fd_.get(), backlog) != 0)
        fail("listen(backlog " + std::to_string(backlog) + ")");
    socklen_t len = sizeof a;
    if (::getsockname(fd_.get(), reinterpret_cast<sockaddr *>(&a), &len) != 0)
        fail("getsockname");
    port_ = ntohs(a.sin_port);
}

std::string loopback_listener::address() const { return loopback_address(port_); }

std::string loopback_listener::endpoint() const { return "tcp://" + address(); }

unique_fd loopback_listener::accept(int timeout_ms, std::uint16_t *peer_port) {
    pollfd p{fd_.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0)
        fail("poll(listener " + address() + ")");
    if (ready == 0)
        return unique_fd{};
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    unique_fd conn{::accept(fd_.get(), reinterpret_cast<sockaddr *>(&peer), &len)};
    if (!conn)
        fail("accept(" + address() + ")");
    if (peer_port)
        *peer_port = ntohs(peer.sin_port);
    return conn;
}

unique_fd connect_loopback(std::uint16_t port) {
    unique_fd fd = tcp_socket();
    if (connect_to(fd.get(), port) != 0)
        fail("connect(" + loopback_address(port) + ")");
    return fd;
}

unique_fd try_connect_loopback(std::uint16_t port) noexcept {
    unique_fd fd{::socket(AF_INET, SOCK_STREAM, 0)};
    if (fd && connect_to(fd.get(), port) != 0) {
        const int err = errno;
        fd.reset();
        errno = err;
    }
    return fd;
}

unique_fd start_connect_loopback(std::uint16_t port) {
    unique_fd fd = tcp_socket(SOCK_NONBLOCK);
    if (connect_to(fd.get(), port) != 0 && errno != EINPROGRESS)
        fail("connect(" + loopback_address(port) + ", non-blocking)");
    return fd;
}

std::uint16_t port_of(const std::string &endpoint) {
    const auto colon = endpoint.rfind(':');
    const std::string digits = colon == std::string::npos ? "" : endpoint.substr(colon + 1);
    const bool numeric = !digits.empty() && digits.size() <= 5 &&
                         digits.find_first_not_of("0123456789") == std::string::npos;
    if (!numeric || std::stoul(digits) > 65535)
        throw std::invalid_argument("port_of(\"" + endpoint +
                                    "\"): no numeric port after the last ':'");
    return static_cast<std::uint16_t>(std::stoul(digits));
}

std::uint16_t free_port_below_ephemeral() {
    // Probes from 10000 up, at a stride that spreads the processes of parallel
    // test runs (the pid picks the start) over the whole span.
    const int low = ephemeral_low();
    const int first = 10000, span = low - first > 100 ? low - first : 100;
    for (int i = 0; i < 500; ++i) {
        const auto port = static_cast<std::uint16_t>(first + (::getpid() + i * 7919) % span);
        if (bindable(port))
            return port;
    }
    throw std::runtime_error(
        "free_port_below_ephemeral: 500 probes of 127.0.0.1:" + std::to_string(first) + "-" +
        std::to_string(first + span - 1) + " found every port taken");
}

}  // namespace test_support
