#include "sockets/push.hpp"

#include <zmq.h>

#include "sockets/socket_util.hpp"

namespace zlink {

push_t::push_t(ctx_t *ctx) : socket_base_t(ctx, ZMQ_PUSH) {}

void push_t::xattach_pipe(pipe_t *pipe, bool) {
    // Nothing ever reads this pipe's inbound side, so the peer's end-of-pipe
    // marker would never be seen: let a peer's close finish it at once.
    pipe->set_nodelay();
    lb_.attach(pipe);
}

int push_t::xsend(msg_t &msg) {
    return lb_.send(msg, drop_frame) == send_result::sent ? 0 : fail(EAGAIN);
}

int push_t::xrecv(msg_t &) { return fail(ENOTSUP); }
bool push_t::xhas_out() { return lb_.has_out(); }
void push_t::xwrite_activated(pipe_t *pipe) { lb_.activated(pipe); }
void push_t::xpipe_terminated(pipe_t *pipe) { lb_.terminated(pipe); }

}  // namespace zlink
