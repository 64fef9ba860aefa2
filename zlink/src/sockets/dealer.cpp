#include "sockets/dealer.hpp"

#include "sockets/socket_util.hpp"

namespace zlink {

dealer_t::dealer_t(ctx_t *ctx, int type) : socket_base_t(ctx, type) {}

void dealer_t::xattach_pipe(pipe_t *pipe, bool) {
    if (options.role.probe_router && !pipe->probed)
        send_probe(pipe);
    fq_.attach(pipe);
    lb_.attach(pipe);
}

int dealer_t::send_via(msg_t &msg, pipe_t **to) {
    return lb_.send(msg, drop_frame, to) == send_result::sent ? 0 : fail(EAGAIN);
}

int dealer_t::recv_from(msg_t &msg, pipe_t **from) {
    return fq_.recv(msg, from) ? 0 : fail(EAGAIN);
}

int dealer_t::xsend(msg_t &msg) { return send_via(msg, nullptr); }
int dealer_t::xrecv(msg_t &msg) { return recv_from(msg, nullptr); }

bool dealer_t::xhas_in() { return fq_.has_in(); }
bool dealer_t::xhas_out() { return lb_.has_out(); }
void dealer_t::xread_activated(pipe_t *pipe) { fq_.activated(pipe); }
void dealer_t::xwrite_activated(pipe_t *pipe) { lb_.activated(pipe); }

void dealer_t::xpipe_terminated(pipe_t *pipe) {
    fq_.terminated(pipe);
    lb_.terminated(pipe);
}

int dealer_t::xsetsockopt(int option, const void *val, size_t len) {
    if (option == ZMQ_PROBE_ROUTER)
        return parse_flag_option(val, len, options.role.probe_router);
    return fail(EINVAL);
}

}  // namespace zlink
