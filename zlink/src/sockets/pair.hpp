// PAIR (RFC 31): exclusive pair.  One peer at a time; a second connection is
// refused (its pipe terminated).  Sends block at the HWM; no routing.
#pragma once
#include "core/socket_base.hpp"

namespace zlink {

class pair_t final : public socket_base_t {
public:
    pair_t(ctx_t *ctx, int type);

protected:
    void xattach_pipe(pipe_t *pipe, bool locally_initiated) override;
    int xsend(msg_t &msg) override;
    int xrecv(msg_t &msg) override;
    bool xhas_in() override;
    bool xhas_out() override;
    void xread_activated(pipe_t *pipe) override;
    void xwrite_activated(pipe_t *pipe) override;
    void xpipe_terminated(pipe_t *pipe) override;

private:
    pipe_t *pipe_ = nullptr;
};

}  // namespace zlink
