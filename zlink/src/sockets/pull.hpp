// PULL (RFC 30/PIPELINE): the downstream end of a pipeline. Messages from all
// upstream peers are fair-queued, one whole message from each ready peer in
// turn. A PULL never sends: zmq_send fails with ENOTSUP.
#pragma once

#include "core/socket_base.hpp"
#include "sockets/policy/fair_queue.hpp"

namespace zlink {

class pull_t : public socket_base_t {
public:
    explicit pull_t(ctx_t *ctx);

protected:
    void xattach_pipe(pipe_t *pipe, bool locally_initiated) override;
    int xsend(msg_t &msg) override;
    int xrecv(msg_t &msg) override;
    bool xhas_in() override;
    bool xhas_out() override { return false; }
    void xread_activated(pipe_t *pipe) override;
    void xwrite_activated(pipe_t *) override {}  // nothing is ever sent
    void xpipe_terminated(pipe_t *pipe) override;

private:
    fair_queue<pipe_t> fq_;
};

}  // namespace zlink
