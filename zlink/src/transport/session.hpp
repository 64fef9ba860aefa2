// session_t: one tcp/ipc endpoint of a socket on an IO thread: frames <->
// pipes.  It owns the pipe to the socket, linger, monitor events, and the ZAP
// exchange (transport/zap_client.hpp); the bytes are its engine's business
// (transport/engine.hpp).
//
// Connect side: made by zmq_connect; owns a connecter and outlives its
// engines - a reconnect is a new engine on the same session (and, for
// non-routing sockets, the same pipe, so messages queue while disconnected).
// Bind side: made by the listener for one accepted connection; done when
// that connection is.
//
// Across reconnects the session keeps message boundaries whole: a message cut
// by a lost connection is dropped (its remaining frames too); a whole message
// not yet sent goes out on the next connection.
//
// Hook for the security piece: zap_request() is where a ZAP request goes to
// inproc://zeromq.zap.01; today it answers at once with the stand-in reply
// libzmq uses when no handler is bound ("200").
#pragma once
#include <asio/generic/stream_protocol.hpp>
#include <asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <string>

#include "core/io_object.hpp"
#include "core/msg.hpp"
#include "core/options.hpp"
#include "core/pipe.hpp"
#include "transport/connecter.hpp"
#include "transport/connection_metadata.hpp"
#include "transport/engine.hpp"
#include "transport/stream_family.hpp"
#include "transport/zap_client.hpp"

namespace zlink {

class session_t final : public io_object,
                        public pipe_events,
                        public engine_host,
                        public connecter_host,
                        public zap_listener {
public:
    using socket_type = asio::generic::stream_protocol::socket;

    // Connect side.  `pipe` (may be null) is the session's end of a pipe the
    // socket already holds; when null a new pipe is attached per connection.
    static std::shared_ptr<session_t> connecting(io_thread *thread, socket_base_t *owner,
                                                 const options_t &opts, const stream_family &family,
                                                 const std::string &address, pipe_t *pipe);
    // Bind side: `sock` was accepted, tuned and bound to thread's io_context.
    static std::shared_ptr<session_t> accepted(io_thread *thread, socket_base_t *owner,
                                               const options_t &opts, socket_type sock);
    ~session_t() override;

    void start() override;
    void stop() override;

    // pipe_events
    void read_activated(pipe_t *pipe) override;
    void write_activated(pipe_t *pipe) override;
    void pipe_terminated(pipe_t *pipe) override;
    // engine_host
    void engine_ready(const peer_info &peer) override;
    bool push_frame(msg_t &frame) override;
    void flush_frames(bool more_coming) override;
    bool pull_frame(msg_t &frame) override;
    void return_frame(msg_t &frame) override;
    void zap_request(const wire::zap_request &request) override;
    void handshake_refused(int event, int value) override;
    // zap_listener
    void zap_replied(const wire::zap_reply &reply) override;
    void zap_failed(wire::wire_error error) override;
    void engine_stopped(const engine_end &why) override;
    const std::shared_ptr<direct_send> &direct_path() override;
    // connecter_host
    void connected(socket_type sock) override;
    void connect_delayed(int error) override;
    void connect_failed(const asio::error_code &ec) override;
    void connect_retrying(int interval_ms) override;

private:
    session_t(io_thread *thread, socket_base_t *owner, const options_t &opts, bool connect_side,
              pipe_t *pipe);
    std::shared_ptr<session_t> hold();
    void start_engine(socket_type sock);
    void attach_new_pipe();
    void after_disconnect(const engine_end &why, bool was_ready);
    void keep_message_boundaries();
    void reconnect();
    void give_up();
    void drop_engine();
    void drop_out_pending();
    void notice_bare_delimiter();
    void close_when_flushed();
    void queue_probe(pipe_t &socket_end);
    void maybe_finish();
    void close_zap();
    void build_metadata(const peer_info &peer);

    options_t opts_;
    const bool connect_side_;
    pipe_t *pipe_;
    bool per_connection_pipe_;  // ROUTER/STREAM: a new pipe per connection
    bool ever_connected_ = false;
    std::shared_ptr<connecter_t> connecter_;  // connect side only
    std::optional<socket_type> adopted_;      // bind side, until start()
    std::shared_ptr<engine_t> engine_;        // the current connection
    bool engine_ready_ = false;               // its handshake is done
    zap_client *zap_ = nullptr;               // the current ZAP exchange, if any
    std::vector<uint8_t> zap_metadata_;       // the handler's metadata for this connection
    std::string peer_id_;
    int peer_type_ = -1;
    // What zmq_msg_gets reads on received messages (connection_metadata.hpp).
    std::string peer_address_;
    int peer_fd_ = -1;
    metadata_feed metadata_;

    // Output across connections (see the header comment).
    msg_t out_pending_;  // given back by the engine; sent first
    bool out_pending_valid_ = false;
    bool out_midmsg_ = false;          // frames of an unfinished message went out
    bool midmsg_before_pull_ = false;  // out_midmsg_ before the last pull
    bool discard_rest_ = false;        // drop the rest of a message cut by a reconnect

    asio::steady_timer linger_timer_;
    bool finished_sent_ = false;
    // The socket's zmq_close ended our pipe and its stop is on its way (the IO
    // thread can run the pipe's end before the stop arrives): no reconnect, no
    // new pipe; stop() then finishes as if it had come first.
    bool socket_closing_ = false;
};

}  // namespace zlink
