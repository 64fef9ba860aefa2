// Shared by ROUTER_ROUTER and ROUTER_ROUTER_POLL, which differ only in how they
// receive. Both routers have fixed routing ids and ROUTER_MANDATORY, so the client
// can address the server by name and nothing is dropped silently.
#pragma once

#include "one_socket.hpp"

namespace bench {

inline Configure router_named(const char *id) {
    return [id](void *s) {
        set_bytes_option(s, ZMQ_ROUTING_ID, id, "ZMQ_ROUTING_ID");
        set_int_option(s, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY");
    };
}

inline Side router_server(void *ctx, const Options &o, const std::string &bind, bool poll) {
    ZmqEndSpec b;
    b.send_routing_id = b.recv_routing_id = true;
    b.poll = poll;
    return bound_side(ctx, o, bind, ZMQ_ROUTER, b, router_named("server"));
}

inline Side router_client(void *ctx, const Options &o, const std::vector<std::string> &endpoints,
                          bool poll) {
    ZmqEndSpec a;
    a.send_routing_id = a.recv_routing_id = true;
    a.peer_id = "server";
    a.poll = poll;
    return connected_side(ctx, o, endpoints, ZMQ_ROUTER, a, router_named("client"));
}

}  // namespace bench
