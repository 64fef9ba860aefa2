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
#include "send_ring.hpp"

namespace bench {

// Creates a socket with the run's settings applied: linger, SNDHWM/RCVHWM,
// SNDTIMEO/RCVTIMEO = --timeout-ms, SNDBUF/RCVBUF if given. An option the library
// refuses ends the run (never silently ignored); so does a socket type it lacks
// (exit 1, "zmq_socket(ZMQ_REQ): ...").
void *make_socket(void *ctx, int type, const Options &o);
const char *socket_type_name(int type);
void set_int_option(void *s, int option, int value, const char *name);
void set_bytes_option(void *s, int option, std::string_view value, const char *name);

// A fresh endpoint of the transport for the receiver to bind when none was asked
// for: tcp://127.0.0.1:* (ephemeral port), an ipc path under /tmp with the pid in it
// (removed on exit), or a unique inproc name.
std::string fresh_endpoint(Transport t);
// Where a pattern's second bound socket goes, beside the first: the same tcp host
// on an ephemeral port, or a fresh ipc path / inproc name.
std::string second_endpoint(const std::string &first, Transport t);
// Binds and returns the endpoint as bound (a tcp wildcard port read back through
// ZMQ_LAST_ENDPOINT); an ipc path is removed on exit.
std::string bind_endpoint(void *s, const std::string &endpoint);
void connect_to(void *s, const std::string &endpoint);
void close_socket(void *&s);

[[noreturn]] void exit_zmq_error(const char *what);

struct ZmqEndSpec {
    void *send_socket = nullptr;
    void *recv_socket = nullptr;
    bool send_routing_id = false;  // sends start with a routing-id frame (ROUTER)
    std::string peer_id;           // ... addressed to this peer (empty: the last sender)
    bool recv_routing_id = false;  // received messages start with a routing-id frame
    bool poll = false;             // receive through zmq_poll, then non-blocking drain
    bool lockstep = false;         // REQ/REP: one handshake message per direction
    int timeout_ms = 10000;
    std::size_t sync_len = 0;  // length of handshake messages (never the data size)
    int send_buffers = 0;      // --send-buffers: 0 = zmq_send, N = zero copy from a ring of N
    std::size_t size = 0;      // payload size (the ring's buffers)
};

class ZmqEnd final : public End {
public:
    explicit ZmqEnd(ZmqEndSpec spec);
    ~ZmqEnd() override;
    void send(const std::uint8_t *data, std::size_t n) override;
    void stage_payload(PayloadMaker &maker, std::uint64_t seq, bool corrupted) override;
    void send_staged() override;
    View recv() override;
    std::optional<View> recv_within(int wait_ms) override;
    void send_back() override;
    void establish(Link &link, bool sending_side, int timeout_ms) override;

private:
    // Handshake helpers (non-blocking). try_send_sync returns false when the
    // message could not be queued yet (ROUTER peer unknown, would block).
    bool try_send_sync();
    bool try_recv_sync(int wait_ms);
    void send_sync_until_heard(Link &link, int timeout_ms, const char *direction);
    void recv_sync_and_tell(Link &link, int timeout_ms, const char *direction);
    void recv_frame(zmq_msg_t *m);
    void send_routing_id_frame();
    void check_no_more_frames();
    ZmqEndSpec spec_;
    zmq_msg_t id_;
    zmq_msg_t msg_;
    std::string learned_id_;
    bool data_seen_ = false;
    SendRing *ring_ = nullptr;  // zero copy (--send-buffers), lives until exit; null: zmq_send
    SendRing::Slot *staged_slot_ = nullptr;
};

// Handshake messages must be told apart from data: they are empty, unless the data
// is empty, then one byte.
inline std::size_t sync_len_for(std::size_t size) { return size == 0 ? 1 : 0; }

// One side of ZeroMQ sockets: the End over them, the sockets to close, and what
// the side bound (receiving side).
Side make_zmq_side(ZmqEndSpec spec, std::vector<void *> sockets, std::vector<std::string> bound,
                   const Options &o);

}  // namespace bench
