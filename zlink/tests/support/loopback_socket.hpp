// Raw loopback TCP sockets for tests that need a peer zlink knows nothing about:
// a mock proxy, a listener that never accepts, a port probe, a hand-written ZMTP
// greeting. Plain POSIX calls only, so what such a test sees cannot depend on
// zlink's own code. A call that fails throws std::system_error naming the call
// and errno; GoogleTest reports that as a failure of the test that made it (in
// the body or the fixture's constructor alike). An expected outcome, such as no
// connection within a timeout, is a return value instead.
#pragma once

#include <cstdint>
#include <string>

namespace test_support {

// Owns one file descriptor and closes it exactly once.
class unique_fd {
public:
    unique_fd() noexcept = default;  // owns nothing
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    ~unique_fd() { reset(); }
    unique_fd(unique_fd &&other) noexcept : fd_(other.release()) {}
    unique_fd &operator=(unique_fd &&other) noexcept {
        if (this != &other)
            reset(other.release());
        return *this;
    }
    unique_fd(const unique_fd &) = delete;
    unique_fd &operator=(const unique_fd &) = delete;

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    // Hands the descriptor over (to whoever closes it now); this one owns none.
    int release() noexcept {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    void reset(int fd = -1) noexcept;

private:
    int fd_ = -1;
};

// A TCP socket bound to 127.0.0.1 and listening.
class loopback_listener {
public:
    // Port 0 lets the kernel pick a free (ephemeral) port; the backlog is
    // listen()'s (0 makes a queue that is full after one or two connections).
    explicit loopback_listener(int backlog = 4, std::uint16_t port = 0);

    int fd() const noexcept { return fd_.get(); }
    std::uint16_t port() const noexcept { return port_; }
    std::string address() const;   // "127.0.0.1:<port>"
    std::string endpoint() const;  // "tcp://127.0.0.1:<port>"

    // The next connection, or an empty fd after timeout_ms without one. When
    // peer_port is given it receives the connection's source port.
    unique_fd accept(int timeout_ms, std::uint16_t *peer_port = nullptr);
    // Stops listening; port() is then free for anyone to take.
    void close() noexcept { fd_.reset(); }
    // Hands the listening descriptor over (ZMQ_USE_FD adopts and closes it).
    int release() noexcept { return fd_.release(); }

private:
    unique_fd fd_;
    std::uint16_t port_ = 0;
};

// A client connected to 127.0.0.1:port; throws when the connect fails.
unique_fd connect_loopback(std::uint16_t port);

// As connect_loopback, but a failed connect is an answer, not an error: an
// empty fd with errno saying why. For peers (a proxy) that report it onward.
unique_fd try_connect_loopback(std::uint16_t port) noexcept;

// A non-blocking client whose connect to 127.0.0.1:port is only started: the
// handshake may still be pending (the peer's accept queue may be full).
unique_fd start_connect_loopback(std::uint16_t port);

// The port of "tcp://host:port" or "host:port"; throws on anything else.
std::uint16_t port_of(const std::string &endpoint);

// A port free now (a probe binds it) and below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range). A port inside that range can be
// taken at any moment as the source port of an outgoing connection, including
// the test's own connect attempts (a self-connect), so a test that must bind a
// port chosen before it binds takes one from below. Throws if none is found.
std::uint16_t free_port_below_ephemeral();

}  // namespace test_support
