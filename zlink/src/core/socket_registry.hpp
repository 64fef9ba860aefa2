// The socket types as the core sees them: a table the core declares and
// sockets/socket_types.cpp defines, so the core never includes sockets/.
#pragma once
#include <span>

namespace zlink {

class ctx_t;
class socket_base_t;

struct socket_type_entry {
    int type;                              // ZMQ_PAIR, ZMQ_PUB, ...
    socket_base_t *(*create)(ctx_t *ctx);  // nullptr on allocation failure
};

// Every socket type zlink offers.  Defined by sockets/socket_types.cpp.
std::span<const socket_type_entry> socket_type_table();

}  // namespace zlink
