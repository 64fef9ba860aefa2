// Small helpers shared by the socket types.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "core/msg.hpp"
#include "core/pipe.hpp"

namespace zlink {

// Discard a frame the routing policy will not deliver; leaves m empty and
// valid, as the socket_base contract expects after a taken send.
inline void drop_frame(msg_t &m) {
    m.close();
    m.init();
}

inline std::string_view body(const msg_t &m) {
    return {static_cast<const char *>(m.data()), m.size()};
}

// Reads an int-valued boolean option (0 or 1) as libzmq does: EINVAL when the
// length is not sizeof(int) or the value is not 0/1.
inline int parse_bool_option(const void *val, size_t len, bool &out) {
    int v = 0;
    if (val == nullptr || len != sizeof(int)) {
        errno = EINVAL;
        return -1;
    }
    std::memcpy(&v, val, sizeof v);
    if (v != 0 && v != 1) {
        errno = EINVAL;
        return -1;
    }
    out = v == 1;
    return 0;
}

// Reads an int-valued flag the way libzmq's REQ/DEALER/ROUTER/XPUB options
// do: any value >= 0 is accepted (non-zero means on); EINVAL when the length
// is not sizeof(int) or the value is negative.
inline int parse_flag_option(const void *val, size_t len, bool &out) {
    int v = 0;
    if (val == nullptr || len != sizeof(int)) {
        errno = EINVAL;
        return -1;
    }
    std::memcpy(&v, val, sizeof v);
    if (v < 0) {
        errno = EINVAL;
        return -1;
    }
    out = v != 0;
    return 0;
}

// ZMQ_PROBE_ROUTER: an empty message to a new peer, so a ROUTER on the other
// side learns the connection (and its routing id) before any real traffic.
// A full pipe simply misses it, as in libzmq.
inline void send_probe(pipe_t *pipe) {
    msg_t probe;
    probe.init();
    if (pipe->write(probe))
        pipe->flush();
    else
        probe.close();
}

inline int fail(int err) {
    errno = err;
    return -1;
}

}  // namespace zlink
