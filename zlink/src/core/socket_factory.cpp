// Socket type table: PAIR lives with the core (the first end-to-end slice);
// every other type comes from src/sockets/ via create_socket_type().
#include <cerrno>

#include "core/socket_base.hpp"
#include "sockets/pair.hpp"
#include "sockets/socket_types.hpp"
#include "zmq.h"

namespace zlink {

socket_base_t *socket_base_t::create(int type, ctx_t *ctx) {
    if (type == ZMQ_PAIR)
        return new pair_t(ctx, type);
    if (socket_base_t *s = create_socket_type(type, ctx))
        return s;
    errno = EINVAL;
    return nullptr;
}

}  // namespace zlink
