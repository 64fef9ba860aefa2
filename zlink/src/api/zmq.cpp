// The C API for contexts and sockets: argument checks and delegation, nothing
// else.  Every body runs inside guarded() (api/boundary.hpp), so no exception
// reaches the C caller.  Messages are in msg_api.cpp, the small utilities in
// utilities.cpp, timers in timers.cpp, polling and proxies in their own files.
#include "zmq.h"

#include <sys/uio.h>

#include <cstdlib>
#include <cstring>

#include "api/boundary.hpp"
#include "api/handles.hpp"
#include "core/ctx.hpp"
#include "core/msg.hpp"
#include "core/socket_base.hpp"

using zlink::ctx_t;
using zlink::msg_t;
using zlink::socket_base_t;
using zlink::api::guarded;

using zlink::api::as_socket;
using zlink::api::size_result;

namespace {

ctx_t *as_ctx(void *c) {
    auto *ctx = static_cast<ctx_t *>(c);
    if (!ctx || !ctx->check_tag()) {
        errno = EFAULT;
        return nullptr;
    }
    return ctx;
}

}  // namespace

// ---- context ----

ZLINK_API void *zmq_ctx_new(void) {
    return guarded<void *>(nullptr, [] { return static_cast<void *>(new ctx_t); });
}

ZLINK_API int zmq_ctx_term(void *c) {
    return guarded(-1, [&] {
        ctx_t *ctx = as_ctx(c);
        return ctx ? ctx->terminate() : -1;
    });
}

ZLINK_API int zmq_ctx_shutdown(void *c) {
    return guarded(-1, [&] {
        ctx_t *ctx = as_ctx(c);
        return ctx ? ctx->shutdown() : -1;
    });
}

ZLINK_API int zmq_ctx_set(void *c, int option, int value) {
    return guarded(-1, [&] {
        ctx_t *ctx = as_ctx(c);
        return ctx ? ctx->set(option, value) : -1;
    });
}

ZLINK_API int zmq_ctx_get(void *c, int option) {
    return guarded(-1, [&] {
        ctx_t *ctx = as_ctx(c);
        return ctx ? ctx->get(option) : -1;
    });
}

ZLINK_API void *zmq_init(int io_threads) {
    if (io_threads < 0) {
        errno = EINVAL;
        return nullptr;
    }
    void *c = zmq_ctx_new();
    if (c)
        zmq_ctx_set(c, ZMQ_IO_THREADS, io_threads);
    return c;
}

ZLINK_API int zmq_term(void *c) { return zmq_ctx_term(c); }
ZLINK_API int zmq_ctx_destroy(void *c) { return zmq_ctx_term(c); }

// ---- sockets ----

ZLINK_API void *zmq_socket(void *c, int type) {
    return guarded<void *>(nullptr, [&]() -> void * {
        ctx_t *ctx = as_ctx(c);
        return ctx ? ctx->create_socket(type) : nullptr;
    });
}

ZLINK_API int zmq_close(void *s) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        return sock ? sock->close() : -1;
    });
}

ZLINK_API int zmq_setsockopt(void *s, int option, const void *val, size_t len) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        return sock ? sock->setsockopt(option, val, len) : -1;
    });
}

// A null length, or a null buffer with a length, is EFAULT (libzmq crashes).
ZLINK_API int zmq_getsockopt(void *s, int option, void *val, size_t *len) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        if (!sock)
            return -1;
        if (!len || (!val && *len)) {
            errno = EFAULT;
            return -1;
        }
        return sock->getsockopt(option, val, len);
    });
}

ZLINK_API int zmq_socket_monitor(void *s, const char *addr, int events) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        return sock ? sock->monitor(addr, events) : -1;
    });
}

namespace {
// bind/connect/unbind/disconnect share one shape: a valid socket, a non-null address.
int endpoint_call(void *s, const char *addr, int (socket_base_t::*op)(const char *)) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        if (!sock)
            return -1;
        if (!addr) {
            errno = EINVAL;
            return -1;
        }
        return (sock->*op)(addr);
    });
}
}  // namespace

ZLINK_API int zmq_bind(void *s, const char *addr) {
    return endpoint_call(s, addr, &socket_base_t::bind);
}

ZLINK_API int zmq_connect(void *s, const char *addr) {
    return endpoint_call(s, addr, &socket_base_t::connect);
}

ZLINK_API int zmq_unbind(void *s, const char *addr) {
    return endpoint_call(s, addr, &socket_base_t::unbind);
}

