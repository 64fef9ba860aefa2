// REQ (RFC 28/REQREP): the client end of request-reply. Requests go
// round-robin to peers (as DEALER), each prefixed with an empty delimiter
// frame; the application must alternate send and recv (anything else fails
// with EFSM). A reply is accepted only from the peer the last request went to,
// must start with the delimiter (which is removed), and everything else is
// discarded silently. Replies already queued when a new request starts are
// discarded too, so a late answer to an old request is never taken for the
// new one.
// ZMQ_REQ_CORRELATE puts a 4-byte request id (native byte order, as libzmq)
// before the delimiter and accepts only replies carrying the current id.
// ZMQ_REQ_RELAXED lets a new request be sent while a reply is outstanding;
// the old reply is then ignored (with CORRELATE, reliably so).
#pragma once

#include <cstdint>

#include "sockets/dealer.hpp"

namespace zlink {

class req_t final : public dealer_t {
public:
    explicit req_t(ctx_t *ctx);

protected:
    int xsend(msg_t &msg) override;
    int xrecv(msg_t &msg) override;
    bool xhas_in() override;
    bool xhas_out() override;
    void xpipe_terminated(pipe_t *pipe) override;
    int xsetsockopt(int option, const void *val, size_t len) override;

private:
    // Sends the envelope (request id if enabled, delimiter) and forgets any
    // stale replies. -1/EAGAIN when no peer can take the request now.
    int start_request();
    void discard_queued_replies();
    // Next frame from the reply pipe; frames from other pipes are dropped.
    int recv_reply_frame(msg_t &msg);
    // Reads the envelope of the next reply, skipping malformed or stale ones.
    int recv_envelope(msg_t &msg);
    bool envelope_frame_ok(const msg_t &frame, bool is_request_id) const;
    void skip_rest(msg_t &msg);

    bool receiving_reply_ = false;  // request sent, reply not (fully) read
    bool message_begins_ = true;    // next frame starts a request / reply
    pipe_t *reply_pipe_ = nullptr;  // where the request went; null: any
    bool correlate_ = false;
    bool strict_ = true;
    std::uint32_t request_id_;
};

}  // namespace zlink
