#include "sockets/xpub.hpp"

#include <zmq.h>

#include <cstring>

#include "sockets/socket_util.hpp"

namespace zlink {

xpub_t::xpub_t(ctx_t *ctx, int type) : socket_base_t(ctx, type) {}

xpub_t::~xpub_t() {
    for (msg_t &m : pending_) m.close();
}

bool xpub_t::is_pub() const { return options.type == ZMQ_PUB; }

void xpub_t::xattach_pipe(pipe_t *pipe, bool) {
    dist_.attach(pipe);
    // Subscriptions may already be waiting in the pipe.
    xread_activated(pipe);
}

void xpub_t::xread_activated(pipe_t *pipe) {
    msg_t msg;
    msg.init();
    bool more = false;  // inside a multipart user message from this pipe
    while (pipe->read(msg)) {
        const std::string_view b = body(msg);
        const bool request = !more && !msg.has_more() && !b.empty() && (b[0] == 0 || b[0] == 1);
        if (!request) {
            more = msg.has_more();
            if (is_pub()) drop_frame(msg);  // RFC 29: PUB discards what subscribers send
            else deliver_upward(msg);
            continue;
        }
        const auto prefix = std::as_bytes(std::span(b.data(), b.size())).subspan(1);
        if (b[0] == 1) {
            if (subscriptions_.add(prefix, pipe) || verbose_) deliver_upward(1, prefix);
        } else if (subscriptions_.remove(prefix, pipe) == pipe_trie<pipe_t>::removed::last) {
            deliver_upward(0, prefix);
        }
        drop_frame(msg);
    }
    msg.close();
}

void xpub_t::deliver_upward(msg_t &msg) {
    pending_.emplace_back();
    pending_.back().init();
    pending_.back().move(msg);
    msg.init();
}

void xpub_t::deliver_upward(unsigned char kind, std::span<const std::byte> prefix) {
    if (is_pub()) return;
    msg_t m;
    m.init_size(prefix.size() + 1);
    auto *d = static_cast<unsigned char *>(m.data());
    d[0] = kind;
    if (!prefix.empty()) std::memcpy(d + 1, prefix.data(), prefix.size());
    deliver_upward(m);
}

int xpub_t::xsend(msg_t &msg) {
    const bool more = msg.has_more();
    if (!more_send_) {
        // First frame: choose the subscribers this message goes to.
        dist_.unmatch();
        const std::string_view b = body(msg);
        subscriptions_.match(std::as_bytes(std::span(b.data(), b.size())),
                             [this](pipe_t *p) { dist_.match(p); });
        if (nodrop_ && !dist_.check_hwm()) {
            dist_.unmatch();
            return fail(EAGAIN);  // msg untouched: the caller blocks or reports
        }
    }
    dist_.send_to_matching(msg, drop_frame);
    more_send_ = more;  // msg is left empty: written (moved from) or dropped
    return 0;
}

int xpub_t::xrecv(msg_t &msg) {
    if (is_pub()) return fail(ENOTSUP);
    if (pending_.empty()) return fail(EAGAIN);
    msg.move(pending_.front());
    pending_.pop_front();
    return 0;
}

bool xpub_t::xhas_in() { return !is_pub() && !pending_.empty(); }
bool xpub_t::xhas_out() { return !nodrop_ || dist_.has_out(); }
void xpub_t::xwrite_activated(pipe_t *pipe) { dist_.activated(pipe); }

void xpub_t::xpipe_terminated(pipe_t *pipe) {
    // RFC 29, XPUB: "SHALL, if the subscriber peer disconnects prematurely,
    // generate a suitable unsubscribe request for the calling application."
    subscriptions_.remove_pipe(
        pipe, [this](std::span<const std::byte> p) { deliver_upward(0, p); }, /*only_last=*/true);
    dist_.terminated(pipe);
}

int xpub_t::xsetsockopt(int option, const void *val, size_t len) {
    if (is_pub()) return fail(EINVAL);
    switch (option) {
    case ZMQ_XPUB_VERBOSE: return parse_bool_option(val, len, verbose_);
    case ZMQ_XPUB_NODROP: return parse_bool_option(val, len, nodrop_);
    default: return fail(EINVAL);
    }
}

}  // namespace zlink
