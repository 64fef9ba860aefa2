#include "transport/session.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <asio/connect.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>
#include <cstring>
#include <new>
#include <system_error>

#include "core/io_thread.hpp"
#include "core/socket_base.hpp"
#include "transport/address.hpp"
#include "wire/command.hpp"
#include "wire/error.hpp"
#include "zmq.h"

namespace zlink {

namespace {
using steady = std::chrono::steady_clock;
// Bodies at least this large that are still missing after the buffered bytes
// are read by the kernel directly into the message.
constexpr size_t in_place_threshold = 1024;

uint64_t max_body(const options_t &o) {
    return o.maxmsgsize >= 0 ? static_cast<uint64_t>(o.maxmsgsize)
                             : wire::frame_decoder::unlimited;
}
}  // namespace

session_t::session_t(io_thread *thread, socket_base_t *owner, const options_t &opts,
                     const endpoint_t &ep, bool connect_side, pipe_t *pipe)
    : io_object(thread, owner),
      opts_(opts),
      ep_(ep),
      connect_side_(connect_side),
      pipe_(pipe),
      per_connection_pipe_(pipe == nullptr),
      reconnect_ivl_(opts.reconnect_ivl),
      raw_(opts.raw_socket),
      dec_(max_body(opts)),
      reconnect_timer_(thread->ioc()),
      linger_timer_(thread->ioc()),
      heartbeat_timer_(thread->ioc()) {
    in_msg_.init();
    out_pending_.init();
    inbuf_.resize(static_cast<size_t>(std::max(opts.in_batch, 256)));
    if (pipe_)
        pipe_->set_sink(this);  // before the socket can use its end
}

session_t::~session_t() {
    in_msg_.close();
    out_pending_.close();
    for (auto &m : in_flight_)
        m.close();
}

// ---------------------------------------------------------------- connecting

void session_t::start() {
    if (connect_side_)
        start_connect();
}

// A connect attempt that throws (Asio creating its resolver's descriptors at
// the fd limit, an allocation failing) counts as a failed attempt: reported
// and retried after the reconnect interval, instead of being lost.
void session_t::start_connect() {
    try {
        try_connect();
    } catch (const std::system_error &e) {
        on_connected(e.code());
    } catch (const std::bad_alloc &) {
        on_connected(asio::error::no_memory);
    }
}

void session_t::try_connect() {
    if (stopping_ && !pipe_)
        return maybe_finish();
    auto self_ = self();
    const unsigned gen = ++generation_;
    sock_.emplace(thread()->ioc());
    if (ep_.protocol == "ipc") {
        auto target = ipc_endpoint(ep_.address);
        sock_->async_connect(asio::generic::stream_protocol::endpoint(target),
                             [self_, gen](const asio::error_code &ec) {
                                 if (gen == self_->generation_)
                                     self_->on_connected(ec);
                             });
        return;
    }
    std::string host, port;
    if (split_host_port(ep_.address, host, port) != 0) {
        sock_.reset();
        return schedule_reconnect();
    }
    auto resolver = std::make_shared<asio::ip::tcp::resolver>(thread()->ioc());
    resolver->async_resolve(
        host, port,
        [self_, gen, resolver](const asio::error_code &ec,
                               asio::ip::tcp::resolver::results_type results) {
            if (gen != self_->generation_)
                return;
            if (ec)
                return self_->on_connected(ec);
            std::optional<asio::ip::tcp::endpoint> pick;
            for (const auto &r : results) {
                if (!self_->opts_.ipv6 && !r.endpoint().address().is_v4())
                    continue;
                pick = r.endpoint();
                break;
            }
            if (!pick)
                return self_->on_connected(asio::error::host_not_found);
            self_->sock_->async_connect(asio::generic::stream_protocol::endpoint(*pick),
                                        [self_, gen](const asio::error_code &ec2) {
                                            if (gen == self_->generation_)
                                                self_->on_connected(ec2);
                                        });
        });
}

void session_t::on_connected(const asio::error_code &ec) {
    if (ec) {
        asio::error_code ignore;
        if (sock_)
            sock_->close(ignore);
        sock_.reset();
        owner()->event(ZMQ_EVENT_CONNECT_DELAYED, ec.value(), endpoint);
        return schedule_reconnect();
    }
    owner()->event(ZMQ_EVENT_CONNECTED, static_cast<int>(sock_->native_handle()), endpoint);
    begin();
}

void session_t::schedule_reconnect() {
    if (stopping_ && !pipe_)
        return maybe_finish();
    if (opts_.reconnect_ivl < 0) {
        // Reconnection disabled: this endpoint is done.
        if (pipe_ && pipe_->is_active())
            pipe_->terminate();
        stopping_ = true;
        return maybe_finish();
    }
    int ivl = std::max(reconnect_ivl_, 1);
    if (opts_.reconnect_ivl_max > opts_.reconnect_ivl)
        reconnect_ivl_ = std::min(reconnect_ivl_ * 2, opts_.reconnect_ivl_max);
    auto self_ = self();
    reconnect_timer_.expires_after(std::chrono::milliseconds(ivl));
    reconnect_timer_.async_wait([self_](const asio::error_code &ec) {
        if (ec)
            return;
        self_->owner()->event(ZMQ_EVENT_CONNECT_RETRIED, 0, self_->endpoint);
        self_->start_connect();
    });
}

void session_t::accepted(socket_type sock) {
    sock_.emplace(std::move(sock));
    if (stopping_) {
        close_connection();
        return maybe_finish();
    }
    ++generation_;
    begin();
}

// ------------------------------------------------------- connection lifecycle

void session_t::configure_socket() {
    asio::error_code ec;
    int fd = sock_->native_handle();
    if (ep_.protocol == "tcp") {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (opts_.tcp_keepalive == 1) {
            ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
            if (opts_.tcp_keepalive_cnt > 0)
                ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &opts_.tcp_keepalive_cnt, sizeof(int));
            if (opts_.tcp_keepalive_idle > 0)
                ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &opts_.tcp_keepalive_idle, sizeof(int));
            if (opts_.tcp_keepalive_intvl > 0)
                ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &opts_.tcp_keepalive_intvl,
                             sizeof(int));
        } else if (opts_.tcp_keepalive == 0) {
            int zero = 0;
            ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &zero, sizeof zero);
        }
    }
    if (opts_.sndbuf >= 0)
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &opts_.sndbuf, sizeof(int));
    if (opts_.rcvbuf >= 0)
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &opts_.rcvbuf, sizeof(int));
    sock_->non_blocking(true, ec);
}

