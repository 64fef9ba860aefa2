// The socket types of src/sockets/, for the core's factory.
#pragma once

namespace zlink {

class ctx_t;
class socket_base_t;

// A new PUB, SUB, XPUB, XSUB, DEALER, ROUTER, STREAM, REQ, REP, PUSH or
// PULL socket; nullptr for any other type (PAIR is created by the core itself).
socket_base_t *create_socket_type(int type, ctx_t *ctx);

}  // namespace zlink
