// DEALER (RFC 28/REQREP): talks to a set of anonymous peers. Outgoing messages
// go round-robin to peers whose outgoing queue is not full; with none
// available the send blocks (or fails with EAGAIN under ZMQ_DONTWAIT) and
// nothing is ever discarded. Incoming messages are fair-queued. Messages are
// neither filtered nor modified; multipart messages travel whole.
#pragma once

#include "core/socket_base.hpp"
#include "sockets/policy/fair_queue.hpp"
#include "sockets/policy/load_balance.hpp"

namespace zlink {

class dealer_t : public socket_base_t {
public:
    explicit dealer_t(ctx_t *ctx);

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
    fair_queue<pipe_t> fq_;
    load_balance<pipe_t> lb_;
};

}  // namespace zlink
