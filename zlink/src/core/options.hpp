// options_t: the per-socket options that the core and the transports read.
// Sessions receive a copy taken at bind/connect time (like libzmq), so IO
// threads never read a socket's live options.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/security_options.hpp"

namespace zlink {

struct options_t {
    int type = -1;
    int sndhwm = 1000;
    int rcvhwm = 1000;
    int linger = -1;  // ms; -1 = forever (libzmq 4.3.5 default)
    std::string routing_id;
    std::string connect_routing_id;  // consumed by the next connect()
    int reconnect_ivl = 100;
    int reconnect_ivl_max = 0;
    int backlog = 100;
    int64_t maxmsgsize = -1;
    int sndbuf = -1;
    int rcvbuf = -1;
    int sndtimeo = -1;
    int rcvtimeo = -1;
    bool immediate = false;
    bool ipv6 = false;
    int tcp_keepalive = -1;
    int tcp_keepalive_cnt = -1;
    int tcp_keepalive_idle = -1;
    int tcp_keepalive_intvl = -1;
    int heartbeat_ivl = 0;
    int heartbeat_ttl = 0;
    int heartbeat_timeout = -1;  // -1: use heartbeat_ivl
    int handshake_ivl = 30000;
    int connect_timeout = 0;
    // Set by socket types, not by users:
    bool recv_routing_id = false;  // ROUTER/STREAM: one pipe per connection, attached after handshake
    bool raw_socket = false;       // STREAM: no ZMTP, bytes only
    bool raw_notify = true;        // STREAM_NOTIFY: empty frame on (dis)connect
    // Resolved per endpoint from the context knobs (bytes).
    int in_batch = 8192;
    int out_batch = 8192;
    int max_transfer = 0;
    std::string last_endpoint;
    security_options security;  // ZMQ_MECHANISM, PLAIN, CURVE, ZAP options

    // Generic options; returns 0, or -1 with errno (EINVAL for unknown option
    // or bad value).
    int set(int option, const void *val, size_t len);
    int get(int option, void *val, size_t *len) const;
};

}  // namespace zlink