ZLINK_API int zmq_disconnect(void *s, const char *addr) {
    return endpoint_call(s, addr, &socket_base_t::disconnect);
}

// ---- send and receive ----

namespace {
// Hands a built message to the socket; on failure releases it without letting
// close() overwrite the send's errno.  Returns the size sent or -1.
int send_built(socket_base_t *sock, msg_t &m, int flags, size_t len) {
    if (sock->send(m, flags) != 0) {
        int e = errno;
        m.close();
        errno = e;
        return -1;
    }
    return size_result(len);
}

// zmq_send and zmq_sendiov: copy a buffer into a message and send it.
int send_copy(socket_base_t *sock, const void *buf, size_t len, int flags) {
    if (!buf && len) {
        errno = EFAULT;
        return -1;
    }
    msg_t m;
    if (m.init_buffer(buf, len) != 0)
        return -1;
    return send_built(sock, m, flags, len);
}

// Receives one frame into m (initialised here); -1 with errno, m closed.
int recv_frame(socket_base_t *sock, msg_t &m, int flags) {
    m.init();
    if (sock->recv(m, flags) != 0) {
        int e = errno;
        m.close();
        errno = e;
        return -1;
    }
    return 0;
}
}  // namespace

ZLINK_API int zmq_send(void *s, const void *buf, size_t len, int flags) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        return sock ? send_copy(sock, buf, len, flags) : -1;
    });
}

ZLINK_API int zmq_send_const(void *s, const void *buf, size_t len, int flags) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        if (!sock)
            return -1;
        if (!buf && len) {
            errno = EFAULT;
            return -1;
        }
        msg_t m;
        m.init_const(buf, len);
        return send_built(sock, m, flags, len);
    });
}

ZLINK_API int zmq_recv(void *s, void *buf, size_t len, int flags) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        if (!sock)
            return -1;
        if (!buf && len) {
            errno = EFAULT;
            return -1;
        }
        msg_t m;
        if (recv_frame(sock, m, flags) != 0)
            return -1;
        const size_t n = m.size();
        if (n && len)
            std::memcpy(buf, m.data(), n < len ? n : len);  // truncates like libzmq
        m.close();
        return size_result(n);
    });
}

// Sends count buffers (copied).  As in libzmq the flags apply to every buffer
// except that the last never carries ZMQ_SNDMORE: with ZMQ_SNDMORE the buffers
// are the parts of one message, without it each is a message of its own.
// Returns the last part's size, or -1 (parts sent before the failure stay sent).
ZLINK_API int zmq_sendiov(void *s, struct iovec *iov, size_t count, int flags) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        if (!sock)
            return -1;
        if (!iov || count == 0) {
            errno = EINVAL;
            return -1;
        }
        int rc = 0;
        for (size_t i = 0; i < count && rc >= 0; ++i) {
            const int part_flags = i + 1 == count ? flags & ~ZMQ_SNDMORE : flags;
            rc = send_copy(sock, iov[i].iov_base, iov[i].iov_len, part_flags);
        }
        return rc;
    });
}

namespace {
// One received part into a malloc'd iovec (the caller frees iov_base).
int recv_part(socket_base_t *sock, struct iovec &part, int flags, bool &more) {
    msg_t m;
    if (recv_frame(sock, m, flags) != 0)
        return -1;
    part.iov_len = m.size();
    part.iov_base = std::malloc(part.iov_len ? part.iov_len : 1);
    if (!part.iov_base) {
        m.close();
        errno = ENOMEM;
        return -1;
    }
    std::memcpy(part.iov_base, m.data(), part.iov_len);
    more = m.has_more();
    m.close();
    return 0;
}
}  // namespace

// Receives up to *count parts of one message; *count becomes the number read
// (also on failure: parts read before an error stay valid).  Returns that
// number, or -1.
ZLINK_API int zmq_recviov(void *s, struct iovec *iov, size_t *count, int flags) {
    return guarded(-1, [&] {
        socket_base_t *sock = as_socket(s);
        if (!sock)
            return -1;
        if (!iov || !count || *count == 0) {
            errno = EINVAL;
            return -1;
        }
        const size_t capacity = *count;
        *count = 0;
        bool more = true;
        while (more && *count < capacity) {
            if (recv_part(sock, iov[*count], flags, more) != 0)
                return -1;
            ++*count;
        }
        return static_cast<int>(*count);
    });
}
