// SUB (RFC 29/PUBSUB): a one-way listener. ZMQ_SUBSCRIBE / ZMQ_UNSUBSCRIBE
// add or remove one instance of a prefix filter (counted), and the change is
// sent to every publisher; messages from publishers are fair-queued and
// delivered only when their first frame starts with a subscribed prefix. A
// SUB never sends: zmq_send fails with ENOTSUP.
#pragma once

#include <zmq.h>

#include "sockets/xsub.hpp"

namespace zlink {

class sub_t : public xsub_t {
public:
    explicit sub_t(ctx_t *ctx);

protected:
    int xsend(msg_t &msg) override;
    bool xhas_out() override { return false; }
    int xsetsockopt(int option, const void *val, size_t len) override;
};

}  // namespace zlink
