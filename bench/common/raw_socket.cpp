#include "raw_socket.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>

#include "process.hpp"

namespace bench {

namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void set_timeout_opt(int fd, int opt, int timeout_ms) {
    timeval tv{};
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    if (::setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv) != 0) exit_error(errno_text("setsockopt timeout"));
}

}  // namespace

std::string unique_tmp_path(const char* what) {
    static std::atomic<int> counter{0};
    std::string p = "/tmp/bench-" + std::string(what) + "-" + std::to_string(::getpid()) + "-" +
                    std::to_string(counter.fetch_add(1));
    ::unlink(p.c_str());
    register_cleanup_path(p);
    return p;
}

RawSocket& RawSocket::operator=(RawSocket&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.fd_;
        o.fd_ = -1;
    }
    return *this;
}

RawSocket::~RawSocket() {
    if (fd_ >= 0) ::close(fd_);
}

void RawSocket::set_timeouts(int timeout_ms) {
    set_timeout_opt(fd_, SO_RCVTIMEO, timeout_ms);
    set_timeout_opt(fd_, SO_SNDTIMEO, timeout_ms);
}

void RawSocket::set_nodelay() {
    int one = 1;
    if (::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        exit_error(errno_text("setsockopt TCP_NODELAY"));
}

void RawSocket::write_all(const void* data, std::size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        ssize_t w = ::send(fd_, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) exit_timeout("raw socket send made no progress");
            exit_error(errno_text("raw socket send"));
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

std::size_t RawSocket::read_some(void* data, std::size_t n) {
    for (;;) {
        ssize_t r = ::recv(fd_, data, n, 0);
        if (r >= 0) return static_cast<std::size_t>(r);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) exit_timeout("raw socket receive got nothing");
        exit_error(errno_text("raw socket recv"));
    }
}

void RawSocket::read_exact(void* data, std::size_t n) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
        std::size_t r = read_some(p, n);
        if (r == 0) exit_error("raw socket: peer closed the connection early");
        p += r;
        n -= r;
    }
}

RawListener RawListener::tcp_loopback() {
    RawListener l;
    l.sock_ = RawSocket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (l.sock_.fd() < 0) exit_error(errno_text("socket"));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(l.sock_.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) exit_error(errno_text("bind"));
    if (::listen(l.sock_.fd(), 4) != 0) exit_error(errno_text("listen"));
    socklen_t len = sizeof addr;
    ::getsockname(l.sock_.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
    l.port_ = ntohs(addr.sin_port);
    return l;
}

RawListener RawListener::unix_socket() {
    RawListener l;
    l.path_ = unique_tmp_path("uds");
    l.sock_ = RawSocket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (l.sock_.fd() < 0) exit_error(errno_text("socket"));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, l.path_.c_str(), sizeof addr.sun_path - 1);
    if (::bind(l.sock_.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) exit_error(errno_text("bind"));
    if (::listen(l.sock_.fd(), 4) != 0) exit_error(errno_text("listen"));
    return l;
}

RawSocket RawListener::accept(int timeout_ms) {
    pollfd pfd{sock_.fd(), POLLIN, 0};
    int n = ::poll(&pfd, 1, timeout_ms);
    if (n == 0) exit_timeout("no peer connected within " + std::to_string(timeout_ms) + " ms");
    if (n < 0) exit_error(errno_text("poll"));
    int fd = ::accept4(sock_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) exit_error(errno_text("accept"));
    return RawSocket(fd);
}

RawSocket tcp_connect_loopback(std::uint16_t port, int timeout_ms) {
    RawSocket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.fd() < 0) exit_error(errno_text("socket"));
    s.set_timeouts(timeout_ms);  // also bounds connect() on Linux
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    if (::connect(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno == EINPROGRESS || errno == EAGAIN) exit_timeout("tcp connect did not complete");
        exit_error(errno_text("tcp connect"));
    }
    return s;
}

RawSocket unix_connect(const std::string& path, int timeout_ms) {
    RawSocket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.fd() < 0) exit_error(errno_text("socket"));
    s.set_timeouts(timeout_ms);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    if (::connect(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        exit_error(errno_text("unix connect"));
    return s;
}

}  // namespace bench
