// ROUTER (RFC 28/REQREP): explicit addressing. Each peer connection has a
// unique routing id: the Identity the peer announced (ZMQ_ROUTING_ID on its
// side), the ZMQ_CONNECT_ROUTING_ID this side chose when connecting, or else a
// generated 5-byte id starting with a zero byte. Incoming messages are
// fair-queued and delivered with the sender's id prepended as an extra frame.
// On send, the first frame names the peer and is removed; the rest goes to
// that peer if its queue exists and has room. Otherwise the message is
// silently dropped, or, with ZMQ_ROUTER_MANDATORY, the send fails with
// EHOSTUNREACH (unknown peer) or blocks / fails with EAGAIN (full queue).
// A peer announcing an id already in use is ignored, unless
// ZMQ_ROUTER_HANDOVER is set: then the new connection takes the id over and
// the old one is closed. ZMQ_PROBE_ROUTER sends an empty message to each new
// peer on attach. REP builds on this class.
#pragma once

#include <zmq.h>

#include <set>

#include "core/socket_base.hpp"
#include "sockets/policy/fair_queue.hpp"
#include "sockets/policy/routing_table.hpp"

namespace zlink {

class router_t : public socket_base_t {
public:
    explicit router_t(ctx_t *ctx, int type = ZMQ_ROUTER);
    ~router_t() override;

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
    // Withdraws the frames of the outgoing message being built (REP: the
    // envelope of a malformed request) and forgets its destination.
    void rollback();

private:
    // Reads the peer's announced id (first message of the pipe) and files the
    // pipe under its routing id; false while that message has not arrived.
    bool identify(pipe_t *pipe);
    void file(pipe_t *pipe, std::string id);
    bool prefetch();

    fair_queue<pipe_t> fq_;
    routing_table<pipe_t> table_;
    std::set<pipe_t *> anonymous_;  // id message not read yet, or id refused
    // Receive side: the first frame read from fq_ waits here while its
    // sender's id is handed out as frame zero.
    msg_t prefetched_;
    bool has_prefetched_ = false;
    std::string prefetched_id_;  // routing id of its sender
    bool id_sent_ = false;       // frame zero of the prefetched message given out
    bool more_in_ = false;       // inside an incoming multipart message
    // Send side.
    pipe_t *current_out_ = nullptr;  // destination of the message being sent
    bool more_out_ = false;          // inside an outgoing multipart message
    bool mandatory_ = false;
    bool handover_ = false;
};

}  // namespace zlink
