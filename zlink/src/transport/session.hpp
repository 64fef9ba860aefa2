// session_t: one tcp/ipc endpoint of a socket on an IO thread: the current
// connection (asio socket + ZMTP codec) and the pipe to the socket.
//
// Connect side: owns the endpoint across reconnects (RECONNECT_IVL with
// doubling up to RECONNECT_IVL_MAX).  Bind side: one session per accepted
// connection, gone when the connection is.
//
// Data path, chosen for throughput with few syscalls and no per-message
// locks or allocations:
//   in:  one async read into an in-batch buffer (ZMQ_ASIO_IN_BATCH_SIZE), all
//        complete frames decoded and written to the pipe, ONE flush per
//        batch (one wake-up of the socket at most); a large body is read by
//        the kernel straight into the message (zero copy).
//   out: messages pulled from the pipe into the encoder until the out batch
//        (ZMQ_ASIO_OUT_BATCH_SIZE) is full; small frames copied into one
//        staging run, large bodies referenced in place (scatter/gather);
//        exactly one async write in flight; ZMQ_ASIO_TCP_MAX_TRANSFER caps
//        the bytes handed to one write call.
// The pipe HWM gives back-pressure: reading stops while the socket's pipe is
// full and resumes on write_activated.
#pragma once
#include <asio/generic/stream_protocol.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/io_object.hpp"
#include "core/msg.hpp"
#include "core/options.hpp"
#include "core/pipe.hpp"
#include "transport/transport.hpp"
#include "wire/frame_decoder.hpp"
#include "wire/frame_encoder.hpp"
#include "wire/null_handshake.hpp"

namespace zlink {

class session_t final : public io_object, public pipe_events {
public:
    using socket_type = asio::generic::stream_protocol::socket;

    session_t(io_thread *thread, socket_base_t *owner, const options_t &opts,
              const endpoint_t &ep, bool connect_side, pipe_t *pipe);
    ~session_t() override;

    void start() override;  // connect side: start connecting
    void stop() override;
    // Bind side: take an accepted connection (on this session's thread).
    void accepted(socket_type sock);

    void read_activated(pipe_t *pipe) override;
    void write_activated(pipe_t *pipe) override;
    void pipe_terminated(pipe_t *pipe) override;

private:
    std::shared_ptr<session_t> self() {
        return std::static_pointer_cast<session_t>(shared_from_this());
    }
    // connecting
    void start_connect();
    void try_connect();
    void on_connected(const asio::error_code &ec);
    void schedule_reconnect();
    // connection lifecycle
    void begin();
    void configure_socket();
    void handshake_write();
    void handshake_done();
    void attach_new_pipe();
    void connection_lost(const char *why, int event);
    void close_connection();
    void maybe_finish();
    // reading
    void start_read();
    void on_read(const asio::error_code &ec, size_t n);
    bool process_input();
    bool deliver_frame();
    bool handle_command(const msg_t &frame);
    // writing
    void pump_out();
    bool fill_batch();
    void write_batch();
    void on_written(const asio::error_code &ec, size_t n);
    // heartbeats
    void arm_heartbeat();

    options_t opts_;
    endpoint_t ep_;
    bool connect_side_;
    pipe_t *pipe_;
    bool per_connection_pipe_;  // ROUTER/STREAM: new pipe per connection
    bool ever_connected_ = false;
    int reconnect_ivl_;
    unsigned generation_ = 0;  // stale async completions compare against this

    std::optional<socket_type> sock_;
    bool active_ = false;  // handshake done, data flowing
    bool raw_;
    std::unique_ptr<wire::handshake> hs_;  // the mechanism (NULL today)
    wire::frame_decoder dec_;
    std::unique_ptr<wire::frame_encoder> enc_;
    wire::zmtp_version peer_version_{3, 1};
    std::string peer_id_;
    int peer_type_ = -1;

    std::vector<uint8_t> inbuf_;
    size_t in_begin_ = 0, in_end_ = 0;
    bool reading_ = false;
    bool read_blocked_ = false;  // pipe full: waiting for write_activated
    bool body_in_place_ = false; // current async read targets a message body
    msg_t in_msg_;               // frame being decoded
    bool in_msg_ready_ = false;  // decoded, not yet accepted by the pipe

    bool writing_ = false;
    std::vector<msg_t> in_flight_;  // bodies referenced by the encoder
    msg_t out_pending_;              // read from the pipe, did not fit the batch
    bool out_pending_valid_ = false;
    bool out_midmsg_ = false;        // sent frames of an unfinished message
    bool discard_rest_ = false;      // drop the rest of a message cut by a reconnect
    bool close_after_write_ = false; // STREAM: empty message = close
    std::vector<asio::const_buffer> gather_;
    std::string pong_ctx_;
    bool pong_due_ = false;
    bool ping_due_ = false;

    asio::steady_timer reconnect_timer_;
    asio::steady_timer linger_timer_;
    asio::steady_timer heartbeat_timer_;
    std::chrono::steady_clock::time_point last_recv_;
    int peer_ttl_ms_ = 0;
    bool finished_sent_ = false;
    int failing_event_ = 0;
    int event_value_ = 0;  // value for the next handshake-failure event  // handshake failed: close once our ERROR is sent
};

}  // namespace zlink
