// PUSH (RFC 30/PIPELINE): the upstream end of a pipeline. Each message goes
// to one downstream peer, round-robin over the peers whose queue is not full;
// with none available the send blocks (EAGAIN under ZMQ_DONTWAIT) and nothing
// is discarded. A PUSH never receives: zmq_recv fails with ENOTSUP.
#pragma once

#include "core/socket_base.hpp"
#include "sockets/policy/load_balance.hpp"

namespace zlink {

class push_t : public socket_base_t {
public:
    explicit push_t(ctx_t *ctx);

protected:
    void xattach_pipe(pipe_t *pipe, bool locally_initiated) override;
    int xsend(msg_t &msg) override;
    int xrecv(msg_t &msg) override;
    bool xhas_in() override { return false; }
    bool xhas_out() override;
    void xread_activated(pipe_t *) override {}  // PULL peers send nothing
    void xwrite_activated(pipe_t *pipe) override;
    void xpipe_terminated(pipe_t *pipe) override;

private:
    load_balance<pipe_t> lb_;
};

}  // namespace zlink
