#include "sockets/sub.hpp"

#include <cstring>

#include "sockets/socket_util.hpp"

namespace zlink {

sub_t::sub_t(ctx_t *ctx) : xsub_t(ctx, ZMQ_SUB) { filter_ = true; }

int sub_t::xsend(msg_t &) { return fail(ENOTSUP); }

int sub_t::xsetsockopt(int option, const void *val, size_t len) {
    if (option != ZMQ_SUBSCRIBE && option != ZMQ_UNSUBSCRIBE)
        return fail(EINVAL);
    if (len > 0 && val == nullptr)
        return fail(EINVAL);
    // Same path as an XSUB application sending \x01prefix / \x00prefix.
    msg_t m;
    if (m.init_size(len + 1) != 0)
        return -1;
    auto *d = static_cast<unsigned char *>(m.data());
    d[0] = option == ZMQ_SUBSCRIBE ? 1 : 0;
    if (len > 0)
        std::memcpy(d + 1, val, len);
    const int rc = xsub_t::xsend(m);
    m.close();
    return rc;
}

}  // namespace zlink
