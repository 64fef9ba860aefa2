// ZeroMQ sockets behind the End interface, plus the socket set-up every pattern
// shares (options, endpoints). Only the zmq.h API is used, so one source serves
// every library.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <zmq.h>

#include "end.hpp"
#include "options.hpp"

namespace bench {

// Creates a socket with the run's settings applied: linger, SNDHWM/RCVHWM,
// SNDTIMEO/RCVTIMEO = --timeout-ms, SNDBUF/RCVBUF if given. An option the library
// refuses ends the run (never silently ignored).
void* make_socket(void* ctx, int type, const Options& o);
void set_int_option(void* s, int option, int value, const char* name);
void set_bytes_option(void* s, int option, std::string_view value, const char* name);

// Binds to a fresh endpoint of the transport and returns the address to connect to:
// tcp://127.0.0.1:* (port read back through ZMQ_LAST_ENDPOINT), an ipc path under
// /tmp with the pid in it (removed on exit), or a unique inproc name.
std::string bind_fresh(void* s, Transport t);
void connect_to(void* s, const std::string& endpoint);
void close_socket(void*& s);

[[noreturn]] void exit_zmq_error(const char* what);

struct ZmqEndSpec {
    void* send_socket = nullptr;
    void* recv_socket = nullptr;
    bool send_routing_id = false;  // sends start with a routing-id frame (ROUTER)
    std::string peer_id;           // ... addressed to this peer (empty: the last sender)
    bool recv_routing_id = false;  // received messages start with a routing-id frame
    bool poll = false;             // receive through zmq_poll, then non-blocking drain
    int timeout_ms = 10000;
    std::size_t sync_len = 0;      // length of handshake messages (never the data size)
};

class ZmqEnd final : public End {
public:
    explicit ZmqEnd(ZmqEndSpec spec);
    ~ZmqEnd() override;
    void send(const std::uint8_t* data, std::size_t n) override;
    View recv() override;
    void send_back() override;

    // Handshake helpers (non-blocking). try_send_sync returns false when the
    // message could not be queued yet (ROUTER peer unknown, would block).
    bool try_send_sync();
    bool try_recv_sync(int wait_ms);

private:
    void recv_frame(zmq_msg_t* m);
    void check_no_more_frames();
    ZmqEndSpec spec_;
    zmq_msg_t id_;
    zmq_msg_t msg_;
    std::string learned_id_;
    bool data_seen_ = false;
};

// Alternates handshake messages a->b then b->a until each side got one, within
// timeout_ms. Extra handshake messages left in a queue are skipped by recv().
void establish_zmq(ZmqEnd& a, ZmqEnd& b, int timeout_ms);

// Handshake messages must be told apart from data: they are empty, unless the data
// is empty, then one byte.
inline std::size_t sync_len_for(std::size_t size) { return size == 0 ? 1 : 0; }

// A channel of two ZmqEnds over `sockets` (closed by Channel::close).
Channel make_zmq_channel(ZmqEndSpec a, ZmqEndSpec b, std::vector<void*> sockets, std::string topology,
                         const Options& o);

}  // namespace bench