void session_t::begin() {
    configure_socket();
    active_ = false;
    last_recv_ = steady::now();
    dec_ = wire::frame_decoder(max_body(opts_));
    enc_ = std::make_unique<wire::frame_encoder>(static_cast<size_t>(std::max(opts_.out_batch, 256)));
    in_begin_ = in_end_ = 0;
    in_msg_ready_ = false;
    body_in_place_ = false;
    read_blocked_ = false;
    close_after_write_ = false;
    peer_ttl_ms_ = 0;
    failing_event_ = 0;
    if (raw_)
        return handshake_done();
    wire::handshake_options ho;
    ho.self = static_cast<wire::socket_type>(opts_.type);
    ho.routing_id = {reinterpret_cast<const uint8_t *>(opts_.routing_id.data()),
                     opts_.routing_id.size()};
    hs_ = std::make_unique<wire::null_handshake>(ho);
    if (opts_.handshake_ivl > 0) {
        // A peer that never completes the handshake must not hold a session.
        auto self_ = self();
        const unsigned gen = generation_;
        heartbeat_timer_.expires_after(std::chrono::milliseconds(opts_.handshake_ivl));
        heartbeat_timer_.async_wait([self_, gen](const asio::error_code &ec) {
            if (!ec && gen == self_->generation_ && !self_->active_)
                self_->connection_lost("handshake timeout", ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
        });
    }
    pump_out();
    start_read();
}

void session_t::handshake_done() {
    active_ = true;
    const bool reconnected = ever_connected_;
    ever_connected_ = true;
    reconnect_ivl_ = opts_.reconnect_ivl;
    if (hs_) {
        peer_version_ = hs_->peer_version();
        peer_type_ = static_cast<int>(hs_->peer_socket_type());
        auto id = hs_->peer_routing_id();
        peer_id_.assign(reinterpret_cast<const char *>(id.data()), id.size());
        owner()->event(ZMQ_EVENT_HANDSHAKE_SUCCEEDED, 0, endpoint);
    }
    if (!pipe_)
        attach_new_pipe();
    else if (reconnected) {
        // Tell the socket (SUB resends subscriptions) about its end of our pipe.
        socket_base_t *s = owner();
        pipe_t *theirs = pipe_->peer();
        s->commands().post([s, theirs] { s->hiccuped(theirs); });
    }
    if (raw_ && opts_.raw_notify && pipe_) {
        msg_t hello;
        hello.init();
        pipe_->write(hello);
        pipe_->flush();
    }
    arm_heartbeat();
    if (!raw_)
        process_input();
    if (pipe_)
        pipe_->flush();
    pump_out();
    start_read();
}

void session_t::attach_new_pipe() {
    socket_base_t *s = owner();
    auto pp = pipe_t::create_pair(&s->commands(), thread(), opts_.sndhwm, opts_.rcvhwm);
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
    pipe_t *a = pp.a;
    const bool local = connect_side_;
    s->commands().post([s, a, local] { s->attach_pipe(a, local); });
}

void session_t::close_connection() {
    ++generation_;  // every pending completion of this connection is now stale
    if (sock_) {
        asio::error_code ignore;
        sock_->shutdown(asio::socket_base::shutdown_both, ignore);
        sock_->close(ignore);
        sock_.reset();
    }
    heartbeat_timer_.cancel();
    active_ = false;
    reading_ = writing_ = false;
    body_in_place_ = false;
    hs_.reset();
    for (auto &m : in_flight_)
        m.close();
    in_flight_.clear();
    if (enc_)
        enc_ = std::make_unique<wire::frame_encoder>(static_cast<size_t>(std::max(opts_.out_batch, 256)));
}

void session_t::connection_lost(const char *why, int event) {
    if (!sock_)
        return;
    (void)why;
    const bool was_active = active_;
    close_connection();
    // As libzmq 4.3.5 reports it: a connection that dies before the
    // handshake completes gets a HANDSHAKE_FAILED_* event (NO_DETAIL for a
    // plain hang-up), and every accepted/connected connection ends with
    // DISCONNECTED.
    if (!was_active)
        owner()->event(event != 0 ? event : ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                       event_value_, endpoint);
    owner()->event(ZMQ_EVENT_DISCONNECTED, 0, endpoint);
    event_value_ = 0;
    // Inbound: a half-received multipart message must not reach the socket.
    in_msg_.close();
    in_msg_.init();
    in_msg_ready_ = false;
    read_blocked_ = false;
    if (pipe_ && pipe_->is_active()) {
        pipe_->rollback();
        if (raw_ && opts_.raw_notify && was_active) {
            msg_t bye;
            bye.init();
            pipe_->write(bye);
        }
        pipe_->flush();
    }
    // Outbound: what was cut mid-message is dropped; a whole queued message
    // stays for the next connection.
    if (out_midmsg_) {
        if (out_pending_valid_) {
            discard_rest_ = out_pending_.has_more();
            out_pending_.close();
            out_pending_.init();
            out_pending_valid_ = false;
        } else
            discard_rest_ = true;
        out_midmsg_ = false;
    }
    if (per_connection_pipe_ || !connect_side_) {
        if (out_pending_valid_) {
            out_pending_.close();
            out_pending_.init();
            out_pending_valid_ = false;
        }
        discard_rest_ = false;
        if (pipe_ && pipe_->is_active())
            pipe_->terminate();  // pipe_terminated() follows
    }
    if (!connect_side_ || stopping_)
        return maybe_finish();
    schedule_reconnect();
}

void session_t::maybe_finish() {
    const bool done = !pipe_ && !sock_ && (stopping_ || !connect_side_);
    if (!done || finished_sent_)
        return;
    finished_sent_ = true;
    reconnect_timer_.cancel();
    linger_timer_.cancel();
    heartbeat_timer_.cancel();
    finished();
}

void session_t::stop() {
    reconnect_timer_.cancel();
    if (!pipe_) {
        close_connection();
        return maybe_finish();
    }
    if (pipe_->is_active()) {
        // Disconnect/unbind/term: we end the pipe; queued output is dropped.
        pipe_->terminate();
        return;
    }
    // The socket closed first (pipe draining): deliver what it left, within LINGER.
    if (opts_.linger == 0) {
        pipe_->terminate();
        close_connection();
        return;
    }
    if (opts_.linger > 0) {
        auto self_ = self();
        linger_timer_.expires_after(std::chrono::milliseconds(opts_.linger));
        linger_timer_.async_wait([self_](const asio::error_code &ec) {
            if (ec)
                return;
            if (self_->pipe_)
                self_->pipe_->terminate();
            self_->close_connection();
            self_->maybe_finish();
        });
    }
    pump_out();
}

void session_t::pipe_terminated(pipe_t *pipe) {
    if (pipe != pipe_)
        return;
    pipe_ = nullptr;
    if (out_pending_valid_) {
        out_pending_.close();
        out_pending_.init();
        out_pending_valid_ = false;
    }
    if (stopping_) {
        // Let the last batch reach the wire, then close.
        if (sock_ && active_ && (writing_ || (enc_ && !enc_->empty()) || !in_flight_.empty()))
            close_after_write_ = true;
        else
            close_connection();
        return maybe_finish();
    }
    if (!connect_side_) {
        // Refused or dropped by the socket: this connection is over.
        close_connection();
        return maybe_finish();
    }
    if (!per_connection_pipe_) {
        // The socket dropped our long-lived pipe (e.g. PAIR refusing a second
        // peer): reconnect later with a fresh pipe per connection.
        per_connection_pipe_ = true;
        if (sock_) {
            close_connection();
            schedule_reconnect();
        }
    }
}

void session_t::read_activated(pipe_t *) { pump_out(); }

void session_t::write_activated(pipe_t *) {
    if (!read_blocked_)
        return;
    read_blocked_ = false;
    process_input();
    if (pipe_)
        pipe_->flush();
    start_read();
}

// ------------------------------------------------------------------- reading

void session_t::start_read() {
    if (reading_ || read_blocked_ || !sock_)
        return;
    if (in_begin_ == in_end_)
        in_begin_ = in_end_ = 0;
    auto self_ = self();
    const unsigned gen = generation_;
    auto handler = [self_, gen](const asio::error_code &ec, size_t n) {
        if (gen == self_->generation_)
            self_->on_read(ec, n);
    };
    auto rem = dec_.body_remaining();
    if (active_ && !raw_ && in_begin_ == in_end_ && rem.size() >= in_place_threshold) {
        // Zero copy: the kernel writes straight into the message body.
        body_in_place_ = true;
        reading_ = true;
        sock_->async_read_some(asio::buffer(rem.data(), rem.size()), handler);
        return;
    }
    if (in_end_ == inbuf_.size()) {
        std::memmove(inbuf_.data(), inbuf_.data() + in_begin_, in_end_ - in_begin_);
        in_end_ -= in_begin_;
        in_begin_ = 0;
    }
    reading_ = true;
    sock_->async_read_some(asio::buffer(inbuf_.data() + in_end_, inbuf_.size() - in_end_),
                           handler);
}

void session_t::on_read(const asio::error_code &ec, size_t n) {
    reading_ = false;
    if (ec)
        return connection_lost(ec.message().c_str(), 0);
    last_recv_ = steady::now();
    if (body_in_place_) {
        body_in_place_ = false;
        if (dec_.body_filled(n) == wire::frame_decoder::step::frame)
            in_msg_ready_ = true;
    } else
        in_end_ += n;

    if (raw_) {
        // STREAM: every read is one message of raw bytes.
        in_msg_.close();
        in_msg_.init_buffer(inbuf_.data() + in_begin_, in_end_ - in_begin_);
        in_begin_ = in_end_ = 0;
        in_msg_ready_ = true;
        if (pipe_ && !pipe_->write(in_msg_)) {
            read_blocked_ = true;
            pipe_->flush();
            return;
        }
        in_msg_ready_ = false;
        if (pipe_)
            pipe_->flush();
        return start_read();
    }

    if (!active_) {
        size_t used = hs_->feed({inbuf_.data() + in_begin_, in_end_ - in_begin_});
        in_begin_ += used;
        if (hs_->failed()) {
            const int ev = ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;
            if (hs_->error() == wire::wire_error::mechanism_mismatch)
                event_value_ = ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH;
            if (!hs_->outgoing().empty()) {
                // RFC 37: send our ERROR command before closing.
                failing_event_ = ev;
                return pump_out();
            }
            return connection_lost(wire::to_string(hs_->error()), ev);
        }
        pump_out();  // our READY, once the greeting was accepted
        if (hs_->done())
            return handshake_done();
        return start_read();
    }
    process_input();
    if (pipe_)
        pipe_->flush();  // one wake-up for the whole batch (also when blocked)
    if (sock_)
        start_read();
}

// Decodes buffered bytes into frames and hands them to the pipe.  Returns
// false when it had to stop (pipe full, or the connection failed).
bool session_t::process_input() {
    using step = wire::frame_decoder::step;
    for (;;) {
        if (in_msg_ready_ && !deliver_frame())
            return false;
        if (!sock_)
            return false;
        size_t used = 0;
        step s = dec_.decode({inbuf_.data() + in_begin_, in_end_ - in_begin_}, used);
        in_begin_ += used;
        switch (s) {
        case step::header: {
            const size_t size = static_cast<size_t>(dec_.header().size);
            in_msg_.close();
            if (in_msg_.init_size(size) != 0) {
                connection_lost("out of memory", ZMQ_EVENT_CLOSED);
                return false;
            }
            dec_.set_body({static_cast<uint8_t *>(in_msg_.data()), size});
            break;
        }
        case step::frame: in_msg_ready_ = true; break;
        case step::error:
            connection_lost(wire::to_string(dec_.error()), ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
            return false;
        case step::need_more: return true;
        }
    }
}

bool session_t::deliver_frame() {
    const auto &h = dec_.header();
    if (h.command()) {
        wire::command_view cv;
        auto body = std::span<const uint8_t>(static_cast<const uint8_t *>(in_msg_.data()),
                                             in_msg_.size());
        if (wire::parse_command(body, cv) != wire::wire_error::none) {
            connection_lost("malformed command", ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
            return false;
        }
        if (cv.kind == wire::command_kind::subscribe || cv.kind == wire::command_kind::cancel) {
            // To the socket in message form: \x01/\x00 + topic.
            msg_t m;
            m.init_size(cv.data.size() + 1);
            auto *p = static_cast<uint8_t *>(m.data());
            p[0] = cv.kind == wire::command_kind::subscribe ? 1 : 0;
            if (!cv.data.empty())
                std::memcpy(p + 1, cv.data.data(), cv.data.size());
            in_msg_.close();
            in_msg_.init();
            in_msg_.move(m);
        } else {
            if (cv.kind == wire::command_kind::ping) {
                uint16_t ttl = 0;
                std::span<const uint8_t> ctx;
                if (wire::parse_ping_data(cv.data, ttl, ctx) == wire::wire_error::none) {
                    pong_ctx_.assign(reinterpret_cast<const char *>(ctx.data()), ctx.size());
                    pong_due_ = true;
                    if (ttl > 0 && peer_ttl_ms_ == 0) {
                        peer_ttl_ms_ = ttl * 100;
                        arm_heartbeat();
                    }
                    pump_out();
                }
            } else if (cv.kind == wire::command_kind::error) {
                connection_lost("peer sent ERROR", ZMQ_EVENT_DISCONNECTED);
                return false;
            }
            in_msg_.close();
            in_msg_.init();
            in_msg_ready_ = false;
            return true;
        }
    } else if (h.more())
        in_msg_.set_flags(msg_t::more);
    if (!pipe_) {
        in_msg_.close();
        in_msg_.init();
        in_msg_ready_ = false;
        return true;
    }
    if (!pipe_->write(in_msg_)) {
        read_blocked_ = true;  // resume on write_activated
        return false;
    }
    in_msg_ready_ = false;
    return true;
}

// ------------------------------------------------------------------- writing

void session_t::pump_out() {
    if (writing_ || !sock_)
        return;
    if (hs_ && !hs_->outgoing().empty()) {
        auto out = hs_->outgoing();
        writing_ = true;
        auto self_ = self();
        const unsigned gen = generation_;
        asio::async_write(*sock_, asio::buffer(out.data(), out.size()),
                          [self_, gen](const asio::error_code &ec, size_t n) {
                              if (gen != self_->generation_)
                                  return;
                              self_->writing_ = false;
                              if (ec)
                                  return self_->connection_lost(ec.message().c_str(),
                                                                ZMQ_EVENT_CLOSED);
                              self_->hs_->consume_outgoing(n);
                              if (self_->failing_event_ && self_->hs_->outgoing().empty())
                                  return self_->connection_lost("handshake failed",
                                                                self_->failing_event_);
                              self_->pump_out();
                          });
        return;
    }
    if (!active_)
        return;
    if (fill_batch())
        write_batch();
    else if (close_after_write_) {
        close_connection();
        maybe_finish();
    }
}

bool session_t::fill_batch() {
    const bool sub_side = opts_.type == ZMQ_SUB || opts_.type == ZMQ_XSUB;
    if (raw_) {
        gather_.clear();
        size_t bytes = 0;
        msg_t m;
        while (!close_after_write_ && bytes < static_cast<size_t>(opts_.out_batch) && pipe_ &&
               pipe_->read(m)) {
            if (m.size() == 0) {  // STREAM: empty message closes the connection
                m.close();
                close_after_write_ = true;
                break;
            }
            bytes += m.size();
            in_flight_.push_back(m);
            m.init();
        }
        for (auto &f : in_flight_)
            gather_.emplace_back(f.data(), f.size());
        return !in_flight_.empty();
    }
    if (pong_due_ && enc_->add_pong({reinterpret_cast<const uint8_t *>(pong_ctx_.data()),
                                      pong_ctx_.size()}))
        pong_due_ = false;
    // TTL travels in deciseconds, 16 bits: cap like libzmq instead of wrapping.
    const int ttl_ds = std::min(opts_.heartbeat_ttl / 100, 65535);
    if (ping_due_ && enc_->add_ping(static_cast<uint16_t>(ttl_ds), {}))
        ping_due_ = false;
    for (;;) {
        msg_t m;
        if (out_pending_valid_) {
            m = out_pending_;
            out_pending_.init();
            out_pending_valid_ = false;
        } else if (!pipe_ || !pipe_->read(m))
            break;
        const bool more = m.has_more();
        if (discard_rest_) {
            m.close();
            discard_rest_ = more;
            continue;
        }
        auto body = std::span<const uint8_t>(static_cast<const uint8_t *>(m.data()), m.size());
        bool ok;
        if (sub_side && !out_midmsg_ && !more && !body.empty() && body[0] <= 1)
            ok = enc_->add_subscription(body[0] == 1, body.subspan(1), peer_version_);
        else
            ok = enc_->add(body, more);
        if (!ok) {
            out_pending_ = m;  // does not fit: first of the next batch
            out_pending_valid_ = true;
            break;
        }
        out_midmsg_ = more;
        if (m.size() > wire::frame_encoder::default_copy_threshold)
            in_flight_.push_back(m);  // referenced by the encoder until written
        else
            m.close();
    }
    if (enc_->empty()) {
        for (auto &f : in_flight_)
            f.close();
        in_flight_.clear();
        return false;
    }
    gather_.clear();
    for (const auto &b : enc_->buffers())
        gather_.emplace_back(b.data, b.size);
    return true;
}

void session_t::write_batch() {
    writing_ = true;
    auto self_ = self();
    const unsigned gen = generation_;
    // 0 = no cap: the whole gather list goes to one writev when the kernel takes it.
    const size_t cap = opts_.max_transfer > 0 ? static_cast<size_t>(opts_.max_transfer)
                                              : static_cast<size_t>(1) << 30;
    asio::async_write(
        *sock_, gather_,
        [cap](const asio::error_code &ec, size_t) -> size_t { return ec ? 0 : cap; },
        [self_, gen](const asio::error_code &ec, size_t n) {
            if (gen == self_->generation_)
                self_->on_written(ec, n);
        });
}

void session_t::on_written(const asio::error_code &ec, size_t n) {
    writing_ = false;
    if (ec)
        return connection_lost(ec.message().c_str(), ZMQ_EVENT_CLOSED);
    if (!raw_)
        enc_->consume(n);
    for (auto &m : in_flight_)
        m.close();
    in_flight_.clear();
    if (close_after_write_ && raw_) {
        close_connection();
        if (pipe_ && pipe_->is_active())
            pipe_->terminate();
        return maybe_finish();
    }
    pump_out();
}

// ---------------------------------------------------------------- heartbeats

void session_t::arm_heartbeat() {
    int tick = opts_.heartbeat_ivl > 0 ? opts_.heartbeat_ivl
                                       : (peer_ttl_ms_ > 0 ? std::max(peer_ttl_ms_ / 2, 1) : 0);
    if (tick <= 0 || raw_ || !active_)
        return;
    auto self_ = self();
    const unsigned gen = generation_;
    heartbeat_timer_.expires_after(std::chrono::milliseconds(tick));
    heartbeat_timer_.async_wait([self_, gen](const asio::error_code &ec) {
        if (ec || gen != self_->generation_)
            return;
        auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() -
                                                                          self_->last_recv_)
                        .count();
        const options_t &o = self_->opts_;
        int timeout = o.heartbeat_timeout >= 0 ? o.heartbeat_timeout : o.heartbeat_ivl;
        if ((o.heartbeat_ivl > 0 && timeout > 0 && idle > timeout) ||
            (self_->peer_ttl_ms_ > 0 && idle > self_->peer_ttl_ms_))
            return self_->connection_lost("heartbeat timeout", ZMQ_EVENT_DISCONNECTED);
        if (o.heartbeat_ivl > 0) {
            self_->ping_due_ = true;
            self_->pump_out();
        }
        self_->arm_heartbeat();
    });
}

}  // namespace zlink
