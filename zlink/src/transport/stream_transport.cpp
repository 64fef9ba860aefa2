#include "transport/stream_transport.hpp"

#include <cerrno>
#include <memory>

#include "core/ctx.hpp"
#include "core/io_thread.hpp"
#include "core/socket_base.hpp"
#include "transport/listener.hpp"
#include "transport/session.hpp"
#include "zmq.h"

namespace zlink {

namespace {
io_thread *pick_thread(socket_base_t &s) {
    io_thread *t = s.ctx()->choose_io_thread();
    if (!t)
        errno = EMTHREAD;  // ZMQ_IO_THREADS=0: inproc only
    return t;
}
}  // namespace

options_t stream_transport::endpoint_options(const socket_base_t &s) const {
    options_t snap = s.opts();
    family_.resolve_batch(s.ctx()->knobs(), snap.batch);
    return snap;
}

int stream_transport::bind(socket_base_t &s, const endpoint_t &ep, const std::string &text,
                           std::string &resolved) const {
    io_thread *t = pick_thread(s);
    if (!t)
        return -1;
    auto l = std::make_shared<listener_t>(t, &s, endpoint_options(s), family_, ep.address);
    l->endpoint = text;
    if (l->open(resolved) != 0)
        return -1;  // never started: ~io_object gives the ownership count back
    l->endpoint = resolved;
    // As libzmq: a wildcard text ("tcp://*:*", "ipc://*") names no endpoint
    // of its own; zmq_unbind takes the resolved one (ZMQ_LAST_ENDPOINT).
    if (text.find('*') == std::string::npos)
        s.add_endpoint(text, l);
    s.add_endpoint(resolved, l);
    return 0;
}

int stream_transport::connect(socket_base_t &s, const endpoint_t &ep,
                              const std::string &text) const {
    if (family_.check_connect_address(ep.address) != 0)
        return -1;
    io_thread *t = pick_thread(s);
    if (!t)
        return -1;
    const options_t &o = s.opts();
    pipe_t *socket_end = nullptr;
    pipe_t *session_end = nullptr;
    // Like libzmq, non-routing sockets get their pipe now, so messages queue
    // before the first connection (unless ZMQ_IMMEDIATE). So do ROUTER and
    // STREAM when ZMQ_CONNECT_ROUTING_ID names the peer: a message sent to
    // that id right after zmq_connect waits for the connection (libzmq's
    // test_connect_rid); without the option they get a pipe per connection.
    const bool named_peer = !o.connect_routing_id.empty();
    if (!o.immediate && ((!o.role.recv_routing_id && !o.role.raw_socket) || named_peer)) {
        auto pp = pipe_t::create_pair(&s.commands(), t, o.sndhwm, o.rcvhwm, o.conflate_out(),
                                      o.conflate_in());
        pipe_t::share_direct_send(pp);
        socket_end = pp.a;
        session_end = pp.b;
        socket_end->routing_id = o.connect_routing_id;
    }
    auto session =
        session_t::connecting(t, &s, endpoint_options(s), family_, ep.address, session_end);
    session->endpoint = text;
    if (socket_end) {
        s.attach_pipe(socket_end, true);
        // zmq_disconnect ends the socket's side too, so what this endpoint
        // queued for the application is discarded (libzmq: terminate(false)).
        s.add_endpoint_pipe(text, socket_end);
    }
    s.add_endpoint(text, session);
    return 0;
}

int stream_transport::unbind(socket_base_t &s, const endpoint_t &, const std::string &text) const {
    return s.stop_endpoint(text);
}

int stream_transport::disconnect(socket_base_t &s, const endpoint_t &,
                                 const std::string &text) const {
    return s.stop_endpoint(text);
}

}  // namespace zlink
