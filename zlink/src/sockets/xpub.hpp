// XPUB (RFC 29/PUBSUB): a PUB that shows its application the subscriptions.
// Outgoing messages go to every subscriber with a matching prefix
// subscription (binary comparison against the start of the first frame); a
// subscriber whose queue is full misses the message and sending never blocks,
// unless ZMQ_XPUB_NODROP asks for EAGAIN/blocking instead of the drop.
// Subscribe (\x01prefix) and cancel (\x00prefix) requests from subscribers are
// delivered to the application: a subscription only when it is new for this
// socket (every one with ZMQ_XPUB_VERBOSE or VERBOSER), a cancel unless other
// subscribers still want the prefix (every one with VERBOSER); a subscriber
// that goes away has its prefixes cancelled the same way. Other messages from
// subscribers are fair-queued upwards.
// Options as libzmq 4.3.5 (PUB accepts them too):
//   ZMQ_XPUB_MANUAL       requests are only reported; the application decides
//                         what the subscriber that sent the last request it
//                         read gets, with ZMQ_SUBSCRIBE / ZMQ_UNSUBSCRIBE
//   ZMQ_XPUB_WELCOME_MSG  a message sent to every new subscriber on attach
//   ZMQ_INVERT_MATCHING   (generic option) send to the subscribers that do
//                         NOT match
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
    using bytes = std::span<const std::byte>;
    // A message for the application and, in manual mode, the subscriber it
    // speaks for (null: none, or gone).
    struct pending_t {
        msg_t msg;
        pipe_t *from;
    };

    bool is_pub() const;
    void apply_request(bool subscribe, bytes prefix, pipe_t *pipe);
    // Queues a message for the application (XPUB only; PUB discards).
    void deliver_upward(msg_t &msg, pipe_t *from);
    void deliver_upward(unsigned char kind, bytes prefix, pipe_t *from);
    void select_recipients(const msg_t &first_frame);
    int manual_subscription(int option, const void *val, size_t len);
    int set_welcome(const void *val, size_t len);

    pipe_trie<pipe_t> subscriptions_;  // what each subscriber gets
    pipe_trie<pipe_t> requested_;      // manual mode: what each subscriber asked for
    distribute<pipe_t> dist_;
    std::deque<pending_t> pending_;  // subscription requests and messages for the application
    pipe_t *last_pipe_ = nullptr;    // manual mode: sender of the last request read
    msg_t welcome_;
    bool more_send_ = false;
    bool verbose_subs_ = false;
    bool verbose_unsubs_ = false;
    bool nodrop_ = false;
    bool manual_ = false;
};

}  // namespace zlink
