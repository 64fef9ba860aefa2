#include "transport/zap_client.hpp"

#include "core/ctx.hpp"
#include "core/socket_base.hpp"
#include "zmq.h"

namespace zlink {

zap_client *zap_client::connect(ctx_t &ctx, executor *session_thread, zap_listener &listener) {
    // Under the context lock (ctx_t::connect_inproc): the handler cannot be
    // reaped between finding it and posting the pipe to it.
    zap_client *client = nullptr;
    ctx.connect_inproc(
        std::string(wire::zap_inproc_name), nullptr, [&](const ctx_t::inproc_binder &handler) {
            socket_base_t *peer = handler.socket;
            // Unlimited both ways (libzmq: the ZAP pipe has no HWM).
            auto pp = pipe_t::create_pair(session_thread, &peer->commands(), 0, 0);
            client = new zap_client(pp.a, listener);
            pp.a->set_sink(client);
            pp.b->peer_socket_type = ZMQ_DEALER;  // what the handler sees asking: a plain requester
            pp.a->write_routing_id(std::string());
            pp.b->write_routing_id(handler.opts.routing_id);
            peer->commands().post(command{command_kind::attach_pipe, pp.b, peer, nullptr, 0});
        });
    return client;
}

void zap_client::send(const std::vector<wire::zap_frame> &frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
        msg_t m;
        m.init_buffer(frames[i].data(), frames[i].size());
        if (i + 1 < frames.size())
            m.set_flags(msg_t::more);
        pipe_->write(m);  // unlimited HWM: never refused
    }
    pipe_->flush();
    // A pipe reports read_activated only after a read found it empty: try once now.
    read_activated(pipe_);
}

void zap_client::read_activated(pipe_t *) {
    msg_t m;
    while (!answered_ && pipe_ && pipe_->read(m)) {
        const auto *p = static_cast<const std::uint8_t *>(m.data());
        reply_.emplace_back(p, p + m.size());
        more_.push_back(m.has_more());
        const bool last = !m.has_more();
        m.close();
        if (last)
            reply_complete();
    }
}

void zap_client::reply_complete() {
    answered_ = true;
    std::vector<wire::zap_frame_view> views;
    for (std::size_t i = 0; i < reply_.size(); ++i)
        views.push_back({reply_[i], more_[i]});
    wire::zap_reply reply;
    const auto e = wire::parse_zap_reply(views, reply);
    if (!listener_)
        return;
    if (e == wire::wire_error::none)
        listener_->zap_replied(reply);
    else
        listener_->zap_failed(e);
}

void zap_client::close() {
    listener_ = nullptr;
    if (!pipe_) {
        delete this;  // the pipe is already gone
        return;
    }
    pipe_
        ->terminate();  // also acknowledges a handler that closed first; pipe_terminated() frees us
}

void zap_client::pipe_terminated(pipe_t *) {
    pipe_ = nullptr;
    if (!listener_) {
        delete this;
        return;
    }
    // A handler that goes away without answering leaves the handshake waiting, as
    // libzmq 4.3.5 does (its session only forgets the ZAP pipe): the connection
    // ends at HANDSHAKE_IVL or when the peer hangs up. Failing it here instead
    // would let the peer reconnect and, with no handler bound any more, pass
    // unauthenticated (test_security_zap's zap_disconnect case).
}

}  // namespace zlink
