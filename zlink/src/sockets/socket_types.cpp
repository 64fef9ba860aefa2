#include "sockets/socket_types.hpp"

#include <zmq.h>

#include <new>

#include "sockets/dealer.hpp"
#include "sockets/pub.hpp"
#include "sockets/pull.hpp"
#include "sockets/push.hpp"
#include "sockets/rep.hpp"
#include "sockets/req.hpp"
#include "sockets/router.hpp"
#include "sockets/stream.hpp"
#include "sockets/sub.hpp"
#include "sockets/xpub.hpp"
#include "sockets/xsub.hpp"

namespace zlink {

socket_base_t *create_socket_type(int type, ctx_t *ctx) {
    switch (type) {
    case ZMQ_PUB: return new (std::nothrow) pub_t(ctx);
    case ZMQ_SUB: return new (std::nothrow) sub_t(ctx);
    case ZMQ_XPUB: return new (std::nothrow) xpub_t(ctx);
    case ZMQ_XSUB: return new (std::nothrow) xsub_t(ctx);
    case ZMQ_DEALER: return new (std::nothrow) dealer_t(ctx);
    case ZMQ_ROUTER: return new (std::nothrow) router_t(ctx);
    case ZMQ_STREAM: return new (std::nothrow) stream_t(ctx);
    case ZMQ_REQ: return new (std::nothrow) req_t(ctx);
    case ZMQ_REP: return new (std::nothrow) rep_t(ctx);
    case ZMQ_PUSH: return new (std::nothrow) push_t(ctx);
    case ZMQ_PULL: return new (std::nothrow) pull_t(ctx);
    default: return nullptr;
    }
}

}  // namespace zlink
