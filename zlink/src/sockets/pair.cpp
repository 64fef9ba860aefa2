#include "sockets/pair.hpp"

#include <cerrno>

namespace zlink {

pair_t::pair_t(ctx_t *ctx, int type) : socket_base_t(ctx, type) {}

void pair_t::xattach_pipe(pipe_t *pipe, bool) {
    // "PAIR ... SHALL NOT accept further connections" while one is attached.
    if (pipe_)
        pipe->terminate();
    else
        pipe_ = pipe;
}

void pair_t::xpipe_terminated(pipe_t *pipe) {
    if (pipe == pipe_)
        pipe_ = nullptr;
}

void pair_t::xread_activated(pipe_t *) {}  // xrecv polls the single pipe
void pair_t::xwrite_activated(pipe_t *) {}

int pair_t::xsend(msg_t &msg) {
    const bool more = msg.has_more();  // write() moves msg out
    if (!pipe_ || !pipe_->write(msg)) {
        errno = EAGAIN;
        return -1;
    }
    if (!more)  // publish whole messages only
        pipe_->flush();
    return 0;
}

int pair_t::xrecv(msg_t &msg) {
    if (!pipe_ || !pipe_->read(msg)) {
        errno = EAGAIN;
        return -1;
    }
    return 0;
}

bool pair_t::xhas_in() { return pipe_ && pipe_->check_read(); }
bool pair_t::xhas_out() { return pipe_ && pipe_->check_write(); }

}  // namespace zlink
