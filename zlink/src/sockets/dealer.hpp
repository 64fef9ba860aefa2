// DEALER (RFC 28/REQREP): talks to a set of anonymous peers. Outgoing messages
// go round-robin to peers whose outgoing queue is not full; with none
// available the send blocks (or fails with EAGAIN under ZMQ_DONTWAIT) and
// nothing is ever discarded. Incoming messages are fair-queued. Messages are
// neither filtered nor modified; multipart messages travel whole.
// ZMQ_PROBE_ROUTER sends an empty message to each new peer on attach, so a
// ROUTER learns of the connection at once (as libzmq).
// REQ builds on this class (the pipe-aware send/recv are for it).
#pragma once

#include <zmq.h>

#include "core/socket_base.hpp"
#include "sockets/policy/fair_queue.hpp"
#include "sockets/policy/load_balance.hpp"

namespace zlink {

class dealer_t : public socket_base_t {
public:
    explicit dealer_t(ctx_t *ctx, int type = ZMQ_DEALER);

protected:
    void xattach_pipe(pipe_t *pipe, bool locally_initiated) override;
    int xsend(msg_t &msg) override;
    int xrecv(msg_t &msg) override;
    bool xhas_in() override;
    bool xhas_out() override;
    void xread_activated(pipe_t *pipe) override;
    void xwrite_activated(pipe_t *pipe) override;
    void xpipe_terminated(pipe_t *pipe) override;
    int xsetsockopt(int option, const void *val, size_t len) override;

    // As xsend/xrecv, also naming the pipe the frame went to / came from
    // (left unchanged when the frame was dropped or nothing was read).
    int send_via(msg_t &msg, pipe_t **to);
    int recv_from(msg_t &msg, pipe_t **from);

private:
    fair_queue<pipe_t> fq_;
    load_balance<pipe_t> lb_;
};

}  // namespace zlink
