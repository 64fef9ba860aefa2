// PUB (RFC 29/PUBSUB): one-way broadcast. Each message goes to every
// subscriber with a matching prefix subscription; a subscriber whose queue is
// full silently misses it and sending never blocks. Subscription requests are
// applied but never shown to the application, and anything else subscribers
// send is discarded; zmq_recv on a PUB fails with ENOTSUP. It is XPUB with the
// upward direction switched off.
#pragma once

#include <zmq.h>

#include "sockets/xpub.hpp"

namespace zlink {

class pub_t : public xpub_t {
public:
    explicit pub_t(ctx_t *ctx) : xpub_t(ctx, ZMQ_PUB) {}
};

}  // namespace zlink
