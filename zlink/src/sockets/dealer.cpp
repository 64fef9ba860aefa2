#include "sockets/dealer.hpp"

#include <zmq.h>

#include "sockets/socket_util.hpp"

namespace zlink {

dealer_t::dealer_t(ctx_t *ctx) : socket_base_t(ctx, ZMQ_DEALER) {}

void dealer_t::xattach_pipe(pipe_t *pipe, bool) {
    fq_.attach(pipe);
    lb_.attach(pipe);
}

int dealer_t::xsend(msg_t &msg) {
    return lb_.send(msg, drop_frame) == send_result::sent ? 0 : fail(EAGAIN);
}

int dealer_t::xrecv(msg_t &msg) { return fq_.recv(msg) ? 0 : fail(EAGAIN); }

bool dealer_t::xhas_in() { return fq_.has_in(); }
bool dealer_t::xhas_out() { return lb_.has_out(); }
void dealer_t::xread_activated(pipe_t *pipe) { fq_.activated(pipe); }
void dealer_t::xwrite_activated(pipe_t *pipe) { lb_.activated(pipe); }

void dealer_t::xpipe_terminated(pipe_t *pipe) {
    fq_.terminated(pipe);
    lb_.terminated(pipe);
}

}  // namespace zlink
