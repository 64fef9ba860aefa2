#include "core/options.hpp"

#include <cerrno>
#include <cstring>

#include "zmq.h"

namespace zlink {

namespace {

bool get_int(const void *val, size_t len, int &out) {
    if (!val || len != sizeof(int))
        return false;
    std::memcpy(&out, val, sizeof(int));
    return true;
}

int put_int(void *val, size_t *len, int v) {
    if (!val || !len || *len < sizeof(int)) {
        errno = EINVAL;
        return -1;
    }
    std::memcpy(val, &v, sizeof(int));
    *len = sizeof(int);
    return 0;
}

int put_string(void *val, size_t *len, const std::string &s, bool nul) {
    size_t need = s.size() + (nul ? 1 : 0);
    if (!val || !len || *len < need) {
        errno = EINVAL;
        return -1;
    }
    std::memcpy(val, s.data(), s.size());
    if (nul)
        static_cast<char *>(val)[s.size()] = '\0';
    *len = need;
    return 0;
}

int fail() {
    errno = EINVAL;
    return -1;
}

}  // namespace

int options_t::set(int option, const void *val, size_t len) {
    int v = 0;
    const bool is_int = get_int(val, len, v);
    auto int_at_least = [&](int &field, int min) {
        if (!is_int || v < min)
            return fail();
        field = v;
        return 0;
    };
    auto flag = [&](bool &field) {
        if (!is_int || (v != 0 && v != 1))
            return fail();
        field = v != 0;
        return 0;
    };
    switch (option) {
    case ZMQ_SNDHWM: return int_at_least(sndhwm, 0);
    case ZMQ_RCVHWM: return int_at_least(rcvhwm, 0);
    case ZMQ_LINGER: return int_at_least(linger, -1);
    case ZMQ_ROUTING_ID:
        if (!val || len == 0 || len > 255)
            return fail();
        routing_id.assign(static_cast<const char *>(val), len);
        return 0;
    case ZMQ_CONNECT_ROUTING_ID:
        if (!val || len == 0 || len > 255)
            return fail();
        connect_routing_id.assign(static_cast<const char *>(val), len);
        return 0;
    case ZMQ_RECONNECT_IVL: return int_at_least(reconnect_ivl, -1);
    case ZMQ_RECONNECT_IVL_MAX: return int_at_least(reconnect_ivl_max, 0);
    case ZMQ_BACKLOG: return int_at_least(backlog, 0);
    case ZMQ_MAXMSGSIZE:
        if (!val || len != sizeof(int64_t))
            return fail();
        std::memcpy(&maxmsgsize, val, sizeof maxmsgsize);
        if (maxmsgsize < -1)
            return maxmsgsize = -1, fail();
        return 0;
    case ZMQ_SNDBUF: return int_at_least(sndbuf, -1);
    case ZMQ_RCVBUF: return int_at_least(rcvbuf, -1);
    case ZMQ_SNDTIMEO: return int_at_least(sndtimeo, -1);
    case ZMQ_RCVTIMEO: return int_at_least(rcvtimeo, -1);
    case ZMQ_IMMEDIATE: return flag(immediate);
    case ZMQ_IPV6: return flag(ipv6);
    case ZMQ_TCP_KEEPALIVE:
        if (!is_int || v < -1 || v > 1)
            return fail();
        tcp_keepalive = v;
        return 0;
    case ZMQ_TCP_KEEPALIVE_CNT: return int_at_least(tcp_keepalive_cnt, -1);
    case ZMQ_TCP_KEEPALIVE_IDLE: return int_at_least(tcp_keepalive_idle, -1);
    case ZMQ_TCP_KEEPALIVE_INTVL: return int_at_least(tcp_keepalive_intvl, -1);
    case ZMQ_HEARTBEAT_IVL: return int_at_least(heartbeat_ivl, 0);
    case ZMQ_HEARTBEAT_TTL:
        // Sent on the wire in deciseconds, 16 bits.
        if (!is_int || v < 0 || v > 6553599)
            return fail();
        heartbeat_ttl = v;
        return 0;
    case ZMQ_HEARTBEAT_TIMEOUT: return int_at_least(heartbeat_timeout, -1);
    case ZMQ_HANDSHAKE_IVL: return int_at_least(handshake_ivl, 0);
    case ZMQ_CONNECT_TIMEOUT: return int_at_least(connect_timeout, 0);
    default: return security_options::handles(option) ? security.set(option, val, len) : fail();
    }
}

int options_t::get(int option, void *val, size_t *len) const {
    switch (option) {
    case ZMQ_TYPE: return put_int(val, len, type);
    case ZMQ_SNDHWM: return put_int(val, len, sndhwm);
    case ZMQ_RCVHWM: return put_int(val, len, rcvhwm);
    case ZMQ_LINGER: return put_int(val, len, linger);
    case ZMQ_ROUTING_ID: return put_string(val, len, routing_id, false);
    case ZMQ_RECONNECT_IVL: return put_int(val, len, reconnect_ivl);
    case ZMQ_RECONNECT_IVL_MAX: return put_int(val, len, reconnect_ivl_max);
    case ZMQ_BACKLOG: return put_int(val, len, backlog);
    case ZMQ_MAXMSGSIZE:
        if (!val || !len || *len < sizeof(int64_t))
            return fail();
        std::memcpy(val, &maxmsgsize, sizeof maxmsgsize);
        *len = sizeof(int64_t);
        return 0;
    case ZMQ_SNDBUF: return put_int(val, len, sndbuf);
    case ZMQ_RCVBUF: return put_int(val, len, rcvbuf);
    case ZMQ_SNDTIMEO: return put_int(val, len, sndtimeo);
    case ZMQ_RCVTIMEO: return put_int(val, len, rcvtimeo);
    case ZMQ_IMMEDIATE: return put_int(val, len, immediate);
    case ZMQ_IPV6: return put_int(val, len, ipv6);
    case ZMQ_TCP_KEEPALIVE: return put_int(val, len, tcp_keepalive);
    case ZMQ_TCP_KEEPALIVE_CNT: return put_int(val, len, tcp_keepalive_cnt);
    case ZMQ_TCP_KEEPALIVE_IDLE: return put_int(val, len, tcp_keepalive_idle);
    case ZMQ_TCP_KEEPALIVE_INTVL: return put_int(val, len, tcp_keepalive_intvl);
    case ZMQ_HEARTBEAT_IVL: return put_int(val, len, heartbeat_ivl);
    case ZMQ_HEARTBEAT_TTL: return put_int(val, len, heartbeat_ttl);
    case ZMQ_HEARTBEAT_TIMEOUT: return put_int(val, len, heartbeat_timeout);
    case ZMQ_HANDSHAKE_IVL: return put_int(val, len, handshake_ivl);
    case ZMQ_CONNECT_TIMEOUT: return put_int(val, len, connect_timeout);
    case ZMQ_LAST_ENDPOINT: return put_string(val, len, last_endpoint, true);
    default: return security_options::handles(option) ? security.get(option, val, len) : fail();
    }
}

}  // namespace zlink
