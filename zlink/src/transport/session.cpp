#include "transport/session.hpp"

#include <chrono>
#include <utility>

#include "core/io_thread.hpp"
#include "core/socket_base.hpp"
#include "transport/handshake_factory.hpp"
#include "wire/command.hpp"
#include "zmq.h"

namespace zlink {

session_t::session_t(io_thread *thread, socket_base_t *owner, const options_t &opts,
                     bool connect_side, pipe_t *pipe)
    : io_object(thread, owner), opts_(opts), connect_side_(connect_side), pipe_(pipe),
      per_connection_pipe_(pipe == nullptr), linger_timer_(thread->ioc()) {
    out_pending_.init();
    if (pipe_)
        pipe_->set_sink(this);  // before the socket can use its end
}

std::shared_ptr<session_t> session_t::connecting(io_thread *thread, socket_base_t *owner,
                                                 const options_t &opts, const stream_family &family,
                                                 const std::string &address, pipe_t *pipe) {
    std::shared_ptr<session_t> s(new session_t(thread, owner, opts, true, pipe));
    s->connecter_ = std::make_shared<connecter_t>(thread->ioc(), family, address, opts, *s);
    return s;
}

std::shared_ptr<session_t> session_t::accepted(io_thread *thread, socket_base_t *owner,
                                               const options_t &opts, socket_type sock) {
    std::shared_ptr<session_t> s(new session_t(thread, owner, opts, false, nullptr));
    s->adopted_.emplace(std::move(sock));
    return s;
}

session_t::~session_t() {
    if (engine_)
        engine_->terminate();
    out_pending_.close();
}

// ------------------------------------------------------------------ lifecycle

void session_t::start() {
    if (connecter_)
        return connecter_->attempt();
    if (adopted_) {
        socket_type sock = std::move(*adopted_);
        adopted_.reset();
        start_engine(std::move(sock));
    }
}

void session_t::start_engine(socket_type sock) {
    peer_fd_ = sock.native_handle();
    peer_address_ = peer_address(peer_fd_);
    zap_metadata_.clear();
    std::unique_ptr<wire::handshake> hs;
    if (!opts_.role.raw_socket)
        hs = make_handshake(opts_, !connect_side_);
    engine_ready_ = false;
    engine_ = std::make_shared<engine_t>(std::move(sock), opts_, std::move(hs), *this);
    engine_->start();
}

void session_t::stop() {
    if (requested_linger_ != keep_linger)
        opts_.linger = requested_linger_;  // the socket's ZMQ_LINGER at close
    if (!pipe_ && !socket_closing_) {
        drop_engine();
        return maybe_finish();
    }
    if (pipe_ && pipe_->is_active()) {
        // Disconnect/unbind/term: we end the pipe; queued output is dropped.
        pipe_->terminate();
        return;
    }
    // The socket closed first (pipe draining, or already drained and ended):
    // deliver what it left, within LINGER.
    if (opts_.linger == 0) {
        if (pipe_)
            pipe_->terminate();
        drop_engine();
        return maybe_finish();
    }
    if (opts_.linger > 0) {
        auto self = hold();
        linger_timer_.expires_after(std::chrono::milliseconds(opts_.linger));
        linger_timer_.async_wait([self](const asio::error_code &ec) {
            if (ec)
                return;
            if (self->pipe_)
                self->pipe_->terminate();
            self->drop_engine();
            self->maybe_finish();
        });
    }
    if (!pipe_)
        return close_when_flushed();  // what pipe_terminated does once stopping
    if (engine_)
        engine_->restart_output();
    if (!engine_ready_)
        notice_bare_delimiter();
}

// Nothing reads the pipe while no connection is through its handshake, so a
// pipe holding only the socket's delimiter would never drain and the close
// would wait for a peer forever (libzmq checks for this case the same way in
// session_base_t::process_term). With messages queued, check_read sees them
// first and they still wait for a connection, within LINGER.
void session_t::notice_bare_delimiter() {
    if (pipe_)
        pipe_->check_read();
}

// Let the last batch reach the wire, then close (LINGER's timer, if any, cuts it short).
void session_t::close_when_flushed() {
    if (engine_ && engine_ready_)
        engine_->close_after_flush();
    else
        drop_engine();
    maybe_finish();
}

void session_t::drop_engine() {
    close_zap();
    if (engine_) {
        engine_->terminate();
        engine_.reset();
    }
    engine_ready_ = false;
}

void session_t::maybe_finish() {
    const bool done = !pipe_ && !engine_ && (stopping_ || !connect_side_);
    if (!done || finished_sent_)
        return;
    finished_sent_ = true;
    if (connecter_)
        connecter_->cancel();
    adopted_.reset();
    linger_timer_.cancel();
    finished();
}

// ----------------------------------------------------------------- connecting

void session_t::connected(socket_type sock) {
    auto self = hold();
    owner()->event(ZMQ_EVENT_CONNECTED, static_cast<int>(sock.native_handle()), endpoint);
    start_engine(std::move(sock));
}

void session_t::connect_delayed(int error) {
    owner()->event(ZMQ_EVENT_CONNECT_DELAYED, error, endpoint);
}

// As libzmq: a failed attempt has no event of its own; the retry it schedules
// reports CONNECT_RETRIED.
void session_t::connect_failed(const asio::error_code &) {
    auto self = hold();
    reconnect();
}

void session_t::connect_retrying(int interval_ms) {
    owner()->event(ZMQ_EVENT_CONNECT_RETRIED, interval_ms, endpoint);
}

// Entry points that are not commands or our own handlers hold the session
// while they run: once finished() is posted, the socket may drop its
// reference on its own thread at any moment.
std::shared_ptr<session_t> session_t::hold() {
    return std::static_pointer_cast<session_t>(shared_from_this());
}

void session_t::reconnect() {
    if (stopping_ && !pipe_)
        return maybe_finish();
    if (socket_closing_)
        return;  // stop() follows and finishes
    if (opts_.reconnect.ivl < 0)
        return give_up();  // reconnection disabled
    connecter_->attempt_later();
}

// This endpoint is done: no more connections, the socket loses its pipe.
void session_t::give_up() {
    if (pipe_ && pipe_->is_active())
        pipe_->terminate();
    stopping_ = true;
    maybe_finish();
}

// libzmq 4.3.5 does not reconnect after a handshake that failed on a protocol
// or authentication error (session_base_t::engine_error, protocol_error): the
// peer would refuse again, and a ZAP handler would be asked in a loop.
static bool refused_for_good(const engine_end &why, bool was_ready) {
    return !was_ready && (why.event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
                          why.event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
}

// ------------------------------------------------------------- engine events

void session_t::engine_ready(const peer_info &peer) {
    engine_ready_ = true;
    const bool reconnected = ever_connected_;
    ever_connected_ = true;
    if (connecter_)
        connecter_->reset_backoff();
    peer_id_ = peer.routing_id;
    peer_type_ = peer.socket_type;
    build_metadata(peer);
    if (!opts_.role.raw_socket)
        owner()->event(ZMQ_EVENT_HANDSHAKE_SUCCEEDED, 0, endpoint);
    if (!pipe_) {
        if (!socket_closing_)
            attach_new_pipe();
    } else if (per_connection_pipe_ && !pipe_->is_active())
        ;  // the last connection's pipe is still ending: pipe_terminated attaches ours
    else if (reconnected)  // SUB resends its subscriptions there
        send_to_owner(command{command_kind::hiccup, pipe_->peer()});
    if (opts_.role.raw_socket && opts_.role.raw_notify && pipe_) {
        msg_t hello;  // ZMQ_STREAM_NOTIFY's connect notice, with Peer-Address
        hello.init();
        metadata_.attach(hello);
        pipe_->write(hello);
        pipe_->flush();
    }
}

// What zmq_msg_gets reads on every message of this connection, as libzmq
// composes it: Peer-Address first, then the ZAP handler's properties and User-Id,
// then the peer's READY properties (Socket-Type, Identity, X-*); a name already
// present keeps its first value.
void session_t::build_metadata(const peer_info &peer) {
    metadata_t::dict zap_props;
    wire::metadata_reader r(zap_metadata_);
    wire::property_view p;
    while (r.next(p))
        zap_props.emplace(
            std::string(p.name),
            std::string(reinterpret_cast<const char *>(p.value.data()), p.value.size()));
    if (!peer.user_id.empty())
        zap_props.emplace("User-Id", std::string(peer.user_id));
    metadata_.reset(make_connection_metadata(peer.metadata, peer_address_, peer_fd_, zap_props));
}

void session_t::attach_new_pipe() {
    socket_base_t *s = owner();
    auto pp = pipe_t::create_pair(&s->commands(), thread(), opts_.sndhwm, opts_.rcvhwm,
                                  opts_.conflate_out(), opts_.conflate_in());
    pipe_t::share_direct_send(pp);
    pipe_ = pp.b;
    pipe_->set_sink(this);
    pp.a->peer_routing_id = peer_id_;
    pp.a->peer_socket_type = peer_type_;
    if (connect_side_)
        pp.a->routing_id = opts_.connect_routing_id;
    // First message: the peer's routing id (delivered only to ROUTER-like sockets).
    msg_t id;
    id.init_buffer(peer_id_.data(), peer_id_.size());
    id.set_flags(msg_t::routing_id);
    pipe_->write(id);
    pipe_->flush();
    if (opts_.role.probe_router)
        queue_probe(*pp.a);
    send_to_owner(
        command{command_kind::attach_pipe, pp.a, nullptr, nullptr, connect_side_ ? 1u : 0u});
}

// ZMQ_PROBE_ROUTER: the empty message goes out first on this connection at
// once, as in libzmq, instead of when the socket attaches the pipe (a
// connecting ROUTER does that only inside its next zmq_* call). The socket's
// end is marked so the socket type does not probe again.
void session_t::queue_probe(pipe_t &socket_end) {
    if (out_pending_valid_)
        return;  // not a fresh start: let the socket probe
    out_pending_.init();
    out_pending_valid_ = true;
    socket_end.probed = true;
}

void session_t::engine_stopped(const engine_end &why) {
    auto self = hold();
    const bool was_ready = engine_ready_;
    close_zap();
    engine_.reset();  // the engine object lives on until its handler returns
    engine_ready_ = false;
    metadata_.reset(nullptr);  // messages already received keep theirs
    if (!why.requested)
        return after_disconnect(why, was_ready);
    // Linger flushed everything, or STREAM's empty message closed the connection.
    if (pipe_ && pipe_->is_active())
        pipe_->flush();  // a wake-up the engine's last read left owed
    if (opts_.role.raw_socket && pipe_ && pipe_->is_active())
        pipe_->terminate();
    maybe_finish();
}

void session_t::handshake_refused(int event, int value) { owner()->event(event, value, endpoint); }

void session_t::after_disconnect(const engine_end &why, bool was_ready) {
    // As libzmq 4.3.5 reports it: a connection that dies before the handshake
    // completes gets a HANDSHAKE_FAILED_* event (NO_DETAIL for a plain
    // hang-up), and every accepted/connected connection ends with DISCONNECTED.
    if (!was_ready && !why.failure_reported)
        owner()->event(why.event != 0 ? why.event : ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, why.value,
                       endpoint);
    owner()->event(ZMQ_EVENT_DISCONNECTED, 0, endpoint);
    if (pipe_ && pipe_->is_active()) {
        pipe_->rollback();  // a half-received multipart message must not reach the socket
        if (opts_.role.raw_socket && opts_.role.raw_notify && was_ready) {
            msg_t bye;
            bye.init();
            pipe_->write(bye);
        }
        pipe_->flush();
    }
    keep_message_boundaries();
    if (per_connection_pipe_ || !connect_side_) {
        drop_out_pending();
        discard_rest_ = false;
        if (pipe_ && pipe_->is_active())
            pipe_->terminate();  // pipe_terminated() follows
    }
    if (!connect_side_ || stopping_)
        return maybe_finish();
    if (refused_for_good(why, was_ready))
        return give_up();
    reconnect();
}

// Outbound: what was cut mid-message is dropped; a whole queued message stays
// for the next connection.
void session_t::keep_message_boundaries() {
    if (!out_midmsg_)
        return;
    if (out_pending_valid_) {
        discard_rest_ = out_pending_.has_more();
        drop_out_pending();
    } else
        discard_rest_ = true;
    out_midmsg_ = false;
}

void session_t::drop_out_pending() {
    if (!out_pending_valid_)
        return;
    out_pending_.close();
    out_pending_.init();
    out_pending_valid_ = false;
}

// ------------------------------------------------------------- frames <-> pipe

bool session_t::push_frame(msg_t &frame) {
    if (!pipe_) {  // the socket dropped us: nobody wants these frames
        frame.close();
        frame.init();
        return true;
    }
    metadata_.attach(frame);
    return pipe_->write(frame);
}

void session_t::flush_frames(bool more_coming) {
    if (pipe_)
        pipe_->flush(more_coming ? pipe_t::wake::later : pipe_t::wake::now);
}

const std::shared_ptr<direct_send> &session_t::direct_path() {
    return pipe_ ? pipe_->direct() : engine_host::direct_path();  // none without a pipe
}

bool session_t::pull_frame(msg_t &frame) {
    for (;;) {
        if (out_pending_valid_) {
            frame = out_pending_;
            out_pending_.init();
            out_pending_valid_ = false;
        } else if (!pipe_ || !pipe_->read(frame))
            return false;
        if (discard_rest_) {
            discard_rest_ = frame.has_more();
            frame.close();
            frame.init();
            continue;
        }
        midmsg_before_pull_ = out_midmsg_;
        out_midmsg_ = frame.has_more();
        return true;
    }
}

void session_t::return_frame(msg_t &frame) {
    out_pending_ = frame;
    frame.init();
    out_pending_valid_ = true;
    out_midmsg_ = midmsg_before_pull_;
}

// ZAP (RFC 27): the request goes to whatever socket is bound at
// inproc://zeromq.zap.01 in this context, with our ZAP domain, the peer's address
// and our own routing id, as libzmq sends them. Without a handler the mechanism
// decides (handler_missing).
void session_t::zap_request(const wire::zap_request &request) {
    auto self = hold();
    close_zap();
    if (!engine_)
        return;
    zap_ = zap_client::connect(*owner()->ctx(), thread(), *this);
    if (!zap_) {
        wire::zap_reply missing;
        missing.handler_missing = true;
        return engine_->zap_answer(missing);
    }
    const auto &id = opts_.routing_id;
    zap_->send(wire::zap_request_frames(request, opts_.security.zap_domain, engine_->peer_address(),
                                        {reinterpret_cast<const uint8_t *>(id.data()), id.size()}));
}

void session_t::zap_replied(const wire::zap_reply &reply) {
    auto self = hold();
    close_zap();
    zap_metadata_ = reply.metadata;
    if (engine_)
        engine_->zap_answer(reply);
}

void session_t::zap_failed(wire::wire_error error) {
    auto self = hold();
    close_zap();
    if (engine_)
        engine_->zap_failed(error);
}

void session_t::close_zap() {
    if (zap_)
        zap_->close();  // frees itself once its pipe is done
    zap_ = nullptr;
}

// ---------------------------------------------------------------- pipe events

void session_t::read_activated(pipe_t *) {
    auto self = hold();
    if (engine_)
        engine_->restart_output();
}

void session_t::write_activated(pipe_t *) {
    auto self = hold();
    if (engine_)
        engine_->restart_input();
}

void session_t::pipe_terminated(pipe_t *pipe) {
    auto self = hold();
    if (pipe != pipe_)
        return;
    pipe_ = nullptr;  // and its direct path: the engine lets go at its next turn
    drop_out_pending();
    // STREAM ends a connection by ending its pipe (an empty message). As in
    // libzmq, a raw endpoint is then over: no new pipe, no reconnect.
    if (opts_.role.raw_socket)
        stopping_ = true;
    if (stopping_)
        return close_when_flushed();
    if (pipe->peer_owner_closing()) {
        // zmq_close ended the pipe and the socket's stop has not arrived yet:
        // not a refusal (no reconnect, no new pipe); stop() finishes.
        socket_closing_ = true;
        return;
    }
    if (!connect_side_) {
        // Refused or dropped by the socket: this connection is over.
        drop_engine();
        return maybe_finish();
    }
    if (per_connection_pipe_ && engine_ready_) {
        // A new connection came up while the socket was still to acknowledge the
        // last one's pipe (it does so when it next reads): give it its pipe now,
        // or it could never deliver (libzmq's test_immediate_3).
        attach_new_pipe();
        engine_->restart_input();
        return;
    }
    if (!per_connection_pipe_) {
        // The socket dropped our long-lived pipe (e.g. PAIR refusing a second
        // peer): reconnect later with a fresh pipe per connection.
        per_connection_pipe_ = true;
        if (engine_) {
            drop_engine();
            reconnect();
        }
    }
}

}  // namespace zlink
