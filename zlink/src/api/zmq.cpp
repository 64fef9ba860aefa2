// The C API: argument checks and delegation, nothing else.
#include "zmq.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "core/ctx.hpp"
#include "core/msg.hpp"
#include "core/socket_base.hpp"
#include "zlink.h"

#define ZLINK_API extern "C" __attribute__((visibility("default")))

using zlink::ctx_t;
using zlink::msg_t;
using zlink::socket_base_t;

static_assert(sizeof(msg_t) <= sizeof(zmq_msg_t));

namespace {

ctx_t *as_ctx(void *c) {
    auto *ctx = static_cast<ctx_t *>(c);
    if (!ctx || !ctx->check_tag()) {
        errno = EFAULT;
        return nullptr;
    }
    return ctx;
}

socket_base_t *as_socket(void *s) {
    auto *sock = static_cast<socket_base_t *>(s);
    if (!sock || !sock->check_tag()) {
        errno = ENOTSOCK;
        return nullptr;
    }
    return sock;
}

msg_t *as_msg(zmq_msg_t *m) { return reinterpret_cast<msg_t *>(m); }
const msg_t *as_msg(const zmq_msg_t *m) { return reinterpret_cast<const msg_t *>(m); }

int size_result(size_t n) {
    return n > static_cast<size_t>(INT32_MAX) ? INT32_MAX : static_cast<int>(n);
}

}  // namespace

// ---- errors, version, capabilities ----

ZLINK_API int zmq_errno(void) { return errno; }

ZLINK_API const char *zmq_strerror(int errnum) {
    switch (errnum) {
    case EFSM: return "Operation cannot be accomplished in current state";
    case ENOCOMPATPROTO: return "The protocol is not compatible with the socket type";
    case ETERM: return "Context was terminated";
    case EMTHREAD: return "No thread available";
    default: return std::strerror(errnum);
    }
}

ZLINK_API void zmq_version(int *major, int *minor, int *patch) {
    if (major) *major = ZLINK_VERSION_MAJOR;
    if (minor) *minor = ZLINK_VERSION_MINOR;
    if (patch) *patch = ZLINK_VERSION_PATCH;
}

ZLINK_API int zmq_has(const char *capability) {
    // Only what zlink really implements: ipc, and curve in a build with libsodium
    // (ZLINK_WITH_CURVE); no gssapi/pgm/tipc/norm/draft.
#ifdef ZLINK_HAVE_CURVE
    if (capability && std::strcmp(capability, "curve") == 0)
        return 1;
#endif
    return capability && std::strcmp(capability, "ipc") == 0 ? 1 : 0;
}

// ---- context ----

ZLINK_API void *zmq_ctx_new(void) { return new (std::nothrow) ctx_t; }

ZLINK_API int zmq_ctx_term(void *c) {
    ctx_t *ctx = as_ctx(c);
    return ctx ? ctx->terminate() : -1;
}

ZLINK_API int zmq_ctx_shutdown(void *c) {
    ctx_t *ctx = as_ctx(c);
    return ctx ? ctx->shutdown() : -1;
}

ZLINK_API int zmq_ctx_set(void *c, int option, int value) {
    ctx_t *ctx = as_ctx(c);
    return ctx ? ctx->set(option, value) : -1;
}

ZLINK_API int zmq_ctx_get(void *c, int option) {
    ctx_t *ctx = as_ctx(c);
    return ctx ? ctx->get(option) : -1;
}

ZLINK_API void *zmq_init(int io_threads) {
    if (io_threads < 0) {
        errno = EINVAL;
        return nullptr;
    }
    void *c = zmq_ctx_new();
    if (c && io_threads > 0)
        zmq_ctx_set(c, ZMQ_IO_THREADS, io_threads);
    return c;
}

ZLINK_API int zmq_term(void *c) { return zmq_ctx_term(c); }
ZLINK_API int zmq_ctx_destroy(void *c) { return zmq_ctx_term(c); }

// ---- sockets ----

ZLINK_API void *zmq_socket(void *c, int type) {
    ctx_t *ctx = as_ctx(c);
    return ctx ? ctx->create_socket(type) : nullptr;
}

ZLINK_API int zmq_close(void *s) {
    socket_base_t *sock = as_socket(s);
    return sock ? sock->close() : -1;
}

ZLINK_API int zmq_setsockopt(void *s, int option, const void *val, size_t len) {
    socket_base_t *sock = as_socket(s);
    return sock ? sock->setsockopt(option, val, len) : -1;
}

ZLINK_API int zmq_getsockopt(void *s, int option, void *val, size_t *len) {
    socket_base_t *sock = as_socket(s);
    return sock ? sock->getsockopt(option, val, len) : -1;
}

