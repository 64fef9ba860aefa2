// XSUB (RFC 29/PUBSUB): a SUB whose application sends the subscriptions
// itself. Messages from publishers are fair-queued and delivered unmodified
// and unfiltered (filtering happens at the publisher). What the application
// sends goes to every publisher: \x01prefix subscribes, \x00prefix cancels,
// anything else is passed upstream as is. Subscriptions are counted, a cancel
// is forwarded only when its prefix's count drops to zero, and all live
// subscriptions are replayed to each publisher that connects later, and over
// a connection that comes back (the pipe outlives it; the publisher may be a
// new process that knows no subscription).
// SUB with ZMQ_INVERT_MATCHING (generic option) delivers the messages that
// match no subscription instead.
#pragma once

#include <zmq.h>

#include "core/socket_base.hpp"
#include "sockets/policy/distribute.hpp"
#include "sockets/policy/fair_queue.hpp"
#include "sockets/policy/subscription_trie.hpp"

namespace zlink {

class xsub_t : public socket_base_t {
public:
    explicit xsub_t(ctx_t *ctx, int type = ZMQ_XSUB);
    ~xsub_t() override;

protected:
    void xattach_pipe(pipe_t *pipe, bool locally_initiated) override;
    int xsend(msg_t &msg) override;
    int xrecv(msg_t &msg) override;
    bool xhas_in() override;
    bool xhas_out() override;
    void xread_activated(pipe_t *pipe) override;
    void xwrite_activated(pipe_t *pipe) override;
    void xpipe_terminated(pipe_t *pipe) override;
    void xhiccuped(pipe_t *pipe) override;

    // SUB filters on its side too (a publisher MAY send everything, e.g. a
    // PUB over a transport that does not filter).
    bool filter_ = false;

private:
    void send_subscriptions(pipe_t *pipe);
    bool prefetch();
    bool wanted(const msg_t &m) const;

    fair_queue<pipe_t> fq_;
    distribute<pipe_t> dist_;
    subscription_trie subscriptions_;
    msg_t prefetched_;
    bool has_prefetched_ = false;
    bool more_recv_ = false;
    bool more_send_ = false;
};

}  // namespace zlink
