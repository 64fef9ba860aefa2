// Shared by ROUTER_ROUTER and ROUTER_ROUTER_POLL, which differ only in how they
// receive. Both routers have fixed routing ids and ROUTER_MANDATORY, so the client
// can address the server by name and nothing is dropped silently.
#pragma once

#include "../common/zmq_end.hpp"

namespace bench {

inline Channel make_router_router(void* ctx, const Options& o, bool poll, const char* topology) {
    void* sb = make_socket(ctx, ZMQ_ROUTER, o);
    set_bytes_option(sb, ZMQ_ROUTING_ID, "server", "ZMQ_ROUTING_ID");
    set_int_option(sb, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY");
    const std::string endpoint = bind_fresh(sb, o.transport);
    void* sa = make_socket(ctx, ZMQ_ROUTER, o);
    set_bytes_option(sa, ZMQ_ROUTING_ID, "client", "ZMQ_ROUTING_ID");
    set_int_option(sa, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY");
    connect_to(sa, endpoint);
    ZmqEndSpec a, b;
    a.send_socket = a.recv_socket = sa;
    a.send_routing_id = a.recv_routing_id = true;
    a.peer_id = "server";
    b.send_socket = b.recv_socket = sb;
    b.send_routing_id = b.recv_routing_id = true;
    a.poll = b.poll = poll;
    return make_zmq_channel(a, b, {sa, sb}, topology, o);
}

}  // namespace bench
