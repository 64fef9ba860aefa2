// Patterns whose sockets carry messages one way only (PUB->SUB, PUSH->PULL): the
// throughput path is one pair, and latency needs a real way back, so a second pair
// carries each message from b back to a - a round trip through two hops, never
// "inverse throughput". The receiving side binds both of its sockets (the forward
// path's receiver at --bind, the return path's sender beside it); the sending side
// connects both of its own.
#pragma once

#include "one_socket.hpp"

namespace bench {

struct OneWayTypes {
    int send_type, recv_type;
};

inline void subscribe_all(void *s, int type) {
    if (type == ZMQ_SUB)
        set_bytes_option(s, ZMQ_SUBSCRIBE, "", "ZMQ_SUBSCRIBE");
}

inline Side two_pair_receiver(void *ctx, const Options &o, const std::string &bind, OneWayTypes t) {
    void *in = make_socket(ctx, t.recv_type, o);
    subscribe_all(in, t.recv_type);
    const std::string in_ep = bind_endpoint(in, bind);
    void *back = make_socket(ctx, t.send_type, o);
    const std::string back_ep = bind_endpoint(back, second_endpoint(in_ep, o.transport));
    ZmqEndSpec b;
    b.send_socket = back;
    b.recv_socket = in;
    return make_zmq_side(b, {in, back}, {in_ep, back_ep}, o);
}

inline Side two_pair_sender(void *ctx, const Options &o, const std::vector<std::string> &endpoints,
                            OneWayTypes t) {
    void *out = make_socket(ctx, t.send_type, o);
    connect_to(out, endpoints.at(0));
    void *back = make_socket(ctx, t.recv_type, o);
    subscribe_all(back, t.recv_type);
    connect_to(back, endpoints.at(1));
    ZmqEndSpec a;
    a.send_socket = out;
    a.recv_socket = back;
    return make_zmq_side(a, {out, back}, {}, o);
}

}  // namespace bench
