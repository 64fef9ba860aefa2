#include "sockets/stream.hpp"

#include <zmq.h>

#include "sockets/socket_util.hpp"

namespace zlink {

stream_t::stream_t(ctx_t *ctx) : socket_base_t(ctx, ZMQ_STREAM) {
    options.role.raw_socket = true;
    options.role.raw_notify = true;
    prefetched_.init();
}

stream_t::~stream_t() { prefetched_.close(); }

void stream_t::xattach_pipe(pipe_t *pipe, bool) {
    std::string id = pipe->routing_id;  // ZMQ_CONNECT_ROUTING_ID, if any
    if (id.empty() || !table_.add(pipe, id)) {
        id = table_.generate();
        table_.add(pipe, id);
        // libzmq quirk that programs rely on (test_stream_disconnect): a
        // generated id also becomes the socket's own ZMQ_ROUTING_ID, so a
        // client STREAM can read the id of the connection it just made.
        options.routing_id = id;
    }
    pipe->routing_id = id;
    fq_.attach(pipe);
}

void stream_t::xread_activated(pipe_t *pipe) { fq_.activated(pipe); }
void stream_t::xwrite_activated(pipe_t *) {}

void stream_t::xpipe_terminated(pipe_t *pipe) {
    table_.remove(pipe);
    fq_.terminated(pipe);
    if (pipe == current_out_)
        current_out_ = nullptr;
}

int stream_t::xsend(msg_t &msg) {
    if (!more_out_) {
        // Frame one: the connection's id. The base blocks/retries on EAGAIN.
        if (!msg.has_more())
            return fail(EINVAL);
        pipe_t *dest = table_.find(body(msg));
        if (dest == nullptr)
            return fail(EHOSTUNREACH);
        if (!dest->check_write())
            return fail(EAGAIN);
        current_out_ = dest;
        more_out_ = true;
        drop_frame(msg);
        return 0;
    }
    // Frame two: bytes. Its MORE flag means nothing on a raw connection.
    more_out_ = false;
    msg.reset_flags(msg_t::more);
    if (current_out_ != nullptr) {
        if (msg.size() == 0) {
            current_out_->terminate();  // empty payload: close the connection
        } else if (current_out_->write(msg)) {
            current_out_->flush();
        }
        current_out_ = nullptr;
    }
    drop_frame(msg);
    return 0;
}

bool stream_t::prefetch() {
    pipe_t *from = nullptr;
    if (!fq_.recv(prefetched_, &from))
        return false;
    prefetched_.reset_flags(msg_t::more);
    const std::string *id = table_.id_of(from);
    prefetched_id_ = id != nullptr ? *id : std::string();
    has_prefetched_ = true;
    id_sent_ = false;
    return true;
}

int stream_t::xrecv(msg_t &msg) {
    if (!has_prefetched_ && !prefetch())
        return fail(EAGAIN);
    if (!id_sent_) {
        msg.init_buffer(prefetched_id_.data(), prefetched_id_.size());
        msg.set_flags(msg_t::more);
        // As libzmq: the id frame carries the connection's properties
        // (Peer-Address...) like the data frame after it.
        msg.set_metadata(const_cast<metadata_t *>(prefetched_.metadata()));
        id_sent_ = true;
        return 0;
    }
    msg.move(prefetched_);
    prefetched_.init();
    has_prefetched_ = false;
    return 0;
}

bool stream_t::xhas_in() { return has_prefetched_ || prefetch(); }

bool stream_t::xhas_out() { return true; }  // the destination decides; see xsend

int stream_t::xsetsockopt(int option, const void *val, size_t len) {
    if (option != ZMQ_STREAM_NOTIFY)
        return fail(EINVAL);
    return parse_bool_option(val, len, options.role.raw_notify);
}

}  // namespace zlink
