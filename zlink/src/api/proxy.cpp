// zmq_proxy / zmq_proxy_steerable, written against the public API only:
// forward whole multipart messages both ways, copy each frame to the capture
// socket, obey PAUSE / RESUME / TERMINATE / STATISTICS on the control socket.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "api/boundary.hpp"
#include "zmq.h"

namespace {

struct side_stats {
    uint64_t msgs_in = 0, bytes_in = 0, msgs_out = 0, bytes_out = 0;
};

// Moves one whole message from `from` to `to`; -1 on error (errno set).
int forward(void *from, void *to, void *capture, side_stats &in_stats, side_stats &out_stats) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    for (;;) {
        int n = zmq_msg_recv(&m, from, ZMQ_DONTWAIT);
        if (n < 0) {
            int e = zmq_errno();
            zmq_msg_close(&m);
            if (e == EAGAIN)
                return 0;  // nothing (more) to read right now
            errno = e;
            return -1;
        }
        const bool more = zmq_msg_more(&m) != 0;
        in_stats.msgs_in += more ? 0 : 1;
        in_stats.bytes_in += static_cast<uint64_t>(n);
        if (capture) {
            zmq_msg_t c;
            zmq_msg_init(&c);
            zmq_msg_copy(&c, &m);
            if (zmq_msg_send(&c, capture, more ? ZMQ_SNDMORE : 0) < 0)
                zmq_msg_close(&c);
        }
        if (zmq_msg_send(&m, to, more ? ZMQ_SNDMORE : 0) < 0) {
            int e = zmq_errno();
            zmq_msg_close(&m);
            errno = e;
            return -1;
        }
        out_stats.msgs_out += more ? 0 : 1;
        out_stats.bytes_out += static_cast<uint64_t>(n);
        if (!more)
            break;
    }
    zmq_msg_close(&m);
    return 0;
}

int reply_stats(void *control, const side_stats &f, const side_stats &b) {
    const uint64_t v[8] = {f.msgs_in, f.bytes_in, f.msgs_out, f.bytes_out,
                           b.msgs_in, b.bytes_in, b.msgs_out, b.bytes_out};
    for (int i = 0; i < 8; ++i)
        if (zmq_send(control, &v[i], sizeof v[i], i < 7 ? ZMQ_SNDMORE : 0) < 0)
            return -1;
    return 0;
}

// A REP control socket must answer every request or it can take no more:
// as libzmq, commands other than STATISTICS get an empty reply.
int reply_if_rep(void *control) {
    int type = 0;
    size_t size = sizeof type;
    if (zmq_getsockopt(control, ZMQ_TYPE, &type, &size) < 0)
        return -1;
    return type == ZMQ_REP ? zmq_send(control, "", 0, 0) : 0;
}

// Runs one control command: 1 to go on, 0 after TERMINATE, -1 on error.
// Unknown commands are ignored (but answered), as libzmq does.
int obey(void *control, std::string_view c, bool &paused, const side_stats &fs,
         const side_stats &bs) {
    if (c == "STATISTICS")
        return reply_stats(control, fs, bs) < 0 ? -1 : 1;
    if (c == "PAUSE")
        paused = true;
    else if (c == "RESUME")
        paused = false;
    if (reply_if_rep(control) < 0)
        return -1;
    return c == "TERMINATE" ? 0 : 1;
}

// The proxy loop; returns 0 after TERMINATE, -1 with errno (ETERM when the
// context ends, as libzmq).
int run_proxy(void *frontend, void *backend, void *capture, void *control) {
    side_stats fs, bs;
    bool paused = false;
    for (;;) {
        zmq_pollitem_t items[3] = {
            {frontend, 0, ZMQ_POLLIN, 0}, {backend, 0, ZMQ_POLLIN, 0}, {control, 0, ZMQ_POLLIN, 0}};
        const int n = control ? 3 : 2;
        if (paused)
            items[0].events = items[1].events = 0;
        if (zmq_poll(items, n, -1) < 0)
            return -1;  // ETERM ends the proxy, as in libzmq
        if (control && (items[2].revents & ZMQ_POLLIN)) {
            char cmd[32];
            int len = zmq_recv(control, cmd, sizeof cmd, 0);
            if (len < 0)
                return -1;
            std::string_view c(cmd, static_cast<size_t>(len < 32 ? len : 32));
            const int rc = obey(control, c, paused, fs, bs);
            if (rc <= 0)
                return rc;  // TERMINATE (0) or an error (-1)
        }
        if (!paused && (items[0].revents & ZMQ_POLLIN) &&
            forward(frontend, backend, capture, fs, bs) < 0)
            return -1;
        if (!paused && frontend != backend && (items[1].revents & ZMQ_POLLIN) &&
            forward(backend, frontend, capture, bs, fs) < 0)
            return -1;
    }
}

}  // namespace

ZLINK_API int zmq_proxy_steerable(void *frontend, void *backend, void *capture, void *control) {
    if (!frontend || !backend) {
        errno = EFAULT;
        return -1;
    }
    return zlink::api::guarded(-1, [&] { return run_proxy(frontend, backend, capture, control); });
}

ZLINK_API int zmq_proxy(void *frontend, void *backend, void *capture) {
    return zmq_proxy_steerable(frontend, backend, capture, nullptr);
}

// Deprecated: a proxy without capture; the device type is ignored (libzmq too).
ZLINK_API int zmq_device(int, void *frontend, void *backend) {
    return zmq_proxy_steerable(frontend, backend, nullptr, nullptr);
}
