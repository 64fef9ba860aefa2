// The socket type table the core declares (core/socket_registry.hpp).
#include <zmq.h>

#include <new>

#include "core/socket_registry.hpp"
#include "sockets/dealer.hpp"
#include "sockets/pair.hpp"
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

namespace {
template <typename T>
socket_base_t *make(ctx_t *ctx) {
    return new (std::nothrow) T(ctx);
}
socket_base_t *make_pair(ctx_t *ctx) { return new (std::nothrow) pair_t(ctx, ZMQ_PAIR); }

constexpr socket_type_entry table[] = {
    {ZMQ_PAIR, make_pair},        {ZMQ_PUB, make<pub_t>},       {ZMQ_SUB, make<sub_t>},
    {ZMQ_XPUB, make<xpub_t>},     {ZMQ_XSUB, make<xsub_t>},     {ZMQ_DEALER, make<dealer_t>},
    {ZMQ_ROUTER, make<router_t>}, {ZMQ_STREAM, make<stream_t>}, {ZMQ_REQ, make<req_t>},
    {ZMQ_REP, make<rep_t>},       {ZMQ_PUSH, make<push_t>},     {ZMQ_PULL, make<pull_t>},
};
}  // namespace

std::span<const socket_type_entry> socket_type_table() { return table; }

}  // namespace zlink
