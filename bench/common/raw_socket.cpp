#include "raw_socket.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "endpoint.hpp"
#include "process.hpp"

namespace bench {

namespace {

std::string errno_text(const char *what) { return std::string(what) + ": " + std::strerror(errno); }

void set_timeout_opt(int fd, int opt, int timeout_ms) {
    timeval tv{};
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    if (::setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv) != 0)
        exit_error(errno_text("setsockopt timeout"));
}

// IPv4 address of a tcp endpoint's host ("*" = any interface); exit 1 if unknown.
sockaddr_in resolve_ipv4(const Endpoint &ep) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(ep.port == "*" ? 0 : static_cast<std::uint16_t>(std::stoi(ep.port)));
    if (ep.host == "*") {
        addr.sin_addr.s_addr = htonl(INADDR_ANY);
        return addr;
    }
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *res = nullptr;
    if (const int rc = ::getaddrinfo(ep.host.c_str(), nullptr, &hints, &res); rc != 0 || !res)
        exit_error("cannot resolve host '" + ep.host + "' of " + ep.text() + ": " +
                   ::gai_strerror(rc));
    addr.sin_addr = reinterpret_cast<sockaddr_in *>(res->ai_addr)->sin_addr;
    ::freeaddrinfo(res);
    return addr;
}

sockaddr_un unix_address(const std::string &path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        exit_error("ipc path too long: " + path);
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    return addr;
}

void apply_buffers(int fd, SocketBuffers b) {
    if (b.sndbuf >= 0 && ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b.sndbuf, sizeof b.sndbuf) != 0)
        exit_error(errno_text("setsockopt SO_SNDBUF"));
    if (b.rcvbuf >= 0 && ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b.rcvbuf, sizeof b.rcvbuf) != 0)
        exit_error(errno_text("setsockopt SO_RCVBUF"));
}

// One connect attempt; false (errno kept) when nobody listens yet.
bool try_connect(int fd, const Endpoint &ep) {
    if (ep.scheme == "tcp") {
        const sockaddr_in addr = resolve_ipv4(ep);
        return ::connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof addr) == 0;
    }
    const sockaddr_un addr = unix_address(ep.path);
    return ::connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof addr) == 0;
}

}  // namespace

std::string unique_tmp_path(const char *what) {
    static std::atomic<int> counter{0};
    std::string p = "/tmp/bench-" + std::string(what) + "-" + std::to_string(::getpid()) + "-" +
                    std::to_string(counter.fetch_add(1));
    ::unlink(p.c_str());
    register_cleanup_path(p);
    return p;
}

RawSocket &RawSocket::operator=(RawSocket &&o) noexcept {
    if (this != &o) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = o.fd_;
        o.fd_ = -1;
    }
    return *this;
}

RawSocket::~RawSocket() {
    if (fd_ >= 0)
        ::close(fd_);
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

void RawSocket::write_all(const void *data, std::size_t n) {
    const char *p = static_cast<const char *>(data);
    while (n > 0) {
        ssize_t w = ::send(fd_, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                exit_timeout("raw socket send made no progress");
            exit_error(errno_text("raw socket send"));
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

std::size_t RawSocket::read_some(void *data, std::size_t n) {
    for (;;) {
        ssize_t r = ::recv(fd_, data, n, 0);
        if (r >= 0)
            return static_cast<std::size_t>(r);
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            exit_timeout("raw socket receive got nothing");
        exit_error(errno_text("raw socket recv"));
    }
}

void RawSocket::read_exact(void *data, std::size_t n) {
    char *p = static_cast<char *>(data);
    while (n > 0) {
        std::size_t r = read_some(p, n);
        if (r == 0)
            exit_error("raw socket: peer closed the connection early");
        p += r;
        n -= r;
    }
}

RawListener RawListener::at(const Endpoint &ep, SocketBuffers buffers) {
    RawListener l;
    const bool tcp = ep.scheme == "tcp";
    l.sock_ = RawSocket(::socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (l.sock_.fd() < 0)
        exit_error(errno_text("socket"));
    apply_buffers(l.sock_.fd(), buffers);
    int rc = 0;
    if (tcp) {
        int one = 1;
        ::setsockopt(l.sock_.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in addr = resolve_ipv4(ep);
        rc = ::bind(l.sock_.fd(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr);
        socklen_t len = sizeof addr;
        ::getsockname(l.sock_.fd(), reinterpret_cast<sockaddr *>(&addr), &len);
        l.port_ = ntohs(addr.sin_port);
        l.host_ = ep.host;
    } else {
        l.path_ = ep.path;
        ::unlink(ep.path.c_str());
        register_cleanup_path(ep.path);
        const sockaddr_un addr = unix_address(ep.path);
        rc = ::bind(l.sock_.fd(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr);
    }
    if (rc != 0)
        exit_error(errno_text(("bind " + ep.text()).c_str()));
    if (::listen(l.sock_.fd(), 4) != 0)
        exit_error(errno_text("listen"));
    return l;
}

std::string RawListener::endpoint() const {
    return path_.empty() ? "tcp://" + host_ + ":" + std::to_string(port_) : "ipc://" + path_;
}

RawSocket connect_to_endpoint(const Endpoint &ep, int timeout_ms, const std::string &what,
                              SocketBuffers buffers) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        RawSocket s(
            ::socket(ep.scheme == "tcp" ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (s.fd() < 0)
            exit_error(errno_text("socket"));
        apply_buffers(s.fd(), buffers);
        s.set_timeouts(timeout_ms);  // also bounds connect() on Linux
        if (try_connect(s.fd(), ep)) {
            if (ep.scheme == "tcp")
                s.set_nodelay();
            return s;
        }
        const bool nobody_yet = errno == ECONNREFUSED || errno == ENOENT;
        if (!nobody_yet && errno != EINPROGRESS && errno != EAGAIN && errno != ETIMEDOUT)
            exit_error(errno_text(("connect to " + what + " " + ep.text()).c_str()));
        if (std::chrono::steady_clock::now() >= deadline)
            exit_timeout("nothing listened at " + what + " " + ep.text() + " within " +
                         std::to_string(timeout_ms) + " ms (peer not started, or gone)");
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

RawSocket RawListener::accept(int timeout_ms, const std::string &what) {
    pollfd pfd{sock_.fd(), POLLIN, 0};
    int n = ::poll(&pfd, 1, timeout_ms);
    if (n == 0)
        exit_timeout("no " + what + " connected within " + std::to_string(timeout_ms) + " ms");
    if (n < 0)
        exit_error(errno_text("poll"));
    int fd = ::accept4(sock_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
        exit_error(errno_text("accept"));
    return RawSocket(fd);
}

}  // namespace bench
