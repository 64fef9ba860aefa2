// XPUB (RFC 29/PUBSUB): a PUB that shows its application the subscriptions.
// Outgoing messages go to every subscriber with a matching prefix
// subscription (binary comparison against the start of the first frame); a
// subscriber whose queue is full misses the message and sending never blocks,
// unless ZMQ_XPUB_NODROP asks for EAGAIN/blocking instead of the drop.
// Subscribe (\x01prefix) and cancel (\x00prefix) requests from subscribers are
// delivered to the application: a subscription only when it is new for this
// socket (every one with ZMQ_XPUB_VERBOSE), a cancel only when nobody wants
// the prefix any more; a subscriber that goes away has its prefixes cancelled
// the same way. Other messages from subscribers are fair-queued upwards.
#pragma once

#include <zmq.h>

#include <deque>
#include <span>

#include "core/socket_base.hpp"
#include "sockets/policy/distribute.hpp"
#include "sockets/policy/pipe_trie.hpp"

namespace zlink {

class xpub_t : public socket_base_t {
public:
    explicit xpub_t(ctx_t *ctx, int type = ZMQ_XPUB);
    ~xpub_t() override;

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

private:
    bool is_pub() const;
    // Queues a message for the application (XPUB only; PUB discards).
    void deliver_upward(msg_t &msg);
    void deliver_upward(unsigned char kind, std::span<const std::byte> prefix);

    pipe_trie<pipe_t> subscriptions_;
    distribute<pipe_t> dist_;
    std::deque<msg_t> pending_;  // subscription requests and messages for the application
    bool more_send_ = false;
    bool verbose_ = false;
    bool nodrop_ = false;
};

}  // namespace zlink
