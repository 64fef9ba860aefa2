// zap_client: the session's side of one ZAP exchange (RFC 27). It opens an
// inproc pipe to the socket bound at inproc://zeromq.zap.01 (usually a REP),
// writes the request frames (wire/zap.hpp builds them) and reads the reply back,
// on the session's IO thread. As libzmq's session does, with an unlimited HWM.
//
// Lifetime: the session owns it while the handshake waits; close() hands it over
// to the pipe, which frees it once the pipe is terminated (the handler socket
// may still hold its end then), so a session can finish without waiting for it.
#pragma once
#include <memory>
#include <vector>

#include "core/pipe.hpp"
#include "wire/handshake.hpp"
#include "wire/zap.hpp"

namespace zlink {

class ctx_t;
class executor;

class zap_listener {
public:
    virtual ~zap_listener() = default;
    // A well-formed reply (not yet judged: 200/300/400/500).
    virtual void zap_replied(const wire::zap_reply &reply) = 0;
    // The reply broke RFC 27 (wire::wire_error::zap_*). A handler that goes away
    // unanswered is not reported: the handshake keeps waiting, as in libzmq.
    virtual void zap_failed(wire::wire_error error) = 0;
};

class zap_client final : public pipe_events {
public:
    // Null when nothing is bound at inproc://zeromq.zap.01 in `ctx`.
    static zap_client *connect(ctx_t &ctx, executor *session_thread, zap_listener &listener);

    void send(const std::vector<wire::zap_frame> &frames);
    // Stops reporting to the listener and terminates the pipe; frees itself once
    // the pipe is done. The pointer must not be used afterwards.
    void close();

    void read_activated(pipe_t *pipe) override;
    void write_activated(pipe_t *) override {}
    void pipe_terminated(pipe_t *pipe) override;

private:
    zap_client(pipe_t *pipe, zap_listener &listener) : pipe_(pipe), listener_(&listener) {}
    ~zap_client() = default;
    void reply_complete();

    pipe_t *pipe_;
    zap_listener *listener_;  // null once closed
    std::vector<wire::zap_frame> reply_;
    std::vector<bool> more_;
    bool answered_ = false;
};

}  // namespace zlink
