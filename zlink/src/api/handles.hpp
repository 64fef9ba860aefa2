// Turning the C API's opaque handles and sizes into zlink's types, shared by
// the socket calls (zmq.cpp) and the message calls (msg_api.cpp).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "core/socket_base.hpp"

namespace zlink::api {

// A live socket, or nullptr with errno ENOTSOCK (closed, never a socket, null).
inline socket_base_t *as_socket(void *s) {
    auto *sock = static_cast<socket_base_t *>(s);
    if (!socket_base_t::is_live(sock)) {
        errno = ENOTSOCK;
        return nullptr;
    }
    return sock;
}

// Sizes are reported as int; a body over 2 GiB reports INT_MAX (as libzmq).
inline int size_result(size_t n) {
    return n > static_cast<size_t>(INT32_MAX) ? INT32_MAX : static_cast<int>(n);
}

}  // namespace zlink::api
