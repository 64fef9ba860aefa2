// Plain stream sockets (TCP with TCP_NODELAY, Unix domain) for the STREAM pattern's
// peer and the ceiling probe. Every blocking call has a timeout; running out of it
// ends the process through exit_timeout().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bench {

class RawSocket {
public:
    RawSocket() = default;
    explicit RawSocket(int fd) : fd_(fd) {}
    RawSocket(RawSocket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    RawSocket& operator=(RawSocket&& o) noexcept;
    RawSocket(const RawSocket&) = delete;
    RawSocket& operator=(const RawSocket&) = delete;
    ~RawSocket();

    int fd() const { return fd_; }
    void set_timeouts(int timeout_ms);
    void set_nodelay();
    void write_all(const void* data, std::size_t n);
    void read_exact(void* data, std::size_t n);
    // Reads what is available (at least one byte); 0 means the peer closed.
    std::size_t read_some(void* data, std::size_t n);

private:
    int fd_ = -1;
};

class RawListener {
public:
    // TCP on 127.0.0.1 with an ephemeral port.
    static RawListener tcp_loopback();
    // Unix-domain stream socket at a unique path under /tmp (removed on exit).
    static RawListener unix_socket();
    RawSocket accept(int timeout_ms);
    std::uint16_t port() const { return port_; }
    const std::string& path() const { return path_; }

private:
    RawSocket sock_;
    std::uint16_t port_ = 0;
    std::string path_;
};

RawSocket tcp_connect_loopback(std::uint16_t port, int timeout_ms);
RawSocket unix_connect(const std::string& path, int timeout_ms);

// A unique path under /tmp with the pid in it, registered for removal on exit.
std::string unique_tmp_path(const char* what);

}  // namespace bench
