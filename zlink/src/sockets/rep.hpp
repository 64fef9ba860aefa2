// REP (RFC 28/REQREP): the service end of request-reply. Requests are
// fair-queued from all peers; the envelope (every frame up to and including
// the empty delimiter) is kept aside and put back in front of the reply,
// which goes to the peer the request came from. The application sees only
// the body and must alternate recv and send (anything else fails with EFSM).
// A request without a delimiter is malformed and discarded silently. A reply
// whose peer has gone, or whose queue is full, is dropped.
#pragma once

#include "sockets/router.hpp"

namespace zlink {

class rep_t final : public router_t {
public:
    explicit rep_t(ctx_t *ctx);

protected:
    int xsend(msg_t &msg) override;
    int xrecv(msg_t &msg) override;
    bool xhas_in() override;
    bool xhas_out() override;
    int xsetsockopt(int option, const void *val, size_t len) override;

private:
    // Moves the envelope of the next well-formed request into the reply
    // being built; -1/EAGAIN when no request is waiting.
    int route_reply_to_next_request(msg_t &msg);

    bool sending_reply_ = false;  // request read, reply not (fully) sent
    bool request_begins_ = true;  // next recv starts a new request
};

}  // namespace zlink
