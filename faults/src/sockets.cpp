#include "sockets.hpp"

#include <zmq.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace faults {
namespace {

// Fixed secret keys (Z85, random bytes made for this driver): both processes of a
// cell must agree without talking; the public keys are derived with zmq_curve_public.
constexpr const char *server_secret = "FgTDYP{6w1b]l(V)Kou?.DF<IXinHA.}^mhFlZA1";
constexpr const char *client_secret = "etIoCA&okRTjPyjzi:+^owiu&=gbzuM0L8+iD>XU";

void set_bytes(void *s, int option, const char *value, std::size_t n, const char *name) {
    if (zmq_setsockopt(s, option, value, n) != 0)
        zmq_failure(name);
}

std::string public_of(const char *secret) {
    char out[41] = {0};
    if (zmq_curve_public(out, secret) != 0)
        zmq_failure("zmq_curve_public");
    return out;
}

void secure(void *s, const Options &o) {
    if (!o.curve)
        return;
    if (o.bind) {
        set_int(s, ZMQ_CURVE_SERVER, 1, "ZMQ_CURVE_SERVER");
        set_bytes(s, ZMQ_CURVE_SECRETKEY, server_secret, 40, "ZMQ_CURVE_SECRETKEY");
        return;
    }
    const std::string server_public = public_of(server_secret);
    const std::string client_public = public_of(client_secret);
    set_bytes(s, ZMQ_CURVE_SERVERKEY, server_public.c_str(), 40, "ZMQ_CURVE_SERVERKEY");
    set_bytes(s, ZMQ_CURVE_PUBLICKEY, client_public.c_str(), 40, "ZMQ_CURVE_PUBLICKEY");
    set_bytes(s, ZMQ_CURVE_SECRETKEY, client_secret, 40, "ZMQ_CURVE_SECRETKEY");
}

}  // namespace

void zmq_failure(const char *what) {
    std::fprintf(stderr, "fault_driver: %s: %s\n", what, zmq_strerror(zmq_errno()));
    std::exit(3);
}

void set_int(void *s, int option, int value, const char *name) {
    if (zmq_setsockopt(s, option, &value, sizeof value) != 0)
        zmq_failure(name);
}

int socket_type(const Options &o) {
    const bool send = o.role == Role::send;
    switch (o.pattern) {
    case Pattern::pair: return ZMQ_PAIR;
    case Pattern::push_pull: return send ? ZMQ_PUSH : ZMQ_PULL;
    case Pattern::dealer_router: return send ? ZMQ_DEALER : ZMQ_ROUTER;
    case Pattern::pub_sub: return send ? ZMQ_PUB : ZMQ_SUB;
    case Pattern::req_rep: return send ? ZMQ_REQ : ZMQ_REP;
    }
    return -1;
}

void *make_socket(void *ctx, const Options &o) {
    void *s = zmq_socket(ctx, socket_type(o));
    if (!s)
        zmq_failure("zmq_socket");
    if (o.linger != -2)
        set_int(s, ZMQ_LINGER, o.linger, "ZMQ_LINGER");
    // Each call waits at most poll_ms, so the loops see their deadlines: a harness
    // setting, not a library behaviour (a timed-out call is retried, never counted).
    set_int(s, ZMQ_SNDTIMEO, o.poll_ms, "ZMQ_SNDTIMEO");
    set_int(s, ZMQ_RCVTIMEO, o.poll_ms, "ZMQ_RCVTIMEO");
    if (o.heartbeat_ivl) {
        set_int(s, ZMQ_HEARTBEAT_IVL, o.heartbeat_ivl, "ZMQ_HEARTBEAT_IVL");
        set_int(s, ZMQ_HEARTBEAT_TIMEOUT, o.heartbeat_timeout, "ZMQ_HEARTBEAT_TIMEOUT");
        set_int(s, ZMQ_HEARTBEAT_TTL, o.heartbeat_ttl, "ZMQ_HEARTBEAT_TTL");
    }
    secure(s, o);
    if (o.pattern == Pattern::pub_sub && o.role == Role::recv)
        set_bytes(s, ZMQ_SUBSCRIBE, "", 0, "ZMQ_SUBSCRIBE");
    return s;
}

void attach(void *s, const Options &o) {
    if (o.bind ? zmq_bind(s, o.endpoint.c_str()) : zmq_connect(s, o.endpoint.c_str()))
        zmq_failure(o.bind ? "zmq_bind" : "zmq_connect");
}

std::string last_endpoint(void *s) {
    char buf[256] = {0};
    std::size_t n = sizeof buf;
    if (zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, buf, &n) != 0)
        zmq_failure("ZMQ_LAST_ENDPOINT");
    return buf;
}

}  // namespace faults
