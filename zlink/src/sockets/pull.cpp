#include "sockets/pull.hpp"

#include <zmq.h>

#include "sockets/socket_util.hpp"

namespace zlink {

pull_t::pull_t(ctx_t *ctx) : socket_base_t(ctx, ZMQ_PULL) {}

void pull_t::xattach_pipe(pipe_t *pipe, bool) { fq_.attach(pipe); }
int pull_t::xsend(msg_t &) { return fail(ENOTSUP); }
int pull_t::xrecv(msg_t &msg) { return fq_.recv(msg) ? 0 : fail(EAGAIN); }
bool pull_t::xhas_in() { return fq_.has_in(); }
void pull_t::xread_activated(pipe_t *pipe) { fq_.activated(pipe); }
void pull_t::xpipe_terminated(pipe_t *pipe) { fq_.terminated(pipe); }

}  // namespace zlink
