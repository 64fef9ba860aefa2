// Patterns where each side is one socket: the receiving side's socket binds, the
// sending side's connects, and both send and receive on it.
#pragma once

#include <functional>

#include "../common/zmq_end.hpp"

namespace bench {

// Options a pattern sets before bind/connect (routing ids, ROUTER_MANDATORY).
using Configure = std::function<void(void *socket)>;

inline Side bound_side(void *ctx, const Options &o, const std::string &bind, int type,
                       ZmqEndSpec spec = {}, const Configure &configure = {}) {
    void *s = make_socket(ctx, type, o);
    if (configure)
        configure(s);
    const std::string bound = bind_endpoint(s, bind);
    spec.send_socket = spec.recv_socket = s;
    return make_zmq_side(spec, {s}, {bound}, o);
}

inline Side connected_side(void *ctx, const Options &o, const std::vector<std::string> &endpoints,
                           int type, ZmqEndSpec spec = {}, const Configure &configure = {}) {
    void *s = make_socket(ctx, type, o);
    if (configure)
        configure(s);
    connect_to(s, endpoints.at(0));
    spec.send_socket = spec.recv_socket = s;
    return make_zmq_side(spec, {s}, {}, o);
}

}  // namespace bench
