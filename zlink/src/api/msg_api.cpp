// zmq_msg_*: the message half of the C API.  A zmq_msg_t is a zlink::msg_t in
// place (64 bytes, see core/msg.hpp).  A null message pointer is -1/EFAULT
// (NULL/EFAULT, 0/EFAULT for size) instead of libzmq's crash.
#include <cstring>

#include "api/boundary.hpp"
#include "api/handles.hpp"
#include "core/msg.hpp"
#include "core/socket_base.hpp"
#include "zmq.h"

using zlink::msg_t;
using zlink::socket_base_t;
using zlink::api::guarded;

static_assert(sizeof(msg_t) <= sizeof(zmq_msg_t));
static_assert(alignof(msg_t) <= alignof(zmq_msg_t));

using zlink::api::as_socket;
using zlink::api::size_result;

namespace {

msg_t *as_msg(zmq_msg_t *m) {
    if (!m)
        errno = EFAULT;
    return reinterpret_cast<msg_t *>(m);
}
const msg_t *as_msg(const zmq_msg_t *m) { return as_msg(const_cast<zmq_msg_t *>(m)); }

}  // namespace

ZLINK_API int zmq_msg_init(zmq_msg_t *m) {
    msg_t *msg = as_msg(m);
    return msg ? msg->init() : -1;
}

ZLINK_API int zmq_msg_init_size(zmq_msg_t *m, size_t size) {
    msg_t *msg = as_msg(m);
    return msg ? msg->init_size(size) : -1;
}

ZLINK_API int zmq_msg_init_data(zmq_msg_t *m, void *data, size_t size, zmq_free_fn *ffn,
                                void *hint) {
    msg_t *msg = as_msg(m);
    if (!msg)
        return -1;
    if (!data && size) {
        errno = EINVAL;  // libzmq 4.3.5 asserts here
        return -1;
    }
    return msg->init_data(data, size, ffn, hint);
}

ZLINK_API int zmq_msg_send(zmq_msg_t *m, void *s, int flags) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        msg_t *msg = sock ? as_msg(m) : nullptr;
        if (!msg)
            return -1;
        const size_t n = msg->size();
        if (sock->send(*msg, flags) != 0)
            return -1;
        return size_result(n);
    });
}

ZLINK_API int zmq_msg_recv(zmq_msg_t *m, void *s, int flags) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        msg_t *msg = sock ? as_msg(m) : nullptr;
        if (!msg || sock->recv(*msg, flags) != 0)
            return -1;
        return size_result(msg->size());
    });
}

ZLINK_API int zmq_sendmsg(void *s, zmq_msg_t *m, int flags) { return zmq_msg_send(m, s, flags); }
ZLINK_API int zmq_recvmsg(void *s, zmq_msg_t *m, int flags) { return zmq_msg_recv(m, s, flags); }

ZLINK_API int zmq_msg_close(zmq_msg_t *m) {
    msg_t *msg = as_msg(m);
    return msg ? msg->close() : -1;
}

ZLINK_API int zmq_msg_move(zmq_msg_t *dst, zmq_msg_t *src) {
    msg_t *d = as_msg(dst), *s = as_msg(src);
    return d && s ? d->move(*s) : -1;
}

ZLINK_API int zmq_msg_copy(zmq_msg_t *dst, zmq_msg_t *src) {
    msg_t *d = as_msg(dst), *s = as_msg(src);
    return d && s ? d->copy(*s) : -1;
}

ZLINK_API void *zmq_msg_data(zmq_msg_t *m) {
    msg_t *msg = as_msg(m);
    return msg ? msg->data() : nullptr;
}

ZLINK_API size_t zmq_msg_size(const zmq_msg_t *m) {
    const msg_t *msg = as_msg(m);
    return msg ? msg->size() : 0;
}

ZLINK_API int zmq_msg_more(const zmq_msg_t *m) {
    const msg_t *msg = as_msg(m);
    return msg ? (msg->has_more() ? 1 : 0) : -1;
}

ZLINK_API int zmq_msg_get(const zmq_msg_t *m, int property) {
    const msg_t *msg = as_msg(m);
    if (!msg)
        return -1;
    switch (property) {
    case ZMQ_MORE: return msg->has_more() ? 1 : 0;
    // A constant (zmq_send_const, init_data without ffn) body counts as shared.
    case ZMQ_SHARED: return msg->is_shared() || msg->is_const() ? 1 : 0;
    case ZMQ_SRCFD: {
        // Deprecated: the fd of the connection, from the "__fd" property.
        const char *fd = msg->property("__fd");
        if (!fd) {
            errno = EINVAL;
            return -1;
        }
        return std::atoi(fd);
    }
    default: errno = EINVAL; return -1;
    }
}

ZLINK_API int zmq_msg_set(zmq_msg_t *, int, int) {
    errno = EINVAL;  // libzmq 4.3.5 has no settable property either
    return -1;
}

// Connection metadata (Socket-Type, Identity, Peer-Address, User-Id, X-*
// properties of the peer's READY) on received messages; NULL + EINVAL when
// the message carries none or not this one.
ZLINK_API const char *zmq_msg_gets(const zmq_msg_t *m, const char *property) {
    const msg_t *msg = as_msg(m);
    if (!msg)
        return nullptr;
    const char *value = property ? msg->property(property) : nullptr;
    if (!value)
        errno = EINVAL;
    return value;
}
