// Plain stream sockets (TCP with TCP_NODELAY, Unix domain) for the STREAM pattern's
// peer, the control connection of two-process runs and the ceiling probe. Every blocking call has a
// timeout; running out of it ends the process through exit_timeout().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bench {

struct Endpoint;

// SO_SNDBUF/SO_RCVBUF for a new socket (-1: the OS default), set before connect or
// listen as libzmq applies ZMQ_SNDBUF/ZMQ_RCVBUF.
struct SocketBuffers {
    int sndbuf = -1, rcvbuf = -1;
};

class RawSocket {
public:
    RawSocket() = default;
    explicit RawSocket(int fd) : fd_(fd) {}
    RawSocket(RawSocket &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    RawSocket &operator=(RawSocket &&o) noexcept;
    RawSocket(const RawSocket &) = delete;
    RawSocket &operator=(const RawSocket &) = delete;
    ~RawSocket();

    int fd() const { return fd_; }
    void set_timeouts(int timeout_ms);
    void set_nodelay();
    void write_all(const void *data, std::size_t n);
    void read_exact(void *data, std::size_t n);
    // Reads what is available (at least one byte); 0 means the peer closed.
    std::size_t read_some(void *data, std::size_t n);

private:
    int fd_ = -1;
};

class RawListener {
public:
    // tcp://HOST:PORT (SO_REUSEADDR; PORT * = ephemeral) or ipc://PATH (a stale file
    // is replaced and the path removed on exit). Accepted sockets inherit `buffers`.
    static RawListener at(const Endpoint &ep, SocketBuffers buffers = {});
    // Where it listens, with the ephemeral port filled in.
    std::string endpoint() const;
    // Waits up to timeout_ms for one peer (exit 3 naming `what` if none comes).
    RawSocket accept(int timeout_ms, const std::string &what = "peer");

private:
    RawSocket sock_;
    std::uint16_t port_ = 0;
    std::string host_;
    std::string path_;
};

// Connects to tcp://HOST:PORT or ipc://PATH, retrying while nobody listens yet, for
// up to timeout_ms; then exit_timeout() naming `what` (e.g. "the receiver's control
// endpoint"). TCP sockets get TCP_NODELAY.
RawSocket connect_to_endpoint(const Endpoint &ep, int timeout_ms, const std::string &what,
                              SocketBuffers buffers = {});

// A unique path under /tmp with the pid in it, registered for removal on exit.
std::string unique_tmp_path(const char *what);

}  // namespace bench
