#include "sockets/rep.hpp"

#include "sockets/socket_util.hpp"

namespace zlink {

rep_t::rep_t(ctx_t *ctx) : router_t(ctx, ZMQ_REP) {}

int rep_t::xsend(msg_t &msg) {
    if (!sending_reply_)
        return fail(EFSM);
    const bool more = msg.has_more();
    if (router_t::xsend(msg) != 0)
        return -1;
    if (!more)
        sending_reply_ = false;
    return 0;
}

int rep_t::xrecv(msg_t &msg) {
    if (sending_reply_)
        return fail(EFSM);
    if (request_begins_ && route_reply_to_next_request(msg) != 0)
        return -1;
    if (router_t::xrecv(msg) != 0)
        return -1;
    if (!msg.has_more()) {
        sending_reply_ = true;
        request_begins_ = true;
    }
    return 0;
}

// ROUTER hands out the sender's routing id first; sending that frame back
// through ROUTER picks the reply pipe, and the labels after it (up to the
// empty delimiter) are written to that pipe, unflushed, ahead of the reply.
int rep_t::route_reply_to_next_request(msg_t &msg) {
    for (;;) {
        if (router_t::xrecv(msg) != 0)
            return -1;
        if (!msg.has_more()) {
            // Ended before any delimiter: malformed, withdraw what was copied.
            drop_frame(msg);
            rollback();
            continue;
        }
        const bool bottom = msg.size() == 0;
        router_t::xsend(msg);  // never fails: ROUTER_MANDATORY is not passed on
        if (bottom)
            break;
    }
    request_begins_ = false;
    return 0;
}

bool rep_t::xhas_in() { return !sending_reply_ && router_t::xhas_in(); }
bool rep_t::xhas_out() { return sending_reply_ && router_t::xhas_out(); }

int rep_t::xsetsockopt(int option, const void *val, size_t len) {
    // libzmq accepts ROUTER_MANDATORY on REP, but with it a full reply queue
    // aborts the process there; here it is accepted and has no effect (a
    // reply that cannot be queued is dropped, as without the option).
    bool ignored = false;
    if (option == ZMQ_ROUTER_MANDATORY)
        return parse_flag_option(val, len, ignored);
    return router_t::xsetsockopt(option, val, len);
}

}  // namespace zlink
