#include "sockets/req.hpp"

#include <cstring>
#include <random>

#include "sockets/socket_util.hpp"

namespace zlink {

req_t::req_t(ctx_t *ctx) : dealer_t(ctx, ZMQ_REQ) {
    // A random start, as libzmq, so two REQ sockets sharing a peer are
    // unlikely to produce the same ids.
    request_id_ = static_cast<std::uint32_t>(std::random_device{}());
}

int req_t::xsend(msg_t &msg) {
    if (receiving_reply_) {
        if (strict_)
            return fail(EFSM);
        // Relaxed: give up on the outstanding reply and start over.
        receiving_reply_ = false;
        message_begins_ = true;
    }
    if (message_begins_ && start_request() != 0)
        return -1;
    const bool more = msg.has_more();
    if (dealer_t::xsend(msg) != 0)
        return -1;
    if (!more) {
        receiving_reply_ = true;
        message_begins_ = true;
    }
    return 0;
}

int req_t::start_request() {
    reply_pipe_ = nullptr;
    if (correlate_) {
        ++request_id_;
        msg_t id;
        id.init_size(sizeof request_id_);
        std::memcpy(id.data(), &request_id_, sizeof request_id_);
        id.set_flags(msg_t::more);
        if (send_via(id, &reply_pipe_) != 0) {
            id.close();
            return -1;
        }
    }
    msg_t bottom;
    bottom.init();
    bottom.set_flags(msg_t::more);
    if (send_via(bottom, &reply_pipe_) != 0)
        return -1;  // only when nothing was sent
    message_begins_ = false;
    discard_queued_replies();
    return 0;
}

// A peer that answered an earlier request late must not have that answer
// taken for the reply to this one.
void req_t::discard_queued_replies() {
    msg_t drop;
    drop.init();
    while (dealer_t::xrecv(drop) == 0)
        drop_frame(drop);
    drop.close();
}

int req_t::xrecv(msg_t &msg) {
    if (!receiving_reply_)
        return fail(EFSM);
    if (message_begins_ && recv_envelope(msg) != 0)
        return -1;
    if (recv_reply_frame(msg) != 0)
        return -1;
    if (!msg.has_more()) {
        receiving_reply_ = false;
        message_begins_ = true;
    }
    return 0;
}

int req_t::recv_envelope(msg_t &msg) {
    while (message_begins_) {
        if (correlate_) {
            if (recv_reply_frame(msg) != 0)
                return -1;
            if (!envelope_frame_ok(msg, true)) {
                skip_rest(msg);
                continue;
            }
        }
        if (recv_reply_frame(msg) != 0)
            return -1;
        if (!envelope_frame_ok(msg, false)) {
            skip_rest(msg);
            continue;
        }
        message_begins_ = false;
    }
    drop_frame(msg);
    return 0;
}

bool req_t::envelope_frame_ok(const msg_t &frame, bool is_request_id) const {
    if (!frame.has_more())
        return false;
    if (!is_request_id)
        return frame.size() == 0;
    return frame.size() == sizeof request_id_ &&
           std::memcmp(frame.data(), &request_id_, sizeof request_id_) == 0;
}

// The rest of a malformed or stale reply: all its frames are already queued
// (messages arrive whole), so this never waits.
void req_t::skip_rest(msg_t &msg) {
    while (msg.has_more() && recv_reply_frame(msg) == 0) {
    }
    drop_frame(msg);
}

int req_t::recv_reply_frame(msg_t &msg) {
    for (;;) {
        drop_frame(msg);
        pipe_t *from = nullptr;
        if (recv_from(msg, &from) != 0)
            return -1;
        if (reply_pipe_ == nullptr || from == reply_pipe_)
            return 0;
    }
}

bool req_t::xhas_in() { return receiving_reply_ && dealer_t::xhas_in(); }
bool req_t::xhas_out() { return !(receiving_reply_ && strict_) && dealer_t::xhas_out(); }

void req_t::xpipe_terminated(pipe_t *pipe) {
    if (pipe == reply_pipe_)
        reply_pipe_ = nullptr;
    dealer_t::xpipe_terminated(pipe);
}

int req_t::xsetsockopt(int option, const void *val, size_t len) {
    bool relaxed = false;
    switch (option) {
    case ZMQ_REQ_CORRELATE: return parse_flag_option(val, len, correlate_);
    case ZMQ_REQ_RELAXED:
        if (parse_flag_option(val, len, relaxed) != 0)
            return -1;
        strict_ = !relaxed;
        return 0;
    default: return dealer_t::xsetsockopt(option, val, len);
    }
}

}  // namespace zlink