namespace {
// bind/connect/unbind/disconnect share one shape: a valid socket, a non-null address.
int endpoint_call(void *s, const char *addr, int (socket_base_t::*op)(const char *)) {
    socket_base_t *sock = as_socket(s);
    if (!sock)
        return -1;
    if (!addr) {
        errno = EINVAL;
        return -1;
    }
    return (sock->*op)(addr);
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

namespace {
// zmq_send and zmq_send_const: hand the built message over; on failure release it
// without letting close() overwrite the send's errno.
int send_built(socket_base_t *sock, msg_t &m, int flags, size_t len) {
    if (sock->send(m, flags) != 0) {
        int e = errno;
        m.close();
        errno = e;
        return -1;
    }
    return size_result(len);
}
}  // namespace

ZLINK_API int zmq_send(void *s, const void *buf, size_t len, int flags) {
    socket_base_t *sock = as_socket(s);
    if (!sock)
        return -1;
    if (!buf && len) {
        errno = EFAULT;
        return -1;
    }
    msg_t m;
    if (m.init_buffer(buf, len) != 0)
        return -1;
    return send_built(sock, m, flags, len);
}

ZLINK_API int zmq_send_const(void *s, const void *buf, size_t len, int flags) {
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
}

ZLINK_API int zmq_recv(void *s, void *buf, size_t len, int flags) {
    socket_base_t *sock = as_socket(s);
    if (!sock)
        return -1;
    if (!buf && len) {
        errno = EFAULT;
        return -1;
    }
    msg_t m;
    m.init();
    if (sock->recv(m, flags) != 0) {
        int e = errno;
        m.close();
        errno = e;
        return -1;
    }
    size_t n = m.size();
    std::memcpy(buf, m.data(), n < len ? n : len);  // truncates like libzmq
    m.close();
    return size_result(n);
}

// ---- messages ----

ZLINK_API int zmq_msg_init(zmq_msg_t *m) { return as_msg(m)->init(); }
ZLINK_API int zmq_msg_init_size(zmq_msg_t *m, size_t size) { return as_msg(m)->init_size(size); }
ZLINK_API int zmq_msg_init_data(zmq_msg_t *m, void *data, size_t size, zmq_free_fn *ffn,
                                void *hint) {
    if (!data && size) {
        errno = EINVAL;
        return -1;
    }
    return as_msg(m)->init_data(data, size, ffn, hint);
}

ZLINK_API int zmq_msg_send(zmq_msg_t *m, void *s, int flags) {
    socket_base_t *sock = as_socket(s);
    if (!sock)
        return -1;
    size_t n = as_msg(m)->size();
    if (sock->send(*as_msg(m), flags) != 0)
        return -1;
    return size_result(n);
}

ZLINK_API int zmq_msg_recv(zmq_msg_t *m, void *s, int flags) {
    socket_base_t *sock = as_socket(s);
    if (!sock)
        return -1;
    if (sock->recv(*as_msg(m), flags) != 0)
        return -1;
    return size_result(as_msg(m)->size());
}

ZLINK_API int zmq_sendmsg(void *s, zmq_msg_t *m, int flags) { return zmq_msg_send(m, s, flags); }
ZLINK_API int zmq_recvmsg(void *s, zmq_msg_t *m, int flags) { return zmq_msg_recv(m, s, flags); }

ZLINK_API int zmq_msg_close(zmq_msg_t *m) { return as_msg(m)->close(); }
ZLINK_API int zmq_msg_move(zmq_msg_t *dst, zmq_msg_t *src) {
    return as_msg(dst)->move(*as_msg(src));
}
ZLINK_API int zmq_msg_copy(zmq_msg_t *dst, zmq_msg_t *src) {
    return as_msg(dst)->copy(*as_msg(src));
}
ZLINK_API void *zmq_msg_data(zmq_msg_t *m) { return as_msg(m)->data(); }
ZLINK_API size_t zmq_msg_size(const zmq_msg_t *m) { return as_msg(m)->size(); }
ZLINK_API int zmq_msg_more(const zmq_msg_t *m) { return as_msg(m)->has_more() ? 1 : 0; }

ZLINK_API int zmq_msg_get(const zmq_msg_t *m, int property) {
    switch (property) {
    case ZMQ_MORE: return as_msg(m)->has_more() ? 1 : 0;
    case ZMQ_SHARED: return as_msg(m)->is_shared() ? 1 : 0;
    case ZMQ_SRCFD: errno = EINVAL; return -1;  // deprecated; zlink keeps no fd
    default: errno = EINVAL; return -1;
    }
}

ZLINK_API int zmq_msg_set(zmq_msg_t *, int, int) {
    errno = EINVAL;  // libzmq 4.3.5 has no settable property either
    return -1;
}

ZLINK_API const char *zmq_msg_gets(const zmq_msg_t *, const char *) {
    errno = EINVAL;  // zlink does not attach connection metadata to messages
    return nullptr;
}

// ---- utilities ----

namespace {
uint64_t now_us() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}
}  // namespace

ZLINK_API void *zmq_stopwatch_start(void) { return new uint64_t(now_us()); }
ZLINK_API unsigned long zmq_stopwatch_intermediate(void *w) {
    return static_cast<unsigned long>(now_us() - *static_cast<uint64_t *>(w));
}
ZLINK_API unsigned long zmq_stopwatch_stop(void *w) {
    unsigned long r = zmq_stopwatch_intermediate(w);
    delete static_cast<uint64_t *>(w);
    return r;
}
ZLINK_API void zmq_sleep(int seconds) { std::this_thread::sleep_for(std::chrono::seconds(seconds)); }

ZLINK_API void *zmq_atomic_counter_new(void) { return new std::atomic<int>(0); }
ZLINK_API void zmq_atomic_counter_set(void *c, int v) { static_cast<std::atomic<int> *>(c)->store(v); }
ZLINK_API int zmq_atomic_counter_inc(void *c) { return static_cast<std::atomic<int> *>(c)->fetch_add(1); }
ZLINK_API int zmq_atomic_counter_dec(void *c) {
    return static_cast<std::atomic<int> *>(c)->fetch_sub(1) - 1 > 0 ? 1 : 0;
}
ZLINK_API int zmq_atomic_counter_value(void *c) { return static_cast<std::atomic<int> *>(c)->load(); }
ZLINK_API void zmq_atomic_counter_destroy(void **cp) {
    if (cp) {
        delete static_cast<std::atomic<int> *>(*cp);
        *cp = nullptr;
    }
}

ZLINK_API int zmq_socket_monitor(void *s, const char *addr, int events) {
    socket_base_t *sock = as_socket(s);
    return sock ? sock->monitor(addr, events) : -1;
}
