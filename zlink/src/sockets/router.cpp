#include "sockets/router.hpp"

#include <zmq.h>

#include "sockets/socket_util.hpp"

namespace zlink {

router_t::router_t(ctx_t *ctx, int type) : socket_base_t(ctx, type) {
    options.role.recv_routing_id = true;
    prefetched_.init();
}

router_t::~router_t() { prefetched_.close(); }

void router_t::xattach_pipe(pipe_t *pipe, bool) {
    if (options.role.raw_socket) {  // ZMQ_ROUTER_RAW: no ZMTP, so no announced id
        file(pipe, {});
        return;
    }
    if (options.role.probe_router && !pipe->probed)
        send_probe(pipe);
    if (!pipe->routing_id.empty()) {
        // ZMQ_CONNECT_ROUTING_ID chosen on this side: addressable at once, as
        // in libzmq, even before the connection exists; the id the peer
        // announces is not wanted (the pipe drops it).
        pipe->set_want_routing_id(false);
        file(pipe, pipe->routing_id);
        return;
    }
    if (!identify(pipe))
        anonymous_.insert(pipe);
}

bool router_t::identify(pipe_t *pipe) {
    msg_t announced;
    announced.init();
    if (!pipe->read(announced))
        return false;
    std::string id;
    if (announced.size() > 0)
        id.assign(body(announced));
    announced.close();
    file(pipe, id);
    return true;
}

// Files the pipe under `id` (empty: a generated one). A duplicate id leaves
// the pipe unfiled and never read (as libzmq), unless ROUTER_HANDOVER.
void router_t::file(pipe_t *pipe, std::string id) {
    if (id.empty()) {
        id = table_.generate();
    } else if (table_.find(id) != nullptr) {
        if (!handover_)
            return;  // duplicate id: ignored, never read
        if (pipe_t *old = table_.hand_over(pipe, id)) {
            old->routing_id = *table_.id_of(old);
            old->terminate();
        }
        pipe->routing_id = id;
        fq_.attach(pipe);
        return;
    }
    table_.add(pipe, id);
    pipe->routing_id = id;
    fq_.attach(pipe);
}

void router_t::xread_activated(pipe_t *pipe) {
    if (anonymous_.count(pipe) == 0) {
        fq_.activated(pipe);
    } else if (identify(pipe)) {
        anonymous_.erase(pipe);
    }
}

void router_t::xwrite_activated(pipe_t *) {
    // Nothing to track: each send asks the destination pipe for room, and a
    // blocked sender is woken by the base class.
}

void router_t::xpipe_terminated(pipe_t *pipe) {
    if (anonymous_.erase(pipe) == 0) {
        table_.remove(pipe);
        fq_.terminated(pipe);
    }
    if (pipe == current_out_)
        current_out_ = nullptr;  // the rest is dropped
}

int router_t::xsend(msg_t &msg) {
    if (!more_out_) {
        // Frame zero: the routing id of the destination.
        if (!msg.has_more()) {
            drop_frame(msg);  // an id with no message: nothing to route
            return 0;
        }
        pipe_t *dest = table_.find(body(msg));
        if (dest == nullptr) {
            if (mandatory_)
                return fail(EHOSTUNREACH);
        } else if (!dest->check_write()) {
            if (mandatory_)
                return fail(EAGAIN);  // blocks until write_activated
            dest = nullptr;           // full: the whole message is dropped
        }
        current_out_ = dest;
        more_out_ = true;
        drop_frame(msg);
        return 0;
    }
    more_out_ = msg.has_more();
    if (current_out_ != nullptr) {
        if (!current_out_->write(msg)) {
            // Only possible if the pipe is closing: keep the message all-or-nothing.
            current_out_->rollback();
            current_out_ = nullptr;
        } else if (!more_out_) {
            current_out_->flush();
            current_out_ = nullptr;
        }
    }
    if (!more_out_)
        current_out_ = nullptr;
    drop_frame(msg);  // empty already if written; discarded otherwise
    return 0;
}

void router_t::rollback() {
    if (current_out_ != nullptr)
        current_out_->rollback();
    current_out_ = nullptr;
    more_out_ = false;
}

bool router_t::prefetch() {
    pipe_t *from = nullptr;
    if (!fq_.recv(prefetched_, &from))
        return false;
    has_prefetched_ = true;
    id_sent_ = false;
    const std::string *id = table_.id_of(from);
    prefetched_id_ = id != nullptr ? *id : std::string();
    return true;
}

int router_t::xrecv(msg_t &msg) {
    if (more_in_ && !has_prefetched_) {
        if (!fq_.recv(msg))
            return fail(EAGAIN);
        more_in_ = msg.has_more();
        return 0;
    }
    if (!has_prefetched_ && !prefetch())
        return fail(EAGAIN);
    if (!id_sent_) {
        // Frame zero: who sent it.
        msg.init_buffer(prefetched_id_.data(), prefetched_id_.size());
        msg.set_flags(msg_t::more);
        // As libzmq: the routing id carries its connection's properties (ZAP
        // metadata, User-Id) like the frames after it. set_metadata takes its own
        // reference, so the const view of the prefetched message is enough.
        msg.set_metadata(const_cast<metadata_t *>(prefetched_.metadata()));
        id_sent_ = true;
        more_in_ = true;
        return 0;
    }
    msg.move(prefetched_);
    prefetched_.init();
    has_prefetched_ = false;
    more_in_ = msg.has_more();
    return 0;
}

bool router_t::xhas_in() { return more_in_ || has_prefetched_ || prefetch(); }

bool router_t::xhas_out() {
    // Without ROUTER_MANDATORY a send never waits. With it, it can go on if
    // some peer has room (which one the message is for is not known yet).
    if (!mandatory_)
        return true;
    return table_.any_of([](pipe_t *p) { return p->check_write(); });
}

int router_t::xsetsockopt(int option, const void *val, size_t len) {
    switch (option) {
    case ZMQ_ROUTER_MANDATORY: return parse_flag_option(val, len, mandatory_);
    case ZMQ_ROUTER_HANDOVER: return parse_flag_option(val, len, handover_);
    case ZMQ_PROBE_ROUTER: return parse_flag_option(val, len, options.role.probe_router);
    case ZMQ_ROUTER_RAW: {
        // Deprecated, still accepted by libzmq 4.3.5 (CZMQ's self-test sets it):
        // connections made after it carry raw bytes, as a STREAM socket without
        // connect/disconnect notifications; 0 leaves the socket as it is.
        bool raw = false;
        if (parse_flag_option(val, len, raw) != 0)
            return -1;
        if (raw) {
            options.role.raw_socket = true;
            options.role.raw_notify = false;
            options.role.recv_routing_id = false;
        }
        return 0;
    }
    default: return fail(EINVAL);
    }
}

}  // namespace zlink
