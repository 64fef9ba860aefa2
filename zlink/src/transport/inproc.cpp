#include "transport/inproc.hpp"

#include "core/ctx.hpp"
#include "core/forwarder.hpp"
#include "core/pipe.hpp"
#include "core/socket_base.hpp"
#include "zlink.h"

namespace zlink {

namespace {

// Unlimited when either side is unlimited.
int sum_hwm(int a, int b) { return (a == 0 || b == 0) ? 0 : a + b; }

// Connect before bind: each end learns the other socket's HWMs (for later
// SNDHWM/RCVHWM changes, core/pipe.hpp). The connecter's end is only touched
// through its atomic shares.
void share_hwms(pipe_t *bind_end, const options_t &connecter, const options_t &binder) {
    bind_end->set_peer_hwms(connecter.rcvhwm, connecter.sndhwm);
    bind_end->peer()->set_peer_hwms(binder.rcvhwm, binder.sndhwm);
}

void attach_to(socket_base_t *peer, pipe_t *end) {
    peer->commands().post(command{command_kind::attach_pipe, end, peer, nullptr, 0});
}

// Both sockets known: one pipe pair; the binder's end goes to the binder
// (runs under the context lock, see ctx_t::connect_inproc); returns ours.
pipe_t *pair_with_binder(socket_base_t &s, const ctx_t::inproc_binder &binder) {
    const options_t &o = s.opts();
    const options_t &po = binder.opts;
    socket_base_t *peer = binder.socket;
    // A direction conflates when its writer or its reader asks for it
    // (libzmq looks at the connecting side only).
    auto pp =
        pipe_t::create_pair(&s.commands(), &peer->commands(), sum_hwm(o.sndhwm, po.rcvhwm),
                            sum_hwm(o.rcvhwm, po.sndhwm), o.conflate_out() || po.conflate_in(),
                            o.conflate_in() || po.conflate_out());
    pp.a->set_peer_hwms(po.rcvhwm, po.sndhwm);
    pp.b->set_peer_hwms(o.rcvhwm, o.sndhwm);
    pp.a->peer_routing_id = po.routing_id;
    pp.a->peer_socket_type = po.type;
    pp.b->peer_routing_id = o.routing_id;
    pp.b->peer_socket_type = o.type;
    pp.a->routing_id = o.connect_routing_id;
    pp.a->write_routing_id(o.routing_id);
    pp.b->write_routing_id(po.routing_id);  // b not handed out yet
    attach_to(peer, pp.b);
    return pp.a;
}

// Connect before bind: the binder's end waits in the context.
void connect_pending(socket_base_t &s, const std::string &name, const std::string &text) {
    const options_t &o = s.opts();
    ctx_t *ctx = s.ctx();
    auto *fwd = ctx->make_forwarder();
    auto pp = pipe_t::create_pair(&s.commands(), fwd, o.sndhwm, o.rcvhwm, o.conflate_out(),
                                  o.conflate_in());
    pp.a->routing_id = o.connect_routing_id;
    pp.a->write_routing_id(o.routing_id);
    ctx_t::pending_connect pending{&s, pp.b, o, fwd};
    // Bound in between: attach there instead (under the context lock).
    ctx->connect_inproc(name, &pending, [&](const ctx_t::inproc_binder &binder) {
        socket_base_t *late = binder.socket;
        fwd->set_target(&late->commands());
        share_hwms(pp.b, o, binder.opts);
        pp.b->set_hwms_after_bind(sum_hwm(o.rcvhwm, binder.opts.sndhwm),
                                  sum_hwm(o.sndhwm, binder.opts.rcvhwm));
        pp.b->write_routing_id(binder.opts.routing_id);
        pp.b->peer_routing_id = o.routing_id;
        pp.b->peer_socket_type = o.type;
        attach_to(late, pp.b);
    });
    s.attach_pipe(pp.a, true);
    s.add_endpoint_pipe(text, pp.a);
}

}  // namespace

int inproc_transport::bind(socket_base_t &s, const endpoint_t &ep, const std::string &text,
                           std::string &resolved) const {
    ctx_t *ctx = s.ctx();
    resolved = text;  // before registering: nothing may fail once the name is taken
    if (ctx->register_inproc(ep.address, &s, s.opts()) != 0)
        return -1;
    std::vector<ctx_t::pending_connect> pending;
    try {
        pending = ctx->take_pending(ep.address);
    } catch (...) {
        ctx->unregister_inproc(ep.address, &s);  // a failed bind binds nothing
        throw;
    }
    // Adopt connects that happened before this bind.
    for (auto &p : pending) {
        p.fwd->set_target(&s.commands());
        share_hwms(p.bind_end, p.connecter_opts, s.opts());
        // Made with the connecter's HWMs only: now the sums, as a connect
        // after the bind gets (libzmq's test_hwm, test_sockopt_hwm).
        const options_t &co = p.connecter_opts, &bo = s.opts();
        p.bind_end->set_hwms_after_bind(sum_hwm(co.rcvhwm, bo.sndhwm),
                                        sum_hwm(co.sndhwm, bo.rcvhwm));
        p.bind_end->peer_routing_id = p.connecter_opts.routing_id;
        p.bind_end->peer_socket_type = p.connecter_opts.type;
        p.bind_end->write_routing_id(s.opts().routing_id);
        s.attach_pipe(p.bind_end, false);
    }
    return 0;
}

int inproc_transport::connect(socket_base_t &s, const endpoint_t &ep,
                              const std::string &text) const {
    pipe_t *mine = nullptr;
    if (!s.ctx()->connect_inproc(ep.address, nullptr, [&](const ctx_t::inproc_binder &binder) {
            mine = pair_with_binder(s, binder);
        })) {
        connect_pending(s, ep.address, text);
        return 0;
    }
    s.attach_pipe(mine, true);
    s.add_endpoint_pipe(text, mine);
    return 0;
}

int inproc_transport::unbind(socket_base_t &s, const endpoint_t &ep, const std::string &) const {
    s.ctx()->unregister_inproc(ep.address, &s);
    return 0;
}

int inproc_transport::disconnect(socket_base_t &s, const endpoint_t &,
                                 const std::string &text) const {
    return s.stop_endpoint(text);
}

namespace {
const knob_desc inproc_knobs[] = {
    {ZMQ_ASIO_IN_BATCH_SIZE_INPROC, "ZMQ_ASIO_IN_BATCH_SIZE_INPROC", knob_desc::range_t::batch},
    {ZMQ_ASIO_OUT_BATCH_SIZE_INPROC, "ZMQ_ASIO_OUT_BATCH_SIZE_INPROC", knob_desc::range_t::batch},
};
}  // namespace

std::span<const knob_desc> inproc_transport::knobs() const { return inproc_knobs; }

}  // namespace zlink
